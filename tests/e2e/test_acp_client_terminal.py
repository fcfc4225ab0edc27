"""End to end: with the client's `terminal` capability, bash runs in the editor's terminals
(`terminal/create`, `wait_for_exit`, `output`, `kill`, `release`) and the tool call embeds the terminal."""

from __future__ import annotations

import asyncio
import json

import pytest

from support.acp_client import AcpClient


def tool_texts(request: dict) -> list[str]:
    return [m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
            for m in request["body"]["messages"] if m["role"] == "tool"]


async def test_bash_runs_in_the_editors_terminal_and_is_embedded(agent_env, project, fake_llm):
    fake_llm.set_script([
        {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "make test"}}]},
        {"text": "Tests fail."},
    ])
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    client.on_request.update({
        "terminal/create": lambda params: {"terminalId": "term-1"},
        "terminal/wait_for_exit": lambda params: {"exitCode": 2, "signal": None},
        "terminal/output": lambda params: {"output": "\x1b[31m2 failed\x1b[0m\n", "truncated": False},
        "terminal/release": lambda params: {},
    })
    await client.initialize(terminal=True)
    session_id = await client.new_session(str(project))
    assert await client.prompt(session_id, "run the tests") == {"stopReason": "end_turn"}
    [created] = client.requests("terminal/create")
    assert created == {"sessionId": session_id, "command": "bash", "args": ["-c", "make test"],
                       "cwd": str(project), "outputByteLimit": created["outputByteLimit"]}
    assert client.requests("terminal/release") == [{"sessionId": session_id, "terminalId": "term-1"}]
    updates = [u for u in client.updates(session_id, "tool_call_update") if u["toolCallId"] == "b1"]
    assert {"type": "terminal", "terminalId": "term-1"} in updates[1]["content"]
    assert updates[-1]["status"] == "failed"
    assert updates[-1]["content"] == [{"type": "terminal", "terminalId": "term-1"}]
    [result] = tool_texts(fake_llm.requests[1])
    assert "2 failed" in result and "\x1b" not in result and "\\u001b" not in result
    assert "Command exited with code 2" in result
    assert await client.close() == 0


async def test_cancel_while_the_editors_terminal_runs_kills_and_releases_it(agent_env, project, fake_llm):
    fake_llm.set_script([
        {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "sleep 100"}}]},
        {"text": "never"},
    ])
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    never = asyncio.get_running_loop().create_future()  # the editor never reports an exit
    client.on_request.update({
        "terminal/create": lambda params: {"terminalId": "t9"},
        "terminal/wait_for_exit": lambda params: never,
        "terminal/kill": lambda params: {},
        "terminal/release": lambda params: {},
    })
    await client.initialize(terminal=True)
    session_id = await client.new_session(str(project))
    reply = client.request_nowait("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "x"}]})
    await client.wait_for(lambda: client.requests("terminal/wait_for_exit"))
    client.notify("session/cancel", {"sessionId": session_id})
    assert await asyncio.wait_for(reply, 1.0) == {"stopReason": "cancelled"}
    await client.wait_for(lambda: client.requests("terminal/release"))
    assert client.requests("terminal/kill") == [{"sessionId": session_id, "terminalId": "t9"}]
    assert len(fake_llm.requests) == 1
    assert await client.close() == 0


@pytest.mark.parametrize("kill_answered", [True, False])
async def test_stdin_eof_while_an_editor_terminal_runs_leaves_no_task_pending(agent_env, project, fake_llm,
                                                                              kill_answered):
    fake_llm.set_script([{"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "sleep 100"}}]},
                         {"text": "never"}])
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    never = asyncio.get_running_loop().create_future()
    client.on_request.update({
        "terminal/create": lambda params: {"terminalId": "t1"},
        "terminal/wait_for_exit": lambda params: never,
        "terminal/kill": (lambda params: {}) if kill_answered else (lambda params: never),
        "terminal/release": lambda params: {},
    })
    await client.initialize(terminal=True)
    session_id = await client.new_session(str(project))
    client.request_nowait("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "x"}]})
    await client.wait_for(lambda: client.requests("terminal/wait_for_exit"))
    assert await client.close() == 0
    assert "Task was destroyed" not in client.stderr() and "Traceback" not in client.stderr(), client.stderr()


async def test_a_terminal_created_after_the_cancel_is_killed_and_released(agent_env, project, fake_llm):
    fake_llm.set_script([{"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "sleep 100"}}]},
                         {"text": "never"}])
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    created = asyncio.get_running_loop().create_future()  # the editor answers terminal/create late
    client.on_request.update({"terminal/create": lambda params: created, "terminal/kill": lambda params: {},
                              "terminal/release": lambda params: {}})
    await client.initialize(terminal=True)
    session_id = await client.new_session(str(project))
    reply = client.request_nowait("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "x"}]})
    await client.wait_for(lambda: client.requests("terminal/create"))
    client.notify("session/cancel", {"sessionId": session_id})
    assert await asyncio.wait_for(reply, 1.0) == {"stopReason": "cancelled"}
    created.set_result({"terminalId": "late-1"})
    await client.wait_for(lambda: client.requests("terminal/release"))
    ids = {"sessionId": session_id, "terminalId": "late-1"}
    assert client.requests("terminal/kill") == [ids] and client.requests("terminal/release") == [ids]
    assert not client.requests("terminal/wait_for_exit") and len(fake_llm.requests) == 1
    assert await client.close() == 0


@pytest.mark.parametrize("lines, truncated", [(2500, True), (3, True), (2500, False)])
async def test_output_the_editor_cut_keeps_the_notice_and_right_counts(agent_env, project, fake_llm, lines, truncated):
    fake_llm.set_script([{"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "seq"}}]},
                         {"text": "ok"}])
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    output = "".join(f"line {n}\n" for n in range(1, lines + 1))
    client.on_request.update({
        "terminal/create": lambda params: {"terminalId": "t1"},
        "terminal/wait_for_exit": lambda params: {"exitCode": 0, "signal": None},
        "terminal/output": lambda params: {"output": output, "truncated": truncated},
        "terminal/release": lambda params: {},
    })
    await client.initialize(terminal=True)
    session_id = await client.new_session(str(project))
    assert await client.prompt(session_id, "count") == {"stopReason": "end_turn"}
    [text] = tool_texts(fake_llm.requests[1])
    notice = "[Earlier output was not kept by the editor's terminal.]"
    assert text.startswith(notice) == truncated and text.count(notice) == int(truncated)
    assert f"line {lines}" in text
    if lines > 2000:
        assert f"[Showing last 2000 lines of {lines}." in text and "line 500\n" not in text
        assert ("Full output not saved: the editor's terminal kept only the end of it" in text) == truncated
    else:
        assert "Showing last" not in text and "line 1\nline 2\nline 3" in text
    assert await client.close() == 0
