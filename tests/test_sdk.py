"""The SDK: the runnable example, and `create_agent_session` driven in-process with the scripted faux model."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import agent_forge
from agent_forge.ai.providers import faux
from agent_forge.coding.errors import CommandError
from agent_forge.sdk import (
    AgentSession,
    FauxResponse,
    create_agent_session,
    faux_model,
    faux_requests,
    set_faux_responses,
)

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sdk_basic.py"


def test_example_runs_offline_and_prints_the_answer(tmp_path):
    env = {k: v for k, v in os.environ.items() if not (k.endswith("_API_KEY") or k.startswith("AGENT_FORGE_"))}
    env.update(HOME=str(tmp_path), AGENT_FORGE_DIR=str(tmp_path / "agent"))
    result = subprocess.run([sys.executable, str(EXAMPLE)], cwd=tmp_path, env=env, capture_output=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().splitlines() == [
        "Let me read your notes.",
        "[tool read {'path': 'notes.txt'}]",
        "[tool read done]",
        "Your notes say: buy milk, call Ada.",
        "answer: Your notes say: buy milk, call Ada.",
        "messages: 4, tool calls: 1, tokens: 327",
    ]
    assert result.stderr == b""
    assert not (tmp_path / "agent").exists()  # no_session: nothing written, settings only read


@pytest.fixture
def key(request) -> str:
    """A faux script key of this test's own (the faux queues are process-wide)."""
    return request.node.name


def make_session(tmp_path: Path, key: str, **options) -> AgentSession:
    options.setdefault("session_dir", str(tmp_path / "sessions"))
    return create_agent_session(cwd=str(tmp_path), model=faux_model(key=key), agent_dir=tmp_path / "agent",
                                **options)


def first_event(session: AgentSession, event_type: str) -> asyncio.Future:
    future = asyncio.get_running_loop().create_future()

    def listener(event):
        if event["type"] == event_type and not future.done():
            future.set_result(event)

    session.subscribe(listener)
    return future


def user_texts(messages) -> list[str]:
    return [m["content"][0]["text"] for m in messages if m["role"] == "user"]


async def test_prompt_streams_events_and_saves_the_session(tmp_path, key):
    set_faux_responses([FauxResponse(text="Hi there.", input_tokens=40, output_tokens=3)], key=key)
    session = make_session(tmp_path, key, name="sdk run")
    events: list[dict] = []
    unsubscribe = session.subscribe(events.append)
    await session.prompt_and_wait("hello")
    unsubscribe()
    await session.close()
    types = [e["type"] for e in events]
    assert types[:2] == ["agent_start", "turn_start"] and types[-2:] == ["agent_end", "agent_settled"]
    assert session.last_assistant_text() == "Hi there."
    state = session.get_state()
    assert state["sessionName"] == "sdk run" and state["model"]["api"] == "faux" and state["messageCount"] == 2
    assert session.get_session_stats()["tokens"]["total"] == 43
    lines = [json.loads(line) for line in Path(state["sessionFile"]).read_text().splitlines()]
    assert [line["type"] for line in lines] == ["session", "model_change", "thinking_level_change",
                                                "session_info", "message", "message"]
    assert user_texts(faux_requests(key)[0].context["messages"]) == ["hello"]


async def test_unsubscribed_listeners_hear_nothing_and_a_failing_one_breaks_nothing(tmp_path, key, capfd):
    set_faux_responses([FauxResponse(text="one"), FauxResponse(text="two")], key=key)
    session = make_session(tmp_path, key, no_session=True)
    heard: list[str] = []
    unsubscribe = session.subscribe(lambda e: heard.append(e["type"]))
    session.subscribe(lambda e: 1 / 0)
    await session.prompt_and_wait("first")
    unsubscribe()
    count = len(heard)
    await session.prompt_and_wait("second")
    assert count > 0 and len(heard) == count
    assert session.last_assistant_text() == "two"
    assert "ZeroDivisionError" in capfd.readouterr().err


async def test_steer_and_follow_up_while_streaming(tmp_path, key):
    release = asyncio.Event()
    set_faux_responses([FauxResponse(text="working on it", chunk_size=2, hang_after=1, release=release),
                        FauxResponse(text="steered"), FauxResponse(text="followed up")], key=key)
    session = make_session(tmp_path, key, no_session=True)
    streaming = first_event(session, "message_update")
    assert session.prompt("start") == "started"
    await streaming
    assert session.is_streaming and session.get_state()["isStreaming"] is True
    with pytest.raises(CommandError, match="already processing"):
        session.prompt("no behaviour given")
    assert session.follow_up("then this") == "queued"
    assert session.steer("change course") == "queued"
    assert session.get_state()["pendingMessageCount"] == 2
    release.set()
    await session.wait_for_idle()
    requests = faux_requests(key)
    assert [user_texts(r.context["messages"]) for r in requests] == [
        ["start"], ["start", "change course"], ["start", "change course", "then this"]]
    assert session.last_assistant_text() == "followed up"


