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
    assert await client.prompt(session_id, command) == {"stopReason": "end_turn"}
    fake_llm.release_hangs()
    assert await turn == {"stopReason": "end_turn"}

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
    assert await client.prompt(session_id, "!echo from-the-user") == {"stopReason": "end_turn"}  # it ran at once
    fake_llm.release_hangs()
    assert await turn == {"stopReason": "end_turn"}
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
