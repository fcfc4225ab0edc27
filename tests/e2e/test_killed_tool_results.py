"""End to end: a tool call that finished is on disk when its `tool_execution_end` reaches the client, even while
a sibling call of the same message still runs (t-rpc8 issue 10). kill -9 then keeps it: the resumed session
holds its result, and the model is told only the unfinished call was interrupted. Results saved in completion
order come back in call order, so a resumed session lists exactly what the live one did.
"""

from __future__ import annotations

import signal

import pytest

from agent_forge.coding.messages import INTERRUPTED_RESULT
from agent_forge.modes.rpc.client import RpcClient

pytestmark = pytest.mark.real_process  # kill -9 needs the agent as a process

WAITS = ("while [ ! -e go ]; do sleep 0.05; done; while kill -0 $(cat go) 2>/dev/null; do sleep 0.05; done; "
         "echo slow")  # ends once the sibling call's shell has exited (`go` holds its pid): under load, one
# that only waited for `go` could end before the sibling's shell did (fresh-clone CI)
QUICK = "echo quick; echo $$ > go.tmp; mv go.tmp go"


def two_calls(first: str) -> dict:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": first}},
                           {"name": "bash", "arguments": {"command": QUICK}}]}


async def session_file(client: RpcClient) -> str:
    return (await client.send({"type": "get_state"}))["data"]["sessionFile"]


async def messages(client: RpcClient) -> list[dict]:
    return (await client.send({"type": "get_messages"}))["data"]["messages"]


def tool_messages(body: dict) -> list[tuple[str, str]]:
    """(tool_call_id, text) of each tool result an OpenAI-completions request sent, in order."""
    return [(m["tool_call_id"], str(m["content"])) for m in body["messages"] if m["role"] == "tool"]


async def test_a_finished_call_survives_kill_9_while_its_sibling_runs(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([two_calls("sleep 300; echo never"), {"text": "resumed"}])
    client = await RpcClient.start([], cwd=str(tmp_path), env=agent_env)
    try:
        path = await session_file(client)
        await client.send({"type": "prompt", "message": "go"})
        ended = (await client.wait_for("tool_execution_end"))[-1]
        assert ended["result"]["content"][0]["text"].strip() == "quick"
    finally:
        client.process.send_signal(signal.SIGKILL)
        assert await client.close() == -signal.SIGKILL
    resumed = await RpcClient.start(["--session", path], cwd=str(tmp_path), env=agent_env)
    try:
        stored = await messages(resumed)
        assert [m["role"] for m in stored] == ["user", "assistant", "toolResult"]
        assert stored[2]["toolCallId"] == ended["toolCallId"] and stored[2]["isError"] is False
        await resumed.prompt_and_wait("continue")
    finally:
        await resumed.close()
    calls = [b["id"] for b in stored[1]["content"] if b["type"] == "toolCall"]
    sent = tool_messages(fake_llm.requests[-1]["body"])
    assert [call_id for call_id, _ in sent] == calls  # call order, each answered once
    assert INTERRUPTED_RESULT in sent[0][1] and "quick" in sent[1][1]


async def test_results_finished_out_of_order_resume_in_call_order(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([two_calls(WAITS), {"text": "done"}])
    client = await RpcClient.start([], cwd=str(tmp_path), env=agent_env)
    try:
        path = await session_file(client)
        events = await client.prompt_and_wait("go")
        live = await messages(client)
    finally:
        await client.close()
    ends = [e["result"]["content"][0]["text"].strip() for e in events if e["type"] == "tool_execution_end"]
    assert ends == ["quick", "slow"]  # completion order
    results = [m for m in live if m["role"] == "toolResult"]
    assert [m["content"][0]["text"].strip() for m in results] == ["slow", "quick"]  # call order
    resumed = await RpcClient.start(["--session", path], cwd=str(tmp_path), env=agent_env)
    try:
        assert await messages(resumed) == live
    finally:
        await resumed.close()
