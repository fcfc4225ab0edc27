"""End to end: a broken or wrongly shaped `auth.json` is reported at start-up with its path, line and problem in
every mode, and the no-key error says the file cannot be used (round-3 findings, issue 10)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient

BROKEN = {
    "trailing comma": ('{\n  "anthropic": {"type": "api_key", "key": "sk-ant-xx"},\n}\n',
                       ": invalid JSON at line 2 column 55: trailing comma before '}' (JSON allows none)"),
    "a string credential": ('{\n  "anthropic": "sk-ant-xx"\n}\n',
                            ':2: anthropic: expected an object such as {"type": "api_key", "key": "..."}, '
                            "got a string; ignored"),
    "no key": ('{"fake": {"type": "api_key", "key": "k"},\n "anthropic": {"type": "api_key"}}\n',
               ':2: anthropic: "key" must be a non-empty string, got nothing; ignored'),
    "no type": ('{"anthropic": {"key": "sk-ant-xx"}}', ':1: anthropic: "type" must be a string such as "api_key"; ignored'),
}


def write_auth(env, case: str) -> tuple[Path, str]:
    path = Path(env["AGENT_FORGE_DIR"]) / "auth.json"
    text, problem = BROKEN[case]
    path.write_text(text)
    return path, f"{path}{problem}"


def run(env, cwd, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_forge", *args], cwd=cwd, env=env, input=b"",
                          capture_output=True, timeout=60)


@pytest.mark.parametrize("case", BROKEN)
@pytest.mark.parametrize("mode", [["-p"], ["--mode", "json"]])
def test_print_and_json_modes_warn_and_still_run_other_providers(agent_env, fake_llm, tmp_path, case, mode):
    _, expected = write_auth(agent_env, case)
    fake_llm.set_script([{"text": "ok"}])
    result = run(agent_env, tmp_path, *mode, "--no-session", "hi")
    assert result.returncode == 0, result.stderr
    assert f"Warning: {expected}" in result.stderr.decode()


@pytest.mark.parametrize("case", BROKEN)
def test_the_no_key_error_says_the_file_cannot_be_used(agent_env, fake_llm, tmp_path, case):
    path, expected = write_auth(agent_env, case)
    result = run(agent_env, tmp_path, "-p", "--no-session", "--model", "anthropic/claude-sonnet-4-5", "hi")
    stderr = result.stderr.decode()
    assert result.returncode == 1 and fake_llm.requests == []
    problem = expected.removeprefix(str(path)).removeprefix(": ")
    if problem.startswith(":"):
        problem = "line " + problem[1:]
    assert f'No API key for provider "anthropic". Set ANTHROPIC_API_KEY, add it to {path} (unusable now: {problem}),' \
           in stderr, stderr


async def test_rpc_mode_warns_on_stderr(agent_env, fake_llm, tmp_path):
    _, expected = write_auth(agent_env, "a string credential")
    client = await RpcClient.start(["--mode", "rpc", "--no-session"], cwd=str(tmp_path), env=agent_env)
    async with client:
        state = await client.send({"type": "get_state"})
    assert state["success"] is True
    assert f"Warning: {expected}" in client.stderr.decode()


def test_a_sound_file_gives_no_warning(agent_env, fake_llm, tmp_path):
    (Path(agent_env["AGENT_FORGE_DIR"]) / "auth.json").write_text(
        '{"anthropic": {"type": "api_key", "key": "sk"}, "other": {"type": "oauth", "access": "x"}}')
    fake_llm.set_script([{"text": "ok"}])
    result = run(agent_env, tmp_path, "-p", "--no-session", "hi")
    assert result.returncode == 0 and result.stderr == b""


def keyless_models_json(env, fake_llm) -> None:
    """Provider `local` without an `apiKey` (a keyless local server, README "API keys and headers")."""
    (Path(env["AGENT_FORGE_DIR"]) / "models.json").write_text(json.dumps({"providers": {"local": {
        "baseUrl": fake_llm.base_url_openai, "api": "openai-completions", "models": [{"id": "m"}]}}}))


def test_a_provider_without_api_key_sends_no_credential(agent_env, fake_llm, tmp_path):
    keyless_models_json(agent_env, fake_llm)
    fake_llm.set_script([{"text": "local answer"}])
    result = run(agent_env, tmp_path, "-p", "--no-session", "--model", "local/m", "hi")
    assert result.returncode == 0 and result.stdout == b"local answer\n", result.stderr
    headers = {name.lower() for name in fake_llm.requests[0]["headers"]}
    assert not headers & {"authorization", "x-api-key"}


def test_a_keyless_request_refused_with_401_says_no_key_was_sent(agent_env, fake_llm, tmp_path):
    keyless_models_json(agent_env, fake_llm)
    fake_llm.set_script([{"status": 401, "body": {"error": {"message": "Unauthorized"}}}])
    result = run(agent_env, tmp_path, "-p", "--no-session", "--model", "local/m", "hi")
    assert result.returncode == 1
    assert (b'(the request carried no API key: this provider has none configured; set "apiKey" for it in '
            b"models.json or add it to auth.json)") in result.stderr, result.stderr


@pytest.mark.parametrize("command", [["-p", "--no-session", "hi"], ["--list-models"]])
def test_with_no_usable_key_at_all_the_hint_names_the_broken_file(agent_env, tmp_path, command):
    (Path(agent_env["AGENT_FORGE_DIR"]) / "models.json").unlink()
    (Path(agent_env["AGENT_FORGE_DIR"]) / "settings.json").unlink()
    path, expected = write_auth(agent_env, "a string credential")
    result = run(agent_env, tmp_path, *command)
    stderr = result.stderr.decode()
    assert f"Warning: {expected}" in stderr
    assert (f"add a key to {path} (unusable now: line 2: anthropic: expected an object such as "
            f'{{"type": "api_key", "key": "..."}}, got a string; ignored), or configure a provider in') in stderr
