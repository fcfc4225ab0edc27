"""End to end: queued steering and follow-up messages survive kill -9 of the agent (issue 10, brief h-queue).

A `steer` / `follow_up` accepted while the model's answer is held open is on disk before its response; the agent is
then killed with SIGKILL and the session reopened (`--session FILE`, `switch_session`): the messages still pending
come back queued, once, in order, with their kind (`get_state`, `queue_update`), and the next `prompt` delivers
them. What was delivered or cleared before the kill is not restored.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from support.acp_client import AcpClient

from agent_forge.modes.rpc.client import RpcClient

pytestmark = pytest.mark.real_process  # kill -9 needs the agent as a process

HELD = {"text": "one two three four", "hang_after": 4, "hang_ms": 30000}


def user_texts(request) -> list[str]:
    return [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
            for m in request["body"]["messages"] if m["role"] == "user"]


async def start(env, cwd, *args) -> RpcClient:
    return await RpcClient.start(list(args), cwd=str(cwd), env=env)


async def wait_for_text_delta(client: RpcClient) -> None:
    while True:
        event = await client.next_event()
        if event["type"] == "message_update" and event["assistantMessageEvent"]["type"] == "text_delta":
            return


async def held_run_with_queue(env, cwd) -> tuple[RpcClient, str]:
    """An agent whose answer to "go" is held open, with steer "s1" and follow_up "f1" acknowledged: (client, file)."""
    client = await start(env, cwd)
    await client.send({"type": "prompt", "message": "go"})
    await wait_for_text_delta(client)
    for kind, text in (("steer", "s1"), ("follow_up", "f1")):
        reply = await client.send({"type": kind, "message": text})
        assert reply["data"] == {"disposition": "queued"}
    path = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    return client, path


async def kill(client: RpcClient) -> None:
    client.process.send_signal(signal.SIGKILL)
    assert await client.close() == -signal.SIGKILL


async def reopened(env, cwd, path) -> tuple[RpcClient, int, dict | None]:
    """A new agent on `path`: (client, pendingMessageCount, the queue_update it announced or None)."""
    client = await start(env, cwd, "--session", path)
    state = (await client.send({"type": "get_state"}))["data"]
    updates = [e for e in client.records if e.get("type") == "queue_update"]
    return client, state["pendingMessageCount"], (updates[-1] if updates else None)


async def test_killed_while_queued_the_reopened_session_delivers_them_with_the_next_prompt(
        agent_env, fake_llm, tmp_path):
    fake_llm.set_script([HELD])
    client, path = await held_run_with_queue(agent_env, tmp_path)
    await kill(client)
    fake_llm.set_script([{"text": "took the prompt and the steer"}, {"text": "took the follow-up"}])
    client, pending, update = await reopened(agent_env, tmp_path, path)
    async with client:
        assert pending == 2
        assert update == {"type": "queue_update", "steering": ["s1"], "followUp": ["f1"]}
        assert len(fake_llm.requests) == 1  # not run on open: the next prompt delivers them
        await client.prompt_and_wait("next")
        assert (await client.send({"type": "get_state"}))["data"]["pendingMessageCount"] == 0
    first, second = fake_llm.requests[1:]
    assert user_texts(first) == ["go", "next", "s1"]  # the steering message goes with the prompt, after it
    assert user_texts(second) == ["go", "next", "s1", "f1"]
    client, pending, update = await reopened(agent_env, tmp_path, path)  # delivered: restored no more
    async with client:
        assert pending == 0 and update is None


async def test_cleared_then_killed_restores_nothing(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([HELD])
    client, path = await held_run_with_queue(agent_env, tmp_path)
    cleared = await client.send({"type": "clear_queue"})
    assert cleared["data"] == {"steering": ["s1"], "followUp": ["f1"]}
    await kill(client)
    client, pending, update = await reopened(agent_env, tmp_path, path)
    async with client:
        assert pending == 0 and update is None


async def test_delivered_then_killed_restores_only_what_was_still_queued(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([HELD, HELD])
    client, path = await held_run_with_queue(agent_env, tmp_path)
    fake_llm.release_hangs()  # the first answer ends: the steering message goes with the second request
    while True:
        event = await client.next_event()
        if event["type"] == "message_end" and event["message"]["role"] == "user":
            assert event["message"]["content"][0]["text"] == "s1"
            break
    await wait_for_text_delta(client)  # the second answer is held open, the follow-up still queued
    await kill(client)
    client, pending, update = await reopened(agent_env, tmp_path, path)
    async with client:
        assert pending == 1
        assert update == {"type": "queue_update", "steering": [], "followUp": ["f1"]}


async def test_reopening_twice_restores_once(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([HELD])
    client, path = await held_run_with_queue(agent_env, tmp_path)
    await kill(client)
    client, pending, _ = await reopened(agent_env, tmp_path, path)
    await client.close()  # stdin EOF while they are queued: still pending, nothing written for them
    client, pending, _ = await reopened(agent_env, tmp_path, path)
    await kill(client)  # killed again before delivery
    client, pending, update = await reopened(agent_env, tmp_path, path)
    async with client:
        assert pending == 2
        assert update == {"type": "queue_update", "steering": ["s1"], "followUp": ["f1"]}
        queued = [e for e in entries(path) if e.get("customType") == "agent_forge.queue_pending"]
        assert [e["data"]["kind"] for e in queued] == ["steer", "followUp"]  # restoring wrote no new ones


async def test_switch_session_restores_a_killed_session_s_queue_and_clone_drops_it(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([HELD])
    client, path = await held_run_with_queue(agent_env, tmp_path)
    await kill(client)
    async with await start(agent_env, tmp_path) as client:
        reply = await client.send({"type": "switch_session", "sessionPath": path})
        assert reply["data"]["cancelled"] is False
        assert (await client.send({"type": "get_state"}))["data"]["pendingMessageCount"] == 2
        updates = [e for e in client.records if e.get("type") == "queue_update"]
        assert updates[-1] == {"type": "queue_update", "steering": ["s1"], "followUp": ["f1"]}
        assert (await client.send({"type": "clone"}))["data"]["cancelled"] is False
        state = (await client.send({"type": "get_state"}))["data"]
        assert state["pendingMessageCount"] == 0  # a session change drops the queue (docs/rpc.md)
        clone = state["sessionFile"]
    for reopen in (clone, path):  # the clone's copies name the original session; the original settled them
        client, pending, update = await reopened(agent_env, tmp_path, reopen)
        async with client:
            assert pending == 0 and update is None


async def test_acp_session_load_restores_them_for_the_next_prompt(agent_env, fake_llm, project):
    fake_llm.set_script([HELD])
    client, path = await held_run_with_queue(agent_env, project)
    session_id = (await client.send({"type": "get_state"}))["data"]["sessionId"]
    await kill(client)
    fake_llm.set_script([{"text": "took the prompt and the steer"}, {"text": "took the follow-up"}])
    acp = await AcpClient.start([], cwd=str(project), env=agent_env)
    await acp.initialize()
    await acp.request("session/load", {"sessionId": session_id, "cwd": str(project), "mcpServers": []})
    assert len(fake_llm.requests) == 1  # not run on open
    assert await acp.prompt(session_id, "next") == {"stopReason": "end_turn"}
    assert await acp.close() == 0
    assert [user_texts(r) for r in fake_llm.requests[1:]] == [["go", "next", "s1"], ["go", "next", "s1", "f1"]]


def entries(path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines()[1:]]
