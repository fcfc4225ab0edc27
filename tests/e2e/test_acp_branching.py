"""End to end: `/fork`, `/clone` and `/tree` in ACP mode (docs/acp.md, "Branching"), driven by the official
Python SDK's client side with every message checked against the official schema (`SchemaObserver`), and their
bad input through the raw client."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from support.acp_client import AcpClient
from support.acp_schema import SchemaObserver
from support.lazy_import import lazy_module, skip_unless_installed

pytestmark = skip_unless_installed("acp")
acp = lazy_module("acp")  # imported when a test runs, not at collection (support/lazy_import.py)
schema = lazy_module("acp.schema")


class RecordingClient:
    """Records `session/update`s; approves what it is asked."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(self, options: Any, session_id: str, tool_call: Any, **kwargs: Any) -> Any:
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(outcome="selected", option_id=options[0].option_id))

    def texts(self, session_id: str, kind: type | None = None) -> list[str]:
        """Texts of this session's updates of `kind` (default: the agent's message chunks)."""
        kind = kind or schema.AgentMessageChunk
        return [u.content.text for s, u in self.updates if s == session_id and isinstance(u, kind)]

    def forget(self) -> None:
        self.updates.clear()


def spawn(client: RecordingClient, observer: SchemaObserver, agent_env: dict, project: Path):
    return acp.spawn_agent_process(client, sys.executable, "-m", "agent_forge", "--mode", "acp", env=agent_env,
                                   cwd=str(project), transport_kwargs={"shutdown_timeout": 20}, observers=[observer])


async def say(conn: Any, session_id: str, text: str) -> str:
    response = await conn.prompt(session_id=session_id, prompt=[schema.TextContentBlock(type="text", text=text)])
    return response.stop_reason


def user_texts(request: dict) -> list[str]:
    return [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
            for m in request["body"]["messages"] if m["role"] == "user"]


async def test_fork_and_clone_make_new_sessions_the_client_loads_while_this_one_stays(agent_env, project, fake_llm):
    fake_llm.set_script([{"text": "one"}, {"text": "two"}, {"text": "three"}, {"text": "in the fork"}])
    client, observer = RecordingClient(), SchemaObserver()
    async with spawn(client, observer, agent_env, project) as (conn, process):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session_id = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        assert await say(conn, session_id, "first question") == "end_turn"
        commands = [u for _, u in client.updates if isinstance(u, schema.AvailableCommandsUpdate)][-1]
        offered = {c.name: c for c in commands.available_commands}
        assert {"fork", "clone", "tree"} <= set(offered) and offered["clone"].input is None  # it takes no input
        assert offered["fork"].input is not None and offered["tree"].input is not None
        assert await say(conn, session_id, "second question") == "end_turn"

        assert await say(conn, session_id, "/fork") == "end_turn"
        listing = client.texts(session_id)[-1]
        assert "1. first question" in listing and "2. second question" in listing and "/fork N" in listing
        assert await say(conn, session_id, "/fork 2") == "end_turn"
        forked = client.texts(session_id)[-1]
        assert "second question" in forked and "this session is unchanged" in forked
        assert await say(conn, session_id, "/clone") == "end_turn"
        cloned = client.texts(session_id)[-1]

        listed = {s.session_id for s in (await conn.list_sessions(cwd=str(project))).sessions}
        assert len(listed) == 3 and session_id in listed
        fork_id = next(i for i in listed if f"`{i}`" in forked)
        clone_id = next(i for i in listed if f"`{i}`" in cloned)
        assert await say(conn, session_id, "third question") == "end_turn"  # this session goes on as it was
        assert user_texts(fake_llm.requests[-1]) == ["first question", "second question", "third question"]

        client.forget()
        await conn.load_session(cwd=str(project), session_id=fork_id, mcp_servers=[])
        assert client.texts(fork_id, schema.UserMessageChunk) == ["first question"]
        assert client.texts(fork_id) == ["one"]
        assert await say(conn, fork_id, "another second") == "end_turn"
        assert user_texts(fake_llm.requests[-1]) == ["first question", "another second"]
        client.forget()
        await conn.load_session(cwd=str(project), session_id=clone_id, mcp_servers=[])
        assert client.texts(clone_id, schema.UserMessageChunk) == ["first question", "second question"]
    assert await asyncio.wait_for(process.wait(), 20) == 0
    assert observer.count > 20 and not observer.problems, "\n".join(observer.problems)


