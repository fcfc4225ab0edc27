"""End to end: abort-type commands that arrive while an abort is settling (issue 10 point A), and command storms.

Every command is answered exactly once, whatever arrives meanwhile, and the process exits cleanly on stdin EOF.
"""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from agent_forge.modes.rpc.client import RpcClient

SLOW_TERM = "trap 'sleep 0.5; exit 1' TERM; echo trapped; sleep 30 & wait"
"""A bash tool command that takes half a second to die on SIGTERM: its abort is still settling for that long."""


def responses_by_id(client: RpcClient) -> Counter:
    return Counter(str(r.get("id")) for r in client.records if r.get("type") == "response")


async def start_slow_tool(client: RpcClient, fake_llm) -> None:
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": SLOW_TERM}}]}])
    await client.send({"type": "prompt", "message": "go", "id": "prompt"})
    await wait_for_output(client, "trapped")  # the trap is set: from now on SIGTERM takes half a second


async def wait_for_output(client: RpcClient, text: str) -> None:
    async for event in client.events_until("agent_settled"):
        if event["type"] == "tool_execution_update" and any(
                text in block.get("text", "") for block in event["partialResult"]["content"]):
            return
    raise AssertionError(f"the tool never printed {text!r}")


SECOND = ["abort", "clone", "new_session", "compact", "switch_session", "fork", "abort_retry",
          "abort_bash"]


async def second_command(client: RpcClient, kind: str) -> dict:
    """`kind` with the fields it needs, taken from the running session (asked before the first abort)."""
    if kind == "switch_session":
        state = (await client.send({"type": "get_state"}))["data"]
        return {"type": kind, "sessionPath": state["sessionFile"]}
    if kind == "fork":
        forks = (await client.send({"type": "get_fork_messages"}))["data"]["messages"]
        return {"type": kind, "entryId": forks[0]["entryId"]}
    return {"type": kind}


@pytest.mark.parametrize("second", SECOND)
async def test_a_second_abort_type_command_while_an_abort_settles(agent_env, fake_llm, tmp_path, second):
    client = await RpcClient.start([], cwd=str(tmp_path), env=agent_env)
    await start_slow_tool(client, fake_llm)
    command = await second_command(client, second)
    first = client.send_nowait({"type": "abort", "id": "first"})
    other = client.send_nowait({**command, "id": "second"})
    replies = await asyncio.wait_for(asyncio.gather(first, other), 20)
    code = await client.close(timeout=20)
    assert replies[0]["success"] is True, replies
    assert replies[1]["command"] == second
    assert code == 0
    counts = responses_by_id(client)
    assert {"prompt", "first", "second"} <= counts.keys() and set(counts.values()) == {1}, counts
    assert sum(1 for r in client.records if r.get("type") == "agent_settled") == 1
