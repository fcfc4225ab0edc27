"""End to end: a misspelled key in settings.json, models.json or an auth.json `api_key` entry is warned of
through the real CLI, once, naming the file, the line, the key path and the known key it is close to; the file
keeps loading. A clean start never imports `difflib` (the "did you mean" is computed only for unknown keys)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .test_startup_imports import _CHILD


def run_print(env, cwd, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_forge", "-p", *args, "hello"], cwd=cwd, env=env,
                          input=b"", capture_output=True, timeout=60)


def test_a_misspelled_setting_is_warned_of_once_and_the_rest_loads(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "Fine."}])
    settings = Path(agent_env["AGENT_FORGE_DIR"]) / "settings.json"
    data = json.loads(settings.read_text())
    settings.write_text(json.dumps({**data, "aprovals": "read-only", "retry": {"maxRetrys": 1},
                                    "rpc": {"anything": 1}, "$schema": "x"}, indent=1))
    done = run_print(agent_env, tmp_path)
    stderr = done.stderr.decode()
    assert done.returncode == 0 and done.stdout.decode().strip() == "Fine.", stderr
    line = settings.read_text().splitlines().index(' "aprovals": "read-only",') + 1
    warning = f"{settings}:{line}: unknown key 'aprovals' (did you mean 'approvals'?); ignored"
    assert stderr.count(warning) == 1, stderr
    assert "unknown key 'retry.maxRetrys' (did you mean 'retry.maxRetries'?); ignored" in stderr
    assert "anything" not in stderr and "$schema" not in stderr  # an open object, an editor's schema


def test_misspelled_models_json_keys_are_named_with_their_path(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "Fine."}])
    models = Path(agent_env["AGENT_FORGE_DIR"]) / "models.json"
    data = json.loads(models.read_text())
    data["providers"]["fake"]["models"][0]["contextWindw"] = 1000
    data["providers"]["fake"]["apikey"] = "x"
    models.write_text(json.dumps({**data, "provider": {}, "modelOverrides": 5}, indent=1))
    done = run_print(agent_env, tmp_path)
    stderr = done.stderr.decode()
    assert done.returncode == 0 and done.stdout.decode().strip() == "Fine.", stderr
    for warning in ("unknown key 'provider' (did you mean 'providers'?); ignored",
                    "unknown key 'modelOverrides'; ignored",
                    "providers.fake: unknown key 'apikey' (did you mean 'apiKey'?); ignored",
                    "providers.fake.models[0]: unknown key 'contextWindw' (did you mean 'contextWindow'?); ignored"):
        assert stderr.count(warning) == 1, (warning, stderr)
    assert f"{models}:" in stderr


def test_a_misspelled_field_of_an_auth_json_key_is_warned_of(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "Fine."}])
    auth = Path(agent_env["AGENT_FORGE_DIR"]) / "auth.json"
    auth.write_text(json.dumps({"fake": {"type": "api_key", "key": "sk-1", "kye": "sk-2"},
                                "other": {"type": "oauth", "refresh": "r", "access": "a", "expires": 1}}))
    auth.chmod(0o600)
    done = run_print(agent_env, tmp_path)
    stderr = done.stderr.decode()
    assert done.returncode == 0, stderr
    assert stderr.count(f"{auth}:1: fake: unknown key 'kye' (did you mean 'key'?); ignored") == 1, stderr
    assert "refresh" not in stderr and "sk-" not in stderr  # another type's fields are its own; no key shown


def test_a_clean_start_imports_no_difflib(agent_env, tmp_path):
    out = tmp_path / "modules.json"
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(out)], input=b'{"id":"s","type":"get_state"}\n',
                          capture_output=True, env=agent_env, cwd=tmp_path, timeout=60)
    assert proc.returncode == 0 and b"unknown key" not in proc.stderr, proc.stderr.decode()
    assert "difflib" not in json.loads(out.read_text())
