"""End to end: what is said beside a streaming answer in ACP mode (docs/acp.md, "Updates"): the reply of a
command run at once (`/name`, `/export`) and status lines wait for the streaming message to end, and arrive as
a message of their own (their own `messageId`, a new paragraph), never inside the answer's words."""

from __future__ import annotations

import asyncio
import json

import pytest

from support.acp_client import AcpClient


def texts_by_message(client: AcpClient, session_id: str) -> list[tuple[str | None, str]]:
    """(messageId, joined text) of the agent's messages, in order, as an editor reading `messageId` shows them."""
    found: list[tuple[str | None, str]] = []
    for update in client.updates(session_id, "agent_message_chunk"):
        key, text = update.get("messageId"), update["content"]["text"]
        if found and found[-1][0] == key:
            found[-1] = (key, found[-1][1] + text)
        else:
            found.append((key, text))
    return found


def instant_request_id(client: AcpClient, text: str) -> int:
    """The id of the `session/prompt` request the client sent with `text`."""
    return next(m["id"] for direction, m in client.messages if direction == "out"
                and m.get("method") == "session/prompt" and m["params"]["prompt"][0].get("text") == text)


def assert_answered_after_its_reply(client: AcpClient, request_id: int, reply: str) -> None:
    """The answer to `request_id` came after the last update holding `reply` (ACP: a prompt's answer ends its
    turn's updates)."""
    incoming = client.incoming()
    answered = next(i for i, m in enumerate(incoming) if m.get("id") == request_id and "method" not in m)
    said = [i for i, m in enumerate(incoming) if m.get("method") == "session/update" and reply in json.dumps(m)]
    assert said and max(said) < answered, (said, answered)


@pytest.mark.parametrize("command, reply", [("/name Hello", "Session named Hello."),
                                            ("/export out.html", "Exported to ")])
