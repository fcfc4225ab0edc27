"""UserBash against real shells and a real AgentSession (faux model, session file in tmp_path), and the
rendering of `bashExecution` messages into the model's context."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from agent_forge.ai.providers.faux import FauxResponse, faux_requests, set_faux_responses
from agent_forge.coding.errors import CommandError
from agent_forge.coding.factory import SessionOptions, create_session
from agent_forge.coding.messages import bash_execution_text, convert_to_llm
from agent_forge.coding.session.store import SessionStore
from agent_forge.coding.tools.procgroup import group_alive


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def faux_key(faux):
    return faux.key


@pytest.fixture
def session(tmp_path, project, faux):
    session = create_session(SessionOptions(cwd=str(project), agent_dir=tmp_path / "agent",
                                            session_dir=str(tmp_path / "sessions"), tools=[], stream_fn=faux.stream))
    session.agent.model = faux.model()
    yield session
    session.store.close()


def stored_messages(session) -> list[dict]:
    return [json.loads(line).get("message") for line in Path(session.store.path).read_text().splitlines()
            if json.loads(line)["type"] == "message"]


async def test_result_and_recorded_message(session, project):
    (project / "marker.txt").write_text("x")
    chunks: list[str] = []
    result = await session.user_bash.run("ls; echo oops >&2; exit 3", on_chunk=chunks.append)
    assert result == {"output": "marker.txt\noops\n", "exitCode": 3, "cancelled": False, "truncated": False}
    assert "".join(chunks) == "marker.txt\noops\n"
    message = session.messages[-1]
    assert {k: v for k, v in message.items() if k != "timestamp"} == {
        "role": "bashExecution", "command": "ls; echo oops >&2; exit 3", "output": "marker.txt\noops\n",
        "exitCode": 3, "cancelled": False, "truncated": False, "fullOutputPath": None}
    assert isinstance(message["timestamp"], int)
    assert stored_messages(session) == [message]


async def test_truncated_output_keeps_the_full_text_in_a_file(session):
    chunks: list[str] = []
    result = await session.user_bash.run("seq 1 30000", on_chunk=chunks.append)
    full = "".join(f"{i}\n" for i in range(1, 30001))
    assert result["truncated"] is True and result["exitCode"] == 0
    assert result["output"].endswith("\n30000\n") and len(result["output"].splitlines()) <= 2000
    assert Path(result["fullOutputPath"]).read_text() == full
    assert "".join(chunks) == full  # updates carry everything, not just the tail
    assert session.messages[-1]["fullOutputPath"] == result["fullOutputPath"]
    os.unlink(result["fullOutputPath"])


async def test_abort_stops_the_process_group_and_records_the_partial_output(session, gate):
    started = asyncio.Event()
    run = asyncio.ensure_future(session.user_bash.run(f"echo $$; {gate.wait}; sleep 30",
                                                      on_chunk=lambda _: started.set()))
    await started.wait()
    assert session.user_bash.running == 1
    gate.open()  # the shell moves on to `sleep 30`; abort must stop it and the shell alike
    await session.user_bash.abort()
    assert run.done()  # abort() returns only once the command has been stopped and recorded
    result = run.result()
    assert result["cancelled"] is True and result["exitCode"] is None
    assert not group_alive(int(result["output"].split()[0]))
    assert session.messages[-1]["cancelled"] is True and session.user_bash.running == 0


async def test_abort_with_nothing_running_returns(session):
    await session.user_bash.abort()
    assert session.user_bash.running == 0 and session.messages == []


async def test_two_commands_run_at_once_and_abort_stops_both(session, gate):
    seen: list[str] = []
    both = asyncio.Event()

    def chunk(text: str) -> None:
        seen.append(text)
        if len(seen) == 2:
            both.set()

    runs = [asyncio.ensure_future(session.user_bash.run(f"echo {n}; {gate.wait}; sleep 30", on_chunk=chunk))
            for n in ("one", "two")]
    await both.wait()
    assert session.user_bash.running == 2
    await session.user_bash.abort()
    assert [r.result()["cancelled"] for r in runs] == [True, True]
    assert sorted(m["output"] for m in session.messages) == ["one\n", "two\n"]


@pytest.mark.parametrize("command, error", [
    ("", "The command is empty"), ("   \n", "The command is empty"), ("echo a\0b", "contains a NUL character"),
    ("echo \ud800", "not valid Unicode"),
])
async def test_bad_commands_are_rejected_without_a_message(session, command, error):
    with pytest.raises(CommandError, match=error) as raised:
        await session.user_bash.run(command)
    assert "Field" not in str(raised.value)  # the session's words; RPC field names are modes/rpc/validation.py's
    assert session.messages == [] and session.user_bash.running == 0


async def test_missing_working_directory_is_a_clear_error(session, project):
    project.rmdir()
    with pytest.raises(CommandError, match=f"working directory {project} does not exist"):
        await session.user_bash.run("echo hi")
    assert session.messages == []


async def test_result_finishing_mid_run_is_held_until_the_run_settles(session, faux_key):
    release = asyncio.Event()
    set_faux_responses([FauxResponse(text="thinking about it", chunk_size=4, hang_after=1, release=release),
                        FauxResponse(text="second")], key=faux_key)
    session.prompt("hello")
    assert session.is_streaming
    result = await session.user_bash.run("echo during")
    assert result["output"] == "during\n"
    assert [m["role"] for m in session.messages] == ["user"]  # not inside the running turn
    release.set()
    await session.wait_for_idle()
    assert [m["role"] for m in session.messages] == ["user", "assistant", "bashExecution"]
    assert [m["role"] for m in stored_messages(session)] == ["user", "assistant", "bashExecution"]
    await session.prompt_and_wait("next")
    context = faux_requests(faux_key)[-1].context["messages"]
    texts = [block["text"] for m in context if m["role"] == "user" for block in m["content"]]
    assert texts == ["hello", "Ran `echo during`\n```\nduring\n```", "next"]


async def test_recorded_messages_survive_reopening_the_session(session):
    await session.user_bash.run("echo kept", exclude_from_context=True)
    path = session.store.path
    session.store.close()
    reopened = SessionStore.open(path)
    try:
        [message] = reopened.build_context().messages
    finally:
        reopened.close()
    assert message["role"] == "bashExecution" and message["output"] == "kept\n"
    assert message["excludeFromContext"] is True
    assert convert_to_llm([message]) == []


def _message(**fields):
    return {"role": "bashExecution", "command": "make", "output": "ok\n", "exitCode": 0, "cancelled": False,
            "truncated": False, "fullOutputPath": None, "timestamp": 1, **fields}


@pytest.mark.parametrize("fields, text", [
    ({}, "Ran `make`\n```\nok\n```"),
    ({"output": "a\nb"}, "Ran `make`\n```\na\nb\n```"),
    ({"output": ""}, "Ran `make`\n(no output)"),
    ({"exitCode": 2}, "Ran `make`\n```\nok\n```\n\nCommand exited with code 2"),
    ({"cancelled": True, "exitCode": None}, "Ran `make`\n```\nok\n```\n\n(command cancelled)"),
    ({"truncated": True, "fullOutputPath": "/tmp/f.log", "exitCode": 1},
     "Ran `make`\n```\nok\n```\n\nCommand exited with code 1\n\n[Output truncated. Full output: /tmp/f.log]"),
    ({"output": "x ```` y\n"}, "Ran `make`\n`````\nx ```` y\n`````"),
])
def test_rendering_for_the_model(fields, text):
    assert bash_execution_text(_message(**fields)) == text
    [converted] = convert_to_llm([_message(**fields)])
    assert converted["role"] == "user" and converted["content"] == [{"type": "text", "text": text}]
