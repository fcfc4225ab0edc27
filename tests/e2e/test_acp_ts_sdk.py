"""End to end: a client written with the official ACP TypeScript SDK (`tests/support/acp_ts_client.mjs`)
drives `agent-forge --mode acp`. The SDK (npm `@agentclientprotocol/sdk`) is installed at test time into a
cache directory under the system temp dir; without node, npm or the registry the tests are skipped."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.real_process

SDK = "@agentclientprotocol/sdk@2.4.0"
SCRIPT = Path(__file__).resolve().parents[1] / "support" / "acp_ts_client.mjs"


@pytest.fixture(scope="module")
def ts_client_dir() -> Path:
    """A directory holding the SDK and the client script (installed once per machine, then reused)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        pytest.skip("node and npm are needed for the TypeScript SDK client")
    cache = Path(tempfile.gettempdir()) / "agent-forge-test-cache" / SDK.replace("/", "_").replace("@", "")
    if not (cache / "node_modules" / "@agentclientprotocol" / "sdk" / "package.json").exists():
        cache.mkdir(parents=True, exist_ok=True)
        try:
            done = subprocess.run([npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund", SDK],
                                  capture_output=True, timeout=180)
        except subprocess.TimeoutExpired:
            pytest.skip("npm install of the ACP TypeScript SDK timed out")
        if done.returncode != 0:
            pytest.skip(f"cannot install {SDK}: {done.stderr.decode()[-300:]}")
    shutil.copy(SCRIPT, cache / "client.mjs")
    return cache


def run_client(ts_client_dir: Path, agent_env: dict, project: Path, **steps) -> dict:
    command = [sys.executable, "-m", "agent_forge", "--mode", "acp"]
    done = subprocess.run(["node", str(ts_client_dir / "client.mjs"), json.dumps(command),
                           json.dumps({"cwd": str(project), **steps})],
                          capture_output=True, env=agent_env, cwd=project, timeout=60)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    return json.loads(done.stdout.splitlines()[-1])



def test_the_typescript_sdk_client_runs_a_write_and_bash_turn(ts_client_dir, agent_env, project, fake_llm):
    fake_llm.set_script([
        {"thinking": "plan", "tool_calls": [{"id": "w1", "name": "write", "arguments": {"path": "h.txt", "content": "hi\n"}}]},
        {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "cat h.txt"}}]},
        {"text": "All done."},
    ])
    result = run_client(ts_client_dir, agent_env, project, prompts=["make h.txt"])
    assert result["initialize"]["protocolVersion"] == 1 and result["stops"] == ["end_turn"]
    assert result["asked"] == ["w1", "b1"]  # ask mode, approved by the client
    updates = result["updates"]
    kinds = {u["sessionUpdate"] for u in updates}
    assert {"agent_thought_chunk", "agent_message_chunk", "tool_call", "tool_call_update", "usage_update"} <= kinds
    done = {u["toolCallId"]: u for u in updates if u["sessionUpdate"] == "tool_call_update" and u.get("status")}
    assert done["w1"]["content"][0]["type"] == "diff" and done["w1"]["content"][0]["newText"] == "hi\n"
    assert "hi" in done["b1"]["content"][0]["content"]["text"] and done["b1"]["status"] == "completed"
    assert (project / "h.txt").read_text() == "hi\n"


def test_the_typescript_sdk_client_cancels_mid_stream(ts_client_dir, agent_env, project, fake_llm):
    fake_llm.set_script([{"text": "one two three four five", "hang_after": 4}])
    result = run_client(ts_client_dir, agent_env, project, prompts=["go"], cancelAfterChunk=True)
    assert result["stops"] == ["cancelled"]