async def test_an_instant_command_during_a_streaming_answer_replies_after_it(agent_env, project, fake_llm,
                                                                           command, reply):
    fake_llm.set_script([{"text": "w0 w1 w2 w3 w4 w5", "text_chunk_words": 1, "hang_after": 4}])
    client = await AcpClient.start(cwd=str(project), env=agent_env)
    await client.initialize()
    session_id = await client.new_session(str(project))
    turn = client.request_nowait("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]})
    await client.wait_for(lambda: fake_llm.requests and fake_llm.requests[0]["hanging"])
    instant = client.request_nowait("session/prompt", {"sessionId": session_id,
                                                       "prompt": [{"type": "text", "text": command}]})
    if command.startswith("/name"):  # the title is no aside: it is sent at once, the reply waits for the answer
        await client.wait_for(lambda: {"sessionUpdate": "session_info_update", "title": "Hello"}
                              in client.updates(session_id))
        assert not instant.done()  # and so does the command's own answer
    fake_llm.release_hangs()
    assert await instant == await turn == {"stopReason": "end_turn"}
    assert_answered_after_its_reply(client, instant_request_id(client, command), reply)

    messages = texts_by_message(client, session_id)
    assert [text for _, text in messages][0] == "w0 w1 w2 w3 w4 w5"  # the answer whole, nothing inside it
    assert len(messages) == 2 and messages[0][0] and messages[1][0] and messages[0][0] != messages[1][0]
    assert messages[1][1].startswith("\n\n" + reply)  # its own paragraph for editors that join every chunk
    joined = "".join(u["content"]["text"] for u in client.updates(session_id, "agent_message_chunk"))
    assert joined.startswith("w0 w1 w2 w3 w4 w5\n\n")
    if command.startswith("/name"):
        assert {"sessionUpdate": "session_info_update", "title": "Hello"} in client.updates(session_id)
    assert await client.close() == 0


async def test_a_bang_command_during_a_streaming_answer_is_drawn_after_it(agent_env, project, fake_llm):
    fake_llm.set_script([{"text": "w0 w1 w2 w3 w4 w5", "text_chunk_words": 1, "hang_after": 4}])
    client = await AcpClient.start(cwd=str(project), env=agent_env)
    await client.initialize()
    session_id = await client.new_session(str(project))
    turn = client.request_nowait("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]})
    await client.wait_for(lambda: fake_llm.requests and fake_llm.requests[0]["hanging"])
    bang = client.request_nowait("session/prompt", {"sessionId": session_id,
                                                    "prompt": [{"type": "text", "text": "!echo from-the-user"}]})
    fake_llm.release_hangs()
    assert await bang == await turn == {"stopReason": "end_turn"}
    assert_answered_after_its_reply(client, instant_request_id(client, "!echo from-the-user"), "from-the-user")
    kinds = [u["sessionUpdate"] for u in client.updates(session_id)
             if u["sessionUpdate"] in ("agent_message_chunk", "tool_call", "tool_call_update")]
    first_call = kinds.index("tool_call")
    assert "agent_message_chunk" not in kinds[first_call:]  # the answer's words all came before the call
    ends = [u for u in client.updates(session_id, "tool_call_update") if u.get("status") == "completed"]
    assert "from-the-user" in json.dumps(ends)
    assert await client.close() == 0


async def test_the_answer_of_a_queued_prompt_starts_its_own_paragraph_and_a_new_turn_does_not(agent_env, project,
                                                                                            fake_llm):
    fake_llm.set_script([{"text": "first", "hang_after": 3}, {"text": "second"}, {"text": "third"}])
    client = await AcpClient.start(cwd=str(project), env=agent_env)
    await client.initialize()
    session_id = await client.new_session(str(project))
    first = client.request_nowait("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "a"}]})
    await client.wait_for(lambda: fake_llm.requests and fake_llm.requests[0]["hanging"])
    second = client.request_nowait("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "b"}]})
    await client.request("session/list", {})  # answered in order: the second prompt has been queued
    fake_llm.release_hangs()
    assert await first == await second == {"stopReason": "end_turn"}
    assert await client.prompt(session_id, "c") == {"stopReason": "end_turn"}  # a turn of its own
    assert [text for _, text in texts_by_message(client, session_id)] == ["first", "\n\nsecond", "third"]
    assert await client.close() == 0


async def test_a_plugin_notification_during_streaming_thinking_waits_for_the_message(agent_env, project, fake_llm,
                                                                                     tmp_path):
    plugin = tmp_path / "notify.py"
    plugin.write_text(
        "def setup(plugin):\n"
        "    @plugin.on('message_update')\n"
        "    def on_update(event, ctx):\n"
        "        if 't2' in ((event.get('assistantMessageEvent') or {}).get('delta') or ''):\n"
        "            ctx.ui.notify('plugin says hi', 'info')\n")
    fake_llm.set_script([{"thinking": "t0 t1 t2 t3 t4", "text": "done", "thinking_deltas": 5}])
    client = await AcpClient.start(["-e", str(plugin)], cwd=str(project), env=agent_env)
    await client.initialize()
    session_id = await client.new_session(str(project))
    assert await asyncio.wait_for(client.prompt(session_id, "go"), 20) == {"stopReason": "end_turn"}
    thoughts = "".join(u["content"]["text"] for u in client.updates(session_id, "agent_thought_chunk"))
    assert thoughts.startswith("t0 t1 t2 t3 t4") and "plugin says hi" in thoughts
    assert await client.close() == 0


async def test_a_plugin_command_during_a_streaming_answer_is_answered_after_its_notice(agent_env, project, fake_llm):
    from e2e.test_acp_plugins import PLUGIN, shown

    fake_llm.set_script([{"text": "w0 w1 w2 w3 w4 w5", "text_chunk_words": 1, "hang_after": 4}])
    client = await AcpClient.start(["-e", PLUGIN], cwd=str(project), env=agent_env)
    await client.initialize()
    session_id = await client.new_session(str(project))
    turn = client.request_nowait("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]})
    await client.wait_for(lambda: fake_llm.requests and fake_llm.requests[0]["hanging"])
    echo = client.request_nowait("session/prompt", {"sessionId": session_id,
                                                    "prompt": [{"type": "text", "text": "/echo mid-stream"}]})
    await client.request("session/list", {})
    fake_llm.release_hangs()
    assert await echo == await turn == {"stopReason": "end_turn"}
    assert "echo: mid-stream" in shown(client, session_id)
    assert_answered_after_its_reply(client, instant_request_id(client, "/echo mid-stream"), "echo: mid-stream")
    assert [text for _, text in texts_by_message(client, session_id)][0] == "w0 w1 w2 w3 w4 w5"
    assert await client.close() == 0


async def test_a_plugin_command_outliving_the_run_it_was_sent_in_is_answered_when_it_ends(agent_env, project, fake_llm,
                                                                                         tmp_path):
    plugin = tmp_path / "later.py"
    plugin.write_text(
        "import asyncio\n"
        "ended = []\n"
        "def setup(plugin):\n"
        "    @plugin.on('agent_end')\n"
        "    def on_end(event, ctx):\n"
        "        for waiter in ended:\n"
        "            waiter.set_result(None)\n"
        "    @plugin.command('later')\n"
        "    async def later(args, ctx):\n"
        "        ended.append(asyncio.get_running_loop().create_future())\n"
        "        await ended[-1]  # the run it was sent in is over (its agent_settled comes now)\n"
        "        await asyncio.sleep(0.3)  # and the command has more to do: the scenario, not a synchronisation\n"
        "        ctx.ui.notify('later: the run is over')\n")
    fake_llm.set_script([{"text": "w0 w1 w2 w3", "text_chunk_words": 1, "hang_after": 3}])
    client = await AcpClient.start(["-e", str(plugin)], cwd=str(project), env=agent_env)
    await client.initialize()
    session_id = await client.new_session(str(project))
    turn = client.request_nowait("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]})
    await client.wait_for(lambda: fake_llm.requests and fake_llm.requests[0]["hanging"])
    later = client.request_nowait("session/prompt", {"sessionId": session_id,
                                                     "prompt": [{"type": "text", "text": "/later"}]})
    await client.request("session/list", {})  # the command has started
    fake_llm.release_hangs()
    assert await later == await turn == {"stopReason": "end_turn"}
    assert_answered_after_its_reply(client, instant_request_id(client, "/later"), "later: the run is over")
    assert await client.close() == 0
