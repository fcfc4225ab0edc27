"""End to end: a key written twice in a JSON configuration file (models.json, settings.json, auth.json, mcp.json) is
reported as `<path>:<line of the second one>: <where>: duplicate key ...` on stderr in every mode, and the last one
is used, as JSON has it; a models.json `maxTokens` above the model's `contextWindow` is reported at its line and the
request asks for the window instead (issue 10)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient

MODELS = """{
  "providers": {
    "fake": {"baseUrl": "http://127.0.0.1:1/v1", "api": "openai-completions", "models": [{"id": "fake-model"}]},
    "fake": {
      "baseUrl": "BASE", "api": "openai-completions", "apiKey": "KEY",
      "models": [{"id": "fake-model", "contextWindow": 8192, "maxTokens": 32768}]
    }
  }
}
"""
SETTINGS = '{"defaultProvider": "fake",\n "defaultModel": "no-such-model",\n "defaultModel": "fake-model"}\n'
AUTH = '{"fake": {"type": "api_key", "key": "stale"},\n "fake": {"type": "api_key", "key": "KEY"}}\n'
MCP = ('{"mcpServers": {\n  "tools": {"command": "false", "enabled": false},\n'
       '  "tools": {"command": "true", "enabled": false}\n}}\n')


def write_files(env, fake_llm) -> tuple[list[str], str]:
    """The four files, each with a repeated key; returns the warnings stderr must hold and the API key."""
    agent_dir = Path(env["AGENT_FORGE_DIR"])
    key = json.loads((agent_dir / "models.json").read_text())["providers"]["fake"]["apiKey"]
    files = {"models.json": MODELS.replace("BASE", fake_llm.base_url_openai).replace("KEY", key),
             "settings.json": SETTINGS, "auth.json": AUTH.replace("KEY", key), "mcp.json": MCP}
    for name, text in files.items():
        (agent_dir / name).write_text(text)
    last = "the earlier one ignored"
    return [f'{agent_dir / "models.json"}:4: providers: duplicate key "fake" (lines 3 and 4); only the last one '
            f"(line 4) is used, {last}",
            f'{agent_dir / "models.json"}:6: providers.fake.models[0]: "maxTokens" 32768 is larger than '
            '"contextWindow" 8192; the answer must fit in the context window, so 8192 is used',
            f'{agent_dir / "settings.json"}:3: duplicate key "defaultModel" (lines 2 and 3); only the last one '
            f"(line 3) is used, {last}",
            f'{agent_dir / "auth.json"}:2: duplicate key "fake" (lines 1 and 2); only the last one (line 2) is '
            f"used, {last}",
            f'{agent_dir / "mcp.json"}:3: mcpServers: duplicate key "tools" (lines 2 and 3); only the last one '
            f"(line 3) is used, {last}"], key


def run(env, cwd, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_forge", *args], cwd=cwd, env=env, input=b"",
                          capture_output=True, timeout=60)


def check_request(fake_llm, key: str) -> None:
    """The request used the last entries: the second provider's server, the last auth key, the lowered limit."""
    [request] = fake_llm.requests
    assert request["headers"].get("authorization") == f"Bearer {key}"
    assert request["body"]["model"] == "fake-model" and request["body"]["max_completion_tokens"] == 8192


@pytest.mark.parametrize("mode", [["-p"], ["--mode", "json"]])
def test_print_and_json_modes_report_every_repeat_and_use_the_last_value(agent_env, fake_llm, tmp_path, mode):
    expected, key = write_files(agent_env, fake_llm)
    fake_llm.set_script([{"text": "fine"}])
    result = run(agent_env, tmp_path, *mode, "--no-session", "hello")
    stderr = result.stderr.decode()
    assert result.returncode == 0, stderr
    for text in expected:
        assert f"Warning: {text}" in stderr, stderr
    assert "Traceback" not in stderr
    check_request(fake_llm, key)
    if mode == ["-p"]:
        assert result.stdout.decode().strip() == "fine"
    else:
        assert all(json.loads(line) for line in result.stdout.decode().splitlines())


async def test_rpc_mode_reports_the_repeats_on_stderr_and_runs(agent_env, fake_llm, tmp_path):
    expected, key = write_files(agent_env, fake_llm)
    fake_llm.set_script([{"text": "fine"}])
    async with await RpcClient.start(["--mode", "rpc", "--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        state = await client.send({"type": "get_state"})
        events = await client.prompt_and_wait("hello")
    assert state["data"]["model"]["id"] == "fake-model" and state["data"]["model"]["maxTokens"] == 8192
    assert events[-1]["type"] == "agent_settled"
    stderr = client.stderr.decode()
    for text in expected:
        assert f"Warning: {text}" in stderr, stderr
    check_request(fake_llm, key)
