"""End to end: what an `abort` or a session change does to prompts sent right after it, in the same write
(fresh eyes, round 4): an abort cancels only prompts sent before it; a prompt sent while a session change is
pending waits for it and runs in the session that exists then, unless an `abort` sent after it refuses it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient

HANGING = {"text": "one two three four", "hang_after": 4, "hang_ms": 20000}


async def running(client: RpcClient) -> str:
    """Start a run that hangs mid-answer; the current session file."""
    await client.send({"type": "prompt", "message": "go"})
    while True:
        event = await client.next_event()
        if event["type"] == "message_update" and event["assistantMessageEvent"]["type"] == "text_delta":
            break
    return (await client.send({"type": "get_state"}))["data"]["sessionFile"]


async def answers(client: RpcClient, ids: set[str]) -> dict[str, dict]:
    replies: dict[str, dict] = {}
    while set(replies) != ids:
        event = await client.next_event(timeout=10)
        if event["type"] == "response" and event.get("id") in ids:
            replies[event["id"]] = event
    return replies


def user_texts(path: str) -> list[str]:
    entries = [json.loads(line) for line in Path(path).read_text().splitlines()[1:]]
    return [e["message"]["content"][0]["text"] for e in entries
            if e["type"] == "message" and e["message"]["role"] == "user"]


def write(client: RpcClient, *commands: dict) -> None:
    client.write_raw(b"".join(json.dumps(c).encode() + b"\n" for c in commands))


@pytest.mark.parametrize("change", ["clone", "new_session"])
async def test_a_prompt_sent_while_a_session_change_is_pending_runs_in_the_new_session(
        agent_env, fake_llm, tmp_path, change):
    fake_llm.set_script([HANGING, {"text": "Answered in the new session."}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        old_file = await running(client)
        write(client, {"id": "ch", "type": change},
              {"id": "p", "type": "prompt", "message": "next", "streamingBehavior": "followUp"})
        replies = await answers(client, {"ch", "p"})
        await client.wait_for("agent_settled", timeout=10)
        new_file = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    assert replies["ch"]["success"] is True and replies["ch"]["data"] == {"cancelled": False}
    assert replies["p"]["success"] is True, replies["p"]
    assert replies["p"]["data"] == {"disposition": "started"}  # the new session was idle
    assert new_file != old_file and user_texts(new_file)[-1] == "next"
    assert "next" not in user_texts(old_file)
    assert fake_llm.requests[-1]["body"]["messages"][-1]["content"] in ("next", [{"type": "text", "text": "next"}])


async def test_an_abort_sent_after_a_prompt_held_by_a_session_change_refuses_it(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([HANGING, {"text": "never"}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        await running(client)
        write(client, {"id": "ch", "type": "clone"},
              {"id": "p", "type": "prompt", "message": "next", "streamingBehavior": "followUp"},
              {"id": "a", "type": "abort"})
        replies = await answers(client, {"ch", "p", "a"})
        state = (await client.send({"type": "get_state"}))["data"]
    assert replies["ch"]["success"] is True and replies["a"]["success"] is True
    assert replies["p"]["success"] is False
    assert replies["p"]["error"] == "Aborted while the prompt waited for a session change: the prompt was not sent"
    assert len(fake_llm.requests) == 1 and state["isStreaming"] is False and state["messageCount"] == 2


@pytest.mark.parametrize("kind", ["steer", "follow_up"])
async def test_steer_and_follow_up_are_refused_while_a_session_change_is_pending(agent_env, fake_llm, tmp_path,
                                                                                kind):
    """Queued in the session being left, the message would be dropped with its queue: refused instead."""
    fake_llm.set_script([HANGING, {"text": "never"}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        await running(client)
        write(client, {"id": "ch", "type": "clone"}, {"id": "q", "type": kind, "message": "late"})
        replies = await answers(client, {"ch", "q"})  # the aborted run settled before the clone answered
        after = await client.send({"type": kind, "message": "now fine"})
    assert replies["ch"]["success"] is True
    assert replies["q"]["success"] is False and replies["q"]["error"].startswith("A session change is pending")
    assert after["success"] is True and len(fake_llm.requests) == 1
