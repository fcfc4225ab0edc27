"""End to end: a broken `models.json` is reported with its path and line in every mode, also when `--model` names
a model the broken file was meant to add (issue 10, point 14)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient

TEMPLATE = """{
  "providers": {
    "mylocal": {
      "baseUrl": "BASE",
      "api": "openai-completions",
      "apiKey": "k",
      "models": [{"id": "m", "contextWindow": 8192}LAST]
    }
  }
}
"""


def write_broken(env, fake_llm, defect: str) -> tuple[Path, str]:
    """models.json with one defect; returns its path and the `path:line...` text the report must contain."""
    path = Path(env["AGENT_FORGE_DIR"]) / "models.json"
    if defect == "trailing comma":
        text = TEMPLATE.replace("BASE", fake_llm.base_url_openai).replace("LAST", ",")
        line = text.splitlines()[6]
        expected = f"{path}: invalid JSON at line 7 column {line.index(',]') + 1}: trailing comma before ']'"
    elif defect == "base URL without a scheme":
        text = TEMPLATE.replace("BASE", fake_llm.base_url_openai.removeprefix("http://")).replace("LAST", "")
        expected = f'{path}:4: providers.mylocal: "baseUrl" must be an http:// or https:// URL'
    elif defect == "base URL with spaces around it":
        text = TEMPLATE.replace("BASE", f" {fake_llm.base_url_openai} ").replace("LAST", "")
        expected = f'{path}:4: providers.mylocal: "baseUrl" must be a URL without spaces (none around it either)'
    else:  # a base URL with a query: the endpoint path would follow it
        text = TEMPLATE.replace("BASE", f"{fake_llm.base_url_openai}?api-version=1").replace("LAST", "")
        expected = f'{path}:4: providers.mylocal: "baseUrl" must be a URL without a ?query or #fragment'
    path.write_text(text)
    return path, expected


def run(env, cwd, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_forge", *args], cwd=cwd, env=env, input=b"",
                          capture_output=True, timeout=60)


DEFECTS = ["trailing comma", "base URL without a scheme", "base URL with spaces around it", "base URL with a query"]


@pytest.mark.parametrize("defect", DEFECTS)
@pytest.mark.parametrize("mode", [["-p"], ["--mode", "json"]])
def test_print_and_json_modes_name_the_file_line_and_problem(agent_env, fake_llm, tmp_path, defect, mode):
    _, expected = write_broken(agent_env, fake_llm, defect)
    result = run(agent_env, tmp_path, *mode, "--no-session", "--model", "mylocal/m", "hello")
    stderr = result.stderr.decode()
    assert result.returncode == 1 and result.stdout == b""
    assert stderr.startswith('agent-forge: No model matches "mylocal/m". ')
    assert expected in stderr
    assert fake_llm.requests == []


@pytest.mark.parametrize("defect", DEFECTS)
async def test_rpc_mode_starts_and_reports_the_problem_on_stderr_and_in_replies(agent_env, fake_llm, tmp_path,
                                                                                defect):
    _, expected = write_broken(agent_env, fake_llm, defect)
    client = await RpcClient.start(["--mode", "rpc", "--no-session", "--model", "mylocal/m"], cwd=str(tmp_path),
                                   env=agent_env)
    async with client:
        state = await client.send({"type": "get_state"})
        prompt = await client.send({"type": "prompt", "message": "hello"})
        switch = await client.send({"type": "set_model", "provider": "mylocal", "modelId": "m"})
    stderr = client.stderr.decode()
    assert state["success"] is True and state["data"]["model"] is None
    assert prompt["success"] is False and prompt["error"].startswith('No model matches "mylocal/m". ')
    assert expected in prompt["error"]
    assert switch["success"] is False and expected in switch["error"]
    assert f"Warning: {expected}" in stderr
    assert 'Warning: No model matches "mylocal/m"; starting without a model (choose one with set_model)' in stderr
    assert fake_llm.requests == []


async def test_rpc_mode_names_the_line_of_every_problem_while_good_models_still_work(agent_env, fake_llm,
                                                                                     tmp_path):
    path = Path(agent_env["AGENT_FORGE_DIR"]) / "models.json"
    config = json.loads(path.read_text())
    config["providers"]["broken"] = {"baseUrl": "http://127.0.0.1:1/v1", "api": "openai-completions",
                                     "models": [{"id": "ok"}, {"id": "bad", "contextWindow": -5}]}
    path.write_text(json.dumps(config, indent=2))
    bad_line = next(i for i, line in enumerate(path.read_text().splitlines(), 1) if "-5" in line)
    fake_llm.set_script([{"text": "fine"}])
    async with await RpcClient.start(["--mode", "rpc", "--no-session", "--model", "fake/fake-model"],
                                     cwd=str(tmp_path), env=agent_env) as client:
        events = await client.prompt_and_wait("hello")
    assert events[-1]["type"] == "agent_settled"
    assert (f"Warning: {path}:{bad_line}: providers.broken.models[1]: \"contextWindow\" must be a positive integer "
            "(tokens), got -5; model skipped") in client.stderr.decode()
