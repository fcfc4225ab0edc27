"""End to end: every answer the editor gives to the agent's requests is checked (`modes/acp/answers.py`): a
malformed one fails the tool call (or the approval) naming the method and the problem, never read as if it were
right; the editor's error messages reach the model and the panel escaped and capped."""

from __future__ import annotations

import json

import pytest

from support.acp_client import AcpClient, Unchecked


TERMINAL_OK = {
    "terminal/create": lambda params: {"terminalId": "t1"},
    "terminal/wait_for_exit": lambda params: {"exitCode": 0, "signal": None},
    "terminal/output": lambda params: {"output": "fine\n", "truncated": False},
    "terminal/kill": lambda params: {},
    "terminal/release": lambda params: {},
}
WRITE = {"id": "c1", "name": "write", "arguments": {"path": "x.txt", "content": "y"}}
READ = {"id": "c1", "name": "read", "arguments": {"path": "x.txt"}}
BASH = {"id": "c1", "name": "bash", "arguments": {"command": "make"}}


def tool_texts(request: dict) -> list[str]:
    return [m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
            for m in request["body"]["messages"] if m["role"] == "tool"]


async def run_call(agent_env, project, fake_llm, call, handlers, **capabilities):
    """Run one tool call with the editor answering by `handlers`; (client, session id, the failed call's text
    as the model got it)."""
    fake_llm.set_script([{"tool_calls": [call]}, {"text": "ok"}])
    client = await AcpClient.start(["--approvals", "full"], cwd=str(project), env=agent_env)
    client.on_request.update(handlers)
    await client.initialize(**capabilities)
    session_id = await client.new_session(str(project))
    assert await client.prompt(session_id, "go") == {"stopReason": "end_turn"}
    done = [u for u in client.updates(session_id, "tool_call_update") if u["toolCallId"] == "c1"][-1]
    assert done["status"] == "failed", done
    [text] = tool_texts(fake_llm.requests[1])
    return client, session_id, text


FS = {"fs": {"readTextFile": True, "writeTextFile": True}}


@pytest.mark.parametrize("call, method, answer, problem", [
    (WRITE, "fs/write_text_file", "garbage", "expected an object, got a string 'garbage'"),
    (WRITE, "fs/write_text_file", [1], "expected an object, got an array"),
    (READ, "fs/read_text_file", {"content": 5}, '"content" must be a string, got a number 5'),
    (READ, "fs/read_text_file", {}, '"content" is missing'),
    (READ, "fs/read_text_file", None, "expected an object, got null"),
])
async def test_a_malformed_fs_answer_fails_the_call_naming_method_and_problem(agent_env, project, fake_llm,
                                                                             call, method, answer, problem):
    (project / "x.txt").write_text("on disk\n")
    client, _, text = await run_call(agent_env, project, fake_llm, call, {method: lambda p: Unchecked(answer)}, **FS)
    assert f"the editor's answer to {method} is malformed: {problem}" in text
    assert "on disk" not in text  # a malformed read is not taken for the disk's content either
    assert (project / "x.txt").read_text() == "on disk\n"
    assert await client.close() == 0


@pytest.mark.parametrize("method, answer, problem", [
    ("terminal/create", {"terminalId": 7}, '"terminalId" must be a string, got a number 7'),
    ("terminal/create", "t1", "expected an object, got a string 't1'"),
    ("terminal/wait_for_exit", {"exitCode": "zero"}, '"exitCode" must be a non-negative integer or null'),
    ("terminal/wait_for_exit", {"exitCode": -1}, '"exitCode" must be a non-negative integer or null'),
    ("terminal/output", {"output": 123, "truncated": False}, '"output" must be a string, got a number 123'),
    ("terminal/output", {"output": "x"}, '"truncated" is missing'),
    ("terminal/output", {"output": "x", "truncated": "no"}, '"truncated" must be a boolean'),
    ("terminal/output", {"output": "x", "truncated": False, "exitStatus": 3},
     '"exitStatus" must be an exit status object or null'),
])
async def test_a_malformed_terminal_answer_fails_the_call_and_the_terminal_is_released(
        agent_env, project, fake_llm, method, answer, problem):
    handlers = {**TERMINAL_OK, method: lambda p: Unchecked(answer)}
    client, session_id, text = await run_call(agent_env, project, fake_llm, BASH, handlers, terminal=True)
    assert f"the editor's answer to {method} is malformed: {problem}" in text
    if method != "terminal/create":
        assert client.requests("terminal/release") == [{"sessionId": session_id, "terminalId": "t1"}]
    assert await client.close() == 0


