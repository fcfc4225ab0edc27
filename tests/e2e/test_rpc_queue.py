"""End to end: steering and follow-up queues over RPC (seed 000 "steer", "follow_up", "clear_queue", "abort")."""

from __future__ import annotations

import asyncio

from agent_forge.modes.rpc.client import RpcClient


def user_texts(request):
    return [m["content"][0]["text"] for m in request["body"]["messages"] if m["role"] == "user"]


async def wait_for_text_delta(client):
    while True:
        event = await client.next_event()
        if event["type"] == "message_update" and event["assistantMessageEvent"]["type"] == "text_delta":
            return


async def test_steer_during_running_bash_is_delivered_before_next_call(agent_env, fake_llm, tmp_path):
    fifo = tmp_path / "gate"
    import os

    os.mkfifo(fifo)
    fake_llm.set_script([
        {"text": "Running.", "tool_calls": [{"name": "bash", "arguments": {"command": f"cat {fifo}"}}]},
        {"text": "Saw the steer."},
    ])
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        await client.send({"type": "prompt", "message": "go"})
        await client.wait_for("tool_execution_start")
        reply = await client.send({"type": "steer", "message": "change of plan"})
        assert reply["data"] == {"disposition": "queued"}
        update = await client.next_event()
        assert update == {"type": "queue_update", "steering": ["change of plan"], "followUp": []}
        await asyncio.to_thread(fifo.write_text, "released\n")
        events = await client.wait_for("agent_settled")
    assert user_texts(fake_llm.requests[1]) == ["go", "change of plan"]
    roles = [m["role"] for m in fake_llm.requests[1]["body"]["messages"] if m["role"] != "system"]
    assert roles == ["user", "assistant", "tool", "user"]  # delivered after the tool result
    assert [e["type"] for e in events].count("agent_settled") == 1


async def test_follow_up_while_idle_waits_for_the_next_prompt(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "first"}, {"text": "second"}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        reply = await client.send({"type": "follow_up", "message": "later please"})
        assert reply["data"] == {"disposition": "queued"}
        state = (await client.send({"type": "get_state"}))["data"]
        assert state["pendingMessageCount"] == 1 and state["isStreaming"] is False
        assert fake_llm.requests == []
        await client.prompt_and_wait("now")
    assert [user_texts(r) for r in fake_llm.requests] == [["now"], ["now", "later please"]]


async def test_clear_queue_mid_stream_returns_texts_and_drops_them(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "one two three four", "hang_after": 4, "hang_ms": 20000}, {"text": "x"}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        await client.send({"type": "prompt", "message": "go"})
        await wait_for_text_delta(client)
        await client.send({"type": "steer", "message": "s1"})
        await client.send({"type": "follow_up", "message": "f1"})
        cleared = await client.send({"type": "clear_queue"})
        assert cleared["data"] == {"steering": ["s1"], "followUp": ["f1"]}
        state = (await client.send({"type": "get_state"}))["data"]
        assert state["pendingMessageCount"] == 0
        await client.send({"type": "abort"})
        events = await client.wait_for("agent_settled")
    assert events[-1]["aborted"] is True
    assert len(fake_llm.requests) == 1


async def test_abort_continues_messages_still_queued(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "one two three four", "hang_after": 4, "hang_ms": 20000},
                         {"text": "Handled the queued follow-up."}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        await client.send({"type": "prompt", "message": "go"})
        await wait_for_text_delta(client)
        await client.send({"type": "follow_up", "message": "queued work"})
        reply = await client.send({"type": "abort"}, timeout=10)
        assert reply["success"] is True
        events = await client.wait_for("agent_settled")
    kinds = [e["type"] for e in events]
    assert kinds.count("agent_settled") == 1 and kinds.count("agent_start") >= 1
    assert events[-1] == {"type": "agent_settled", "aborted": False}
    assert user_texts(fake_llm.requests[1]) == ["go", "queued work"]  # the aborted answer is left out


async def test_steering_mode_all_delivers_every_queued_message_at_once(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "done"}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        await client.send({"type": "set_steering_mode", "mode": "all"})
        bad = await client.send({"type": "set_steering_mode", "mode": "sometimes"})
        assert bad["success"] is False and "sometimes" in bad["error"]
        await client.send({"type": "steer", "message": "s1"})
        await client.send({"type": "steer", "message": "s2"})
        await client.prompt_and_wait("go")
    assert [user_texts(r) for r in fake_llm.requests] == [["go", "s1", "s2"]]


async def test_steer_while_idle_rides_with_the_next_prompt(agent_env, fake_llm, tmp_path):
    """Issue 10 point 3: steering is delivered before the next model call, the run's first one included."""
    fake_llm.set_script([{"text": "both seen"}, {"text": "second steer seen"}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        assert (await client.send({"type": "steer", "message": "s1"}))["data"] == {"disposition": "queued"}
        await client.send({"type": "steer", "message": "s2"})
        events = await client.prompt_and_wait("go")
        state = (await client.send({"type": "get_state"}))["data"]
    # one-at-a-time: s1 with the prompt, s2 before the next call
    assert [user_texts(r) for r in fake_llm.requests] == [["go", "s1"], ["go", "s1", "s2"]]
    users = [e["message"]["content"][0]["text"] for e in events
             if e["type"] == "message_end" and e["message"]["role"] == "user"]
    assert users == ["go", "s1", "s2"]
    assert state["pendingMessageCount"] == 0


async def test_a_prompt_sent_right_after_abort_is_not_cancelled_by_it(agent_env, fake_llm, tmp_path):
    """An `abort` stops only what came before it: a prompt in the same write is queued and continued."""
    fake_llm.set_script([{"text": "one two three four", "hang_after": 4, "hang_ms": 20000},
                         {"text": "Handled the next prompt."}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        await client.send({"type": "prompt", "message": "go"})
        await wait_for_text_delta(client)
        client.write_raw(b'{"id":"a","type":"abort"}\n'
                         b'{"id":"p1","type":"prompt","message":"next","streamingBehavior":"followUp"}\n')
        events = await client.wait_for("agent_settled", timeout=10)
    replies = {e["id"]: e for e in events if e["type"] == "response"}
    assert replies["p1"]["success"] is True, replies["p1"]
    assert replies["p1"]["data"] == {"disposition": "queued"} and replies["a"]["success"] is True
    assert events[-1] == {"type": "agent_settled", "aborted": False}
    assert user_texts(fake_llm.requests[1]) == ["go", "next"]