async def test_abort_ends_the_run_and_keeps_the_partial_answer(tmp_path, key):
    set_faux_responses([FauxResponse(text="never finished", chunk_size=3, hang_after=1)], key=key)
    session = make_session(tmp_path, key, no_session=True)
    settled = first_event(session, "agent_settled")
    streaming = first_event(session, "message_update")
    session.prompt("go")
    await streaming
    await session.abort()
    assert (await settled)["aborted"] is True
    assert session.messages[-1]["stopReason"] == "aborted" and not session.is_streaming


async def test_stream_fn_replaces_the_provider_registry(tmp_path, key):
    seen: list[str] = []

    async def recording_stream(model, context, options):
        seen.append(model["id"])
        async for event in faux.stream(model, context, options):
            yield event

    set_faux_responses([FauxResponse(text="via custom transport")], key=key)
    session = make_session(tmp_path, key, no_session=True, stream_fn=recording_stream)
    await session.prompt_and_wait("hi")
    assert seen == ["faux-1"] and session.last_assistant_text() == "via custom transport"


async def test_new_session_from_the_sdk(tmp_path, key):
    set_faux_responses([FauxResponse(text="a"), FauxResponse(text="b")], key=key)
    session = make_session(tmp_path, key)
    await session.prompt_and_wait("old")
    old = session.get_state()
    assert await session.new_session(parent_session=old["sessionFile"]) is False
    assert session.messages == [] and session.get_state()["sessionId"] != old["sessionId"]
    await session.prompt_and_wait("new")
    assert user_texts(faux_requests(key)[1].context["messages"]) == ["new"]
    header = json.loads(Path(session.get_state()["sessionFile"]).read_text().splitlines()[0])
    assert header["parentSession"] == old["sessionFile"]
    await session.close()


async def test_a_closed_session_refuses_prompts_and_leaves_its_file_alone(tmp_path, key):
    set_faux_responses([FauxResponse(text="only answer"), FauxResponse(text="never sent")], key=key)
    session = make_session(tmp_path, key)
    await session.prompt_and_wait("before close")
    path = Path(session.get_state()["sessionFile"])
    await session.close()
    successor = make_session(tmp_path, key, session_file=str(path))  # the file is free for another session now
    saved = path.read_bytes()
    for send in (lambda: session.prompt("after close"), lambda: session.steer("after close"),
                 lambda: session.follow_up("after close")):
        with pytest.raises(CommandError, match="session is closed"):
            send()
    with pytest.raises(CommandError, match="session is closed"):
        await session.submit("after close")
    with pytest.raises(CommandError, match="session is closed"):
        await session.prompt_and_wait("after close")
    assert not session.is_streaming and len(faux_requests(key)) == 1 and path.read_bytes() == saved
    await successor.close()
    terminated = make_session(tmp_path, key, no_session=True)
    await terminated.terminate()
    with pytest.raises(CommandError, match="session is closed"):
        terminated.prompt("after terminate")


def test_package_exports_the_factory_lazily():
    assert agent_forge.create_agent_session is create_agent_session


def test_bad_options_are_clear_errors(tmp_path):
    common = {"cwd": str(tmp_path), "agent_dir": tmp_path / "agent", "no_session": True}
    with pytest.raises(TypeError, match="colour"):
        create_agent_session(colour="blue", **common)
    with pytest.raises(CommandError, match="Invalid thinking level"):
        create_agent_session(model=faux_model(), thinking="extreme", **common)
    with pytest.raises(CommandError, match="empty"):
        create_agent_session(model=faux_model(), name=" ", **common)
    with pytest.raises(CommandError, match="no-such-model"):
        create_agent_session(model="no-such-model", **common)


