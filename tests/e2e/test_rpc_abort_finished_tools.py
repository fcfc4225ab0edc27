"""End to end: an abort during parallel tool calls keeps the result of every call that had already finished
(issue 10 round 2, F1): the stored result is exactly what its `tool_execution_end` reported; only calls still
running at the abort get the aborted result (their partial output plus the note)."""

from __future__ import annotations

import json
from pathlib import Path

from agent_forge.modes.rpc.client import RpcClient

ABORTED_NOTE = "Tool execution was aborted."

PLUGIN = '''
def setup(plugin):
    def quick(args, ctx):
        ctx.update("partial1")
        return "the real result"

    plugin.register_tool("quick", quick, description="Reports progress, then returns at once")
'''


def stored_results(messages: list[dict]) -> dict[str, dict]:
    return {m["toolCallId"]: {"content": m["content"], "isError": m["isError"]}
            for m in messages if m.get("role") == "toolResult"}


def file_results(path: str) -> dict[str, dict]:
    entries = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    return stored_results([e["message"] for e in entries if e.get("type") == "message"])


async def abort_after_fast_call(client: RpcClient, fake_llm, fast_call: dict) -> tuple[dict, dict, dict]:
    """Prompt with `sleep 30` and `fast_call` in parallel, abort once `call_f` ended; returns (its end event's
    result, the stored results from get_messages, the stored results from the session file)."""
    fake_llm.set_script([{"tool_calls": [
        {"id": "call_s", "name": "bash", "arguments": {"command": "sleep 30"}}, {"id": "call_f", **fast_call}]}])
    await client.send({"type": "prompt", "message": "go"})
    async for event in client.events_until("agent_settled"):
        if event["type"] == "tool_execution_end" and event["toolCallId"] == "call_f":
            ended = {"content": event["result"]["content"], "isError": event["isError"]}
            break
    else:
        raise AssertionError("call_f never ended")
    assert (await client.send({"type": "abort"}))["success"] is True
    await client.wait_for("agent_settled", timeout=30)
    messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    path = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    return ended, stored_results(messages), file_results(path)


async def test_a_finished_bash_call_keeps_its_result_when_its_sibling_is_aborted(agent_env, fake_llm, tmp_path):
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        ended, live, saved = await abort_after_fast_call(
            client, fake_llm, {"name": "bash", "arguments": {"command": "echo FAST"}})
    assert ended["isError"] is False and [b["text"] for b in ended["content"]] == ["FAST\n"]
    assert live["call_f"] == ended and saved["call_f"] == ended
    assert live["call_s"]["isError"] is True and live["call_s"]["content"][-1]["text"] == ABORTED_NOTE
    assert saved["call_s"] == live["call_s"]


async def test_a_finished_plugin_tool_keeps_its_real_result_not_its_progress(agent_env, fake_llm, tmp_path):
    plugin = tmp_path / "quick_tool.py"
    plugin.write_text(PLUGIN)
    async with await RpcClient.start(["-e", str(plugin)], cwd=str(tmp_path), env=agent_env) as client:
        ended, live, saved = await abort_after_fast_call(client, fake_llm, {"name": "quick", "arguments": {}})
    assert ended == {"content": [{"type": "text", "text": "the real result"}], "isError": False}
    assert live["call_f"] == ended and saved["call_f"] == ended
    assert live["call_s"]["content"][-1]["text"] == ABORTED_NOTE