async def test_tree_lists_the_session_tree_and_moves_within_the_same_session(agent_env, project, fake_llm):
    fake_llm.set_script([{"text": "answer one"}, {"text": "answer two"}, {"text": "answer three"}])
    client, observer = RecordingClient(), SchemaObserver()
    async with spawn(client, observer, agent_env, project) as (conn, process):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session_id = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        await say(conn, session_id, "first question")
        await say(conn, session_id, "second question")
        assert await say(conn, session_id, "/tree") == "end_turn"
        rows = client.texts(session_id)[-1]
        assert "1. user: first question" in rows and "2. assistant: answer one" in rows
        assert "4. assistant: answer two (here)" in rows
        assert await say(conn, session_id, "/tree 2") == "end_turn"
        moved = client.texts(session_id)[-1]
        assert "continues from entry 2. assistant: answer one" in moved and "session/load" in moved
        usage = [u for s, u in client.updates if isinstance(u, schema.UsageUpdate)]
        assert usage, "the context use of the new branch is told"
        await say(conn, session_id, "other second")
        assert user_texts(fake_llm.requests[-1]) == ["first question", "other second"]
        listed = (await conn.list_sessions(cwd=str(project))).sessions
        assert [s.session_id for s in listed] == [session_id]  # the same session file, another branch
        await say(conn, session_id, "/tree")
        rows = client.texts(session_id)[-1]
        assert "second question" in rows and "other second" in rows and "answer three (here)" in rows
    assert await asyncio.wait_for(process.wait(), 20) == 0
    assert not observer.problems, "\n".join(observer.problems)


async def test_branching_commands_refuse_bad_input_with_a_message(agent_env, project, fake_llm):
    fake_llm.set_script([{"text": "one"}])
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    await client.initialize()
    session_id = await client.new_session(str(project))

    async def answer(text: str) -> str:
        assert await client.prompt(session_id, text) == {"stopReason": "end_turn"}
        return client.updates(session_id, "agent_message_chunk")[-1]["content"]["text"]

    assert "/clone failed: Nothing to copy yet" in await answer("/clone")
    assert "/fork failed: there is no message of yours" in await answer("/fork 1")
    assert "/tree failed: the session has no messages yet" in await answer("/tree")
    await client.prompt(session_id, "hello")
    assert "/fork failed: no entry '9'" in await answer("/fork 9")
    assert "/fork failed: no entry" in await answer("/fork 1; rm -rf x")
    assert "/fork failed: Nothing to copy yet" in await answer("/fork 1")  # nothing before the first message
    assert "/tree failed: unknown /tree option 'bogus'" in await answer("/tree 1 bogus")
    assert "/clone failed: /clone takes no arguments" in await answer("/clone now")
    assert len((await client.request("session/list", {"cwd": str(project)}))["sessions"]) == 1
    assert await client.close() == 0


async def test_no_session_refuses_fork_and_clone(agent_env, project, fake_llm):
    fake_llm.set_script([{"text": "one"}])
    client = await AcpClient.start(["--no-session"], cwd=str(project), env=agent_env)
    await client.initialize()
    session_id = await client.new_session(str(project))
    await client.prompt(session_id, "hello")
    await client.prompt(session_id, "/clone")
    assert "--no-session" in client.updates(session_id, "agent_message_chunk")[-1]["content"]["text"]
    assert await client.close() == 0


async def two_questions_asked(agent_env: dict[str, str], project: Path) -> tuple[AcpClient, str]:
    """A client whose new session has asked "first question" and "second question"; (client, session id)."""
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    await client.initialize()
    session_id = await client.new_session(str(project))
    await client.prompt(session_id, "first question")
    await client.prompt(session_id, "second question")
    return client, session_id


async def test_a_cancelled_tree_summary_answers_cancelled_and_stays_on_the_branch(agent_env, project, fake_llm):
    fake_llm.set_script([{"text": "answer one"}, {"text": "answer two"}, {"text": "summary", "hang_after": 0},
                         {"text": "after"}])
    client, session_id = await two_questions_asked(agent_env, project)
    reply = client.request_nowait("session/prompt", {"sessionId": session_id,
                                                     "prompt": [{"type": "text", "text": "/tree 2 summarize"}]})
    await asyncio.to_thread(fake_llm.wait_for_requests, 3)
    client.notify("session/cancel", {"sessionId": session_id})
    assert await asyncio.wait_for(reply, 1.0) == {"stopReason": "cancelled"}
    await client.prompt(session_id, "third question")
    assert user_texts(fake_llm.requests[-1]) == ["first question", "second question", "third question"]
    assert await client.close() == 0


