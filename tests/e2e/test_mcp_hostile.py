"""End to end: MCP servers that misbehave on purpose (`tests/support/mcp_hostile_server.py`, the SDK's low-level
server API) against the real CLI in RPC mode and the loopback fake LLM: an abort while a prompt waits for a server
keeps the prompt; server text has size limits; tools with schemas providers reject are withheld."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agent_forge.modes.rpc.client import RpcClient

from .test_mcp import offered, tool_texts, until_state, write_mcp

HOSTILE = str(Path(__file__).resolve().parents[1] / "support" / "mcp_hostile_server.py")


def hostile(mode: str, **fields) -> dict:
    return {"command": sys.executable, "args": [HOSTILE, mode], **fields}


def session_lines(agent_env: dict) -> list[dict]:
    files = list((Path(agent_env["AGENT_FORGE_DIR"]) / "sessions").rglob("*.jsonl"))
    assert len(files) == 1, files
    return [json.loads(line) for line in files[0].read_text().splitlines()]


async def test_abort_while_a_prompt_waits_for_a_server_keeps_the_prompt_and_the_run_ends_aborted(
        agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"slow": hostile("hang-list", startupTimeoutMs=60000)})
    fake_llm.set_script([{"text": "the next prompt's answer"}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        reply = await client.send({"type": "prompt", "message": "go"})
        aborted = await client.send({"type": "abort"})
        events = await client.wait_for("agent_settled")
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    kinds = [e["type"] for e in events if e["type"] in ("agent_start", "agent_end", "agent_settled")]
    assert reply["data"] == {"disposition": "started"} and aborted["success"] is True
    assert kinds == ["agent_start", "agent_end", "agent_settled"] and events[-1]["aborted"] is True
    assert [(m["role"], m.get("stopReason")) for m in messages] == [("user", None), ("assistant", "aborted")]
    assert messages[0]["content"][0]["text"] == "go" and fake_llm.requests == []
    stored = [e["message"]["role"] for e in session_lines(agent_env) if e.get("type") == "message"]
    assert stored == ["user", "assistant"]
