"""End to end: two tool calls of one assistant message with the same id each run, get their own result and
their own events (the later one renamed `<id>_2`), in the live session and in the file (real CLI, fake LLM)."""

from __future__ import annotations

import json
from pathlib import Path

from agent_forge.modes.rpc.client import RpcClient


async def test_duplicate_tool_call_ids_in_one_message_are_made_unique(agent_env, fake_llm, tmp_path):
    calls = [{"id": "dup", "name": "bash", "arguments": {"command": f"echo {word}"}} for word in ("one", "two")]
    calls.append({"id": "dup_2", "name": "bash", "arguments": {"command": "echo three"}})
    fake_llm.set_script([{"tool_calls": calls}, {"text": "done"}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        events = await client.prompt_and_wait("run")
        live = (await client.send({"type": "get_messages"}))["data"]["messages"]
        session_file = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    ends = {e["toolCallId"]: e["result"]["content"][0]["text"] for e in events if e["type"] == "tool_execution_end"}
    assert ends == {"dup": "one\n", "dup_3": "two\n", "dup_2": "three\n"}
    assert [b["id"] for b in live[1]["content"] if b["type"] == "toolCall"] == ["dup", "dup_3", "dup_2"]
    results = [m for m in live if m["role"] == "toolResult"]
    # stored as each call finished (they run side by side): the order the model gets is checked below
    assert sorted((m["toolCallId"], m["isError"]) for m in results) == [("dup", False), ("dup_2", False),
                                                                        ("dup_3", False)]
    assert "No result was recorded" not in json.dumps(live)
    sent = fake_llm.requests[1]["body"]["messages"]
    assert [m["tool_call_id"] for m in sent if m["role"] == "tool"] == ["dup", "dup_3", "dup_2"]
    entries = [json.loads(line) for line in Path(session_file).read_text().splitlines()]
    assert [e["message"] for e in entries if e.get("type") == "message"] == live