async def test_sessions_are_saved_under_the_agent_dir_given(tmp_path, key, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_FORGE_SESSION_DIR", raising=False)
    monkeypatch.delenv("AGENT_FORGE_DIR", raising=False)
    set_faux_responses([FauxResponse(text="saved")], key=key)
    session = create_agent_session(cwd=str(tmp_path), model=faux_model(key=key), agent_dir=tmp_path / "agent")
    await session.prompt_and_wait("hi")
    session_file = session.get_state()["sessionFile"]
    await session.close()
    assert Path(session_file).is_relative_to(tmp_path / "agent" / "sessions") and Path(session_file).is_file()
    assert not (tmp_path / "home" / ".agent-forge").exists()


def test_tools_by_name_and_clear_errors_for_wrong_tools(tmp_path):
    common = {"cwd": str(tmp_path), "agent_dir": tmp_path / "agent", "no_session": True, "model": faux_model()}
    session = create_agent_session(tools=["read", "bash"], **common)
    assert [tool.name for tool in session.agent.tools] == ["read", "bash"]
    with pytest.raises(TypeError, match=r"got str \(for names, pass a list: \['read', 'bash'\]\)"):
        create_agent_session(tools="read,bash", **common)
    with pytest.raises(ValueError, match=r"Unknown tool 'nonexistent'; known tools: read, .*bash"):
        create_agent_session(tools=["nonexistent"], **common)
    with pytest.raises(TypeError, match="not a mix"):
        create_agent_session(tools=["read", session.agent.tools[0]], **common)
    with pytest.raises(TypeError, match=r"tools\[0\] is not a tool"):
        create_agent_session(tools=[42], **common)


def test_methods_that_need_an_event_loop_refuse_at_once_outside_one(tmp_path, key, recwarn):
    set_faux_responses([FauxResponse(text="first answer")], key=key)
    session = make_session(tmp_path, key)
    calls = {"prompt": lambda: session.prompt("hi"), "submit": lambda: session.submit("hi"),
             "new_session": lambda: session.new_session(), "switch_session": lambda: session.switch_session("x"),
             "fork": lambda: session.fork("x"), "clone": lambda: session.clone(),
             "abort": lambda: session.begin_abort()}
    for name, call in calls.items():
        with pytest.raises(RuntimeError, match=f"AgentSession: {name} needs a running asyncio event loop"):
            call()
    assert not session.is_streaming and session.messages == [] and not session.intake.holds_prompts
    assert session.get_state()["sessionFile"] is None or not Path(session.get_state()["sessionFile"]).exists()
    asyncio.run(asyncio.wait_for(session.prompt_and_wait("first"), 30))  # the session is as it was
    assert session.last_assistant_text() == "first answer" and user_texts(session.messages) == ["first"]
    asyncio.run(session.close())
    gc.collect()  # a coroutine made and never started warns when collected
    assert not [w for w in recwarn if "never awaited" in str(w.message)]


async def test_a_session_file_open_in_this_process_says_so(tmp_path, key):
    set_faux_responses([FauxResponse(text="saved")], key=key)
    first = make_session(tmp_path, key)
    await first.prompt_and_wait("hi")
    path = first.get_state()["sessionFile"]
    with pytest.raises(CommandError) as caught:
        make_session(tmp_path, key, session_file=path)
    assert f"already open in this process (pid {os.getpid()}): close the session that has it open first" \
        in str(caught.value) and "another agent-forge process" not in str(caught.value)
    await first.close()
    second = make_session(tmp_path, key, session_file=path)  # free once the first closed
    assert user_texts(second.messages) == ["hi"]
    await second.close()


async def test_listeners_hear_level_and_name_changes_a_tree_move_included(tmp_path, key):
    set_faux_responses([FauxResponse(text="one")], key=key)
    session = create_agent_session(cwd=str(tmp_path), model=faux_model(key=key, reasoning=True), thinking="low",
                                   name="sdk", session_dir=str(tmp_path / "sessions"), agent_dir=tmp_path / "agent")
    heard: list[dict] = []
    session.subscribe(lambda e: heard.append(e) if e["type"].endswith(("level_changed", "info_changed")) else None)
    session.set_thinking_level("high")
    await session.prompt_and_wait("hello")
    answer = session.store.branch()[-1]["id"]
    session.set_session_name("later")
    session.set_thinking_level("high")  # unchanged: nothing
    session.model_control.set_thinking_level("medium")
    assert heard == [{"type": "thinking_level_changed", "level": "high"},
                     {"type": "session_info_changed", "name": "later"},
                     {"type": "thinking_level_changed", "level": "medium"}]  # none for the start-up values
    heard.clear()
    await session.navigate_tree(answer)  # back before the rename and the last level change
    await session.close()
    assert heard == [{"type": "session_info_changed", "name": "sdk"},
                     {"type": "thinking_level_changed", "level": "high"}]
