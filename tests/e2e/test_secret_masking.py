"""End to end: a server that quotes the configured key or a header value back in its error has it masked
before the text reaches stderr, JSON events or the session file, wherever the secret came from (round 5)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SECRET = "sk-SECRET-abc123xyz"
TOKEN = "tok-HEADER-987zyx"


def run(env, cwd, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_forge", *args], cwd=cwd, env=env, input=b"",
                          capture_output=True, timeout=60)


def configure(env: dict[str, str], source: str) -> None:
    """Put SECRET where `source` says; the provider always sends the header `x-proxy: Bearer TOKEN`."""
    agent_dir = Path(env["AGENT_FORGE_DIR"])
    models = json.loads((agent_dir / "models.json").read_text())
    provider = models["providers"]["fake"]
    provider["headers"] = {"x-proxy": f"Bearer {TOKEN}"}
    if source == "models.json":
        provider["apiKey"] = SECRET
    elif source == "command":
        provider["apiKey"] = f"!echo {SECRET}"
    elif source == "auth.json":
        (agent_dir / "auth.json").write_text(json.dumps({"fake": {"type": "api_key", "key": SECRET}}))
    (agent_dir / "models.json").write_text(json.dumps(models))


@pytest.mark.parametrize("source", ["models.json", "command", "auth.json"])
def test_a_key_quoted_back_by_the_server_is_masked_everywhere(agent_env, fake_llm, tmp_path, source):
    configure(agent_env, source)
    echoed = f"Incorrect API key provided: {SECRET}. Header was Bearer {TOKEN}; token {TOKEN}"
    fake_llm.set_script([{"status": 401, "body": {"error": {"message": echoed}}}])
    sessions = tmp_path / "sessions"
    result = run(agent_env, tmp_path, "--session-dir", str(sessions), "--mode", "json", "-p", "hi")
    assert fake_llm.requests[0]["headers"].get("x-proxy") == f"Bearer {TOKEN}"  # the real values were sent
    assert result.returncode == 1
    saved = b"".join(path.read_bytes() for path in sessions.rglob("*.jsonl"))
    for output in (result.stdout, result.stderr, saved):
        assert SECRET.encode() not in output and TOKEN.encode() not in output
    assert b"Incorrect API key provided: ***. Header was ***; token ***" in result.stderr, result.stderr
    assert b"Incorrect API key provided: ***." in saved and b"Incorrect API key provided: ***." in result.stdout


def test_a_retried_error_quoting_the_key_is_masked_in_the_retry_events(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"retry": {"baseDelayMs": 1}})  # not the default 2 s wait
    configure(env, "models.json")
    fake_llm.set_script([{"status": 503, "body": {"error": {"message": f"bad upstream key {SECRET}"}}},
                         {"text": "fine"}])
    result = run(env, tmp_path, "--no-session", "--mode", "json", "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert SECRET.encode() not in result.stdout + result.stderr
    assert b"bad upstream key ***" in result.stdout