async def answers_of(client: AcpClient, session_id: str, text: str) -> str:
    assert await client.prompt(session_id, text) == {"stopReason": "end_turn"}
    return client.updates(session_id, "agent_message_chunk")[-1]["content"]["text"]


async def test_tree_to_a_user_message_moves_to_before_it_and_says_it_was_not_resent(agent_env, project, fake_llm):
    fake_llm.set_script([{"text": "answer one"}, {"text": "answer two"}, {"text": "answer other"},
                         {"text": "answer fresh"}])
    client, session_id = await two_questions_asked(agent_env, project)
    said = await answers_of(client, session_id, "/tree 3")  # 3. user: second question
    assert "continues from before entry 3. user: second question" in said
    assert 'your message "second question" was not sent again' in said
    assert len(fake_llm.requests) == 2  # nothing was re-sent
    await client.prompt(session_id, "other second")
    assert user_texts(fake_llm.requests[-1]) == ["first question", "other second"]
    said = await answers_of(client, session_id, "/tree 1")  # the first message: nothing before it
    assert 'your message "first question" was not sent again' in said
    await client.prompt(session_id, "fresh start")
    assert user_texts(fake_llm.requests[-1]) == ["fresh start"]
    rows = await answers_of(client, session_id, "/tree")
    assert "first question" in rows and "fresh start" in rows and "answer fresh (here)" in rows
    assert await client.close() == 0


async def test_a_tree_sent_during_a_tree_summary_waits_for_it(agent_env, project, fake_llm):
    fake_llm.set_script([{"text": "answer one"}, {"text": "answer two"}, {"text": "the summary", "hang_after": 0},
                         {"text": "after"}])
    client, session_id = await two_questions_asked(agent_env, project)
    first = client.request_nowait("session/prompt", {"sessionId": session_id,
                                                     "prompt": [{"type": "text", "text": "/tree 2 summarize"}]})
    await asyncio.to_thread(fake_llm.wait_for_requests, 3)
    second = client.request_nowait("session/prompt", {"sessionId": session_id,
                                                      "prompt": [{"type": "text", "text": "/tree 4"}]})
    listing = client.request_nowait("session/prompt", {"sessionId": session_id,
                                                       "prompt": [{"type": "text", "text": "/tree"}]})
    await client.request("session/list", {"cwd": str(project)})  # answered in order: both commands are in
    assert not (first.done() or second.done() or listing.done())
    fake_llm.release_hangs()
    assert await asyncio.wait_for(first, 20) == {"stopReason": "end_turn"}
    assert await asyncio.wait_for(second, 20) == {"stopReason": "end_turn"}
    assert await asyncio.wait_for(listing, 20) == {"stopReason": "end_turn"}
    texts = [u["content"]["text"] for u in client.updates(session_id, "agent_message_chunk")]
    moved, moved_again, rows = texts[-3:]
    assert "continues from entry 2" in moved and "summarised" in moved
    assert "failed" not in moved_again and "continues from entry 4." in moved_again  # numbered after the summary
    assert "assistant: answer two" in moved_again
    assert "answer two (here)" in rows and "branch summary: the summary" in rows
    await client.prompt(session_id, "third question")
    assert user_texts(fake_llm.requests[-1]) == ["first question", "second question", "third question"]
    assert await client.close() == 0


@pytest.mark.parametrize("number", ["٣", "３", "²", "۳", "3\u200b"])
async def test_only_ascii_digits_are_numbers_in_branching_commands(agent_env, project, fake_llm, number):
    fake_llm.set_script([{"text": "one"}, {"text": "two"}])
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    await client.initialize()
    session_id = await client.new_session(str(project))
    await client.prompt(session_id, "hello")
    await client.prompt(session_id, "again")
    assert f"/tree failed: no entry {number!r}" in await answers_of(client, session_id, f"/tree {number}")
    assert "/fork failed: no entry" in await answers_of(client, session_id, f"/fork {number}")
    assert "answer" not in await answers_of(client, session_id, "/tree 3")  # ASCII 3 still works
    assert len(fake_llm.requests) == 2
    assert await client.close() == 0