async def test_a_malformed_permission_answer_refuses_the_call_saying_why(agent_env, project, fake_llm):
    fake_llm.set_script([{"tool_calls": [BASH]}, {"text": "ok"}])
    client = await AcpClient.start([], cwd=str(project), env=agent_env)  # ask mode
    client.on_request["session/request_permission"] = lambda p: Unchecked({"outcome": {"outcome": "selected"}})
    await client.initialize()
    session_id = await client.new_session(str(project))
    assert await client.prompt(session_id, "go") == {"stopReason": "end_turn"}
    [text] = tool_texts(fake_llm.requests[1])
    assert "Not run" in text and "the question got no answer" in text
    assert ("the editor's answer to session/request_permission is malformed: \"outcome.optionId\" must be a "
            "string") in text
    assert "The user rejected" not in text
    assert await client.close() == 0


async def test_the_editors_error_messages_are_escaped_and_capped(agent_env, project, fake_llm):
    hostile = "\x1b[2J\x1b]0;owned\x07denied\u202eevil\nsecond line" + "x" * 5000
    fake_llm.set_script([{"tool_calls": [WRITE]}, {"text": "ok"}])
    client = await AcpClient.start(["--approvals", "full"], cwd=str(project), env=agent_env)
    answer = client._answer

    def refuse_writes(request: dict) -> None:  # the editor answers fs/write_text_file with a hostile error
        if request["method"] != "fs/write_text_file":
            return answer(request)
        client.send({"id": request["id"], "error": {"code": -32000, "message": hostile}})

    client._answer = refuse_writes
    await client.initialize(fs={"writeTextFile": True})
    session_id = await client.new_session(str(project))
    assert await client.prompt(session_id, "go") == {"stopReason": "end_turn"}
    [text] = tool_texts(fake_llm.requests[1])
    assert text.startswith("The editor could not write") and "\n" not in text
    for raw in ("\x1b", "\x07", "\u202e"):
        assert raw not in text
    assert "\\x1b[2J\\x1b]0;owned\\x07denied\\u202eevil\\nsecond line" in text
    assert text.endswith("…") and len(text) < 600  # capped
    shown = [u for u in client.updates(session_id, "tool_call_update") if u["toolCallId"] == "c1"][-1]
    assert "\x1b" not in json.dumps(shown, ensure_ascii=False) and "\\x1b[2J" in json.dumps(shown)
    assert await client.close() == 0


async def test_an_error_answer_to_a_permission_request_is_no_answer_not_a_rejection(agent_env, project, fake_llm):
    fake_llm.set_script([{"tool_calls": [BASH]}, {"text": "ok"}])
    client = await AcpClient.start([], cwd=str(project), env=agent_env)  # ask mode
    answer = client._answer

    def fail_questions(request: dict) -> None:  # the editor cannot show the question
        if request["method"] != "session/request_permission":
            return answer(request)
        client.send({"id": request["id"], "error": {"code": -32603, "message": "no window\x1b[2J"}})

    client._answer = fail_questions
    await client.initialize()
    session_id = await client.new_session(str(project))
    assert await client.prompt(session_id, "go") == {"stopReason": "end_turn"}
    [text] = tool_texts(fake_llm.requests[1])
    assert "Not run" in text and "the question got no answer" in text
    assert "the editor answered session/request_permission with an error: no window\\x1b[2J" in text
    assert "The user rejected" not in text and "\x1b" not in text
    assert await client.close() == 0


@pytest.mark.parametrize("option", ["nonsense", "allow_always", "reject_once"])
async def test_an_option_that_was_not_offered_is_no_answer_not_a_rejection(agent_env, project, fake_llm, option):
    command = {"name": "bash", "arguments": {"command": "echo hi > out.txt"}}  # a redirection: no allow_always
    fake_llm.set_script([{"tool_calls": [command]}, {"text": "ok"}])
    client = await AcpClient.start([], cwd=str(project), env=agent_env)  # ask mode
    client.on_request["session/request_permission"] = lambda params: {
        "outcome": {"outcome": "selected", "optionId": option}}
    await client.initialize()
    session_id = await client.new_session(str(project))
    assert await client.prompt(session_id, "go") == {"stopReason": "end_turn"}
    [asked] = client.requests("session/request_permission")
    assert [o["optionId"] for o in asked["options"]] == ["allow_once", "reject"]
    [text] = tool_texts(fake_llm.requests[1])
    assert "Not run" in text and "the question got no answer" in text and "was not offered" in text, text
    assert repr(option) in text and "The user rejected" not in text
    assert not (project / "out.txt").exists()
    assert await client.close() == 0


async def test_the_reject_option_rejects(agent_env, project, fake_llm):
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi > out.txt"}}]},
                         {"text": "ok"}])
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    client.on_request["session/request_permission"] = lambda params: {
        "outcome": {"outcome": "selected", "optionId": params["options"][-1]["optionId"]}}
    await client.initialize()
    session_id = await client.new_session(str(project))
    assert await client.prompt(session_id, "go") == {"stopReason": "end_turn"}
    [text] = tool_texts(fake_llm.requests[1])
    assert "The user rejected this bash call" in text
    assert await client.close() == 0
