"""End to end: the RPC `bash` and `abort_bash` commands of the real CLI (seed 000 "Bash", transcript 14)."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient
from support.doubles import group_alive



async def start(env, cwd, *args):
    return await RpcClient.start(list(args), cwd=str(cwd), env=env)


async def next_update(client: RpcClient) -> dict:
    while (event := await client.next_event())["type"] != "bash_execution_update":
        pass
    return event


def updates(client: RpcClient, request_id) -> list[dict]:
    """The updates of one command, in order (all precede its response on stdout)."""
    return [r for r in client.records if r.get("type") == "bash_execution_update" and r.get("id") == request_id]


def session_messages(path) -> list[dict]:
    lines = [json.loads(line) for line in Path(path).read_text().splitlines()]
    return [line["message"] for line in lines if line["type"] == "message"]


def user_texts(request) -> list[str]:
    return [block["text"] for m in request["body"]["messages"] if m["role"] == "user" for block in m["content"]]


async def test_output_streams_in_chunks_each_carrying_the_request_id(agent_env, project, make_gate):
    first, second = make_gate(), make_gate()
    async with await start(agent_env, project) as client:
        reply = client.send_nowait({"id": "req-1", "type": "bash",
                                    "command": f"echo one; {first.wait}; echo two; {second.wait}; echo three"})
        assert await next_update(client) == {"type": "bash_execution_update", "id": "req-1", "delta": "one\n"}
        assert not reply.done()
        first.open()
        assert (await next_update(client))["delta"] == "two\n"
        second.open()
        response = await reply
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
        session_file = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    assert response["success"] is True and response["id"] == "req-1"
    assert response["data"] == {"output": "one\ntwo\nthree\n", "exitCode": 0, "cancelled": False,
                                "truncated": False}
    assert [u["delta"] for u in updates(client, "req-1")] == ["one\n", "two\n", "three\n"]
    [message] = messages
    assert message["role"] == "bashExecution" and message["command"].startswith("echo one;")
    assert (message["output"], message["exitCode"], message["fullOutputPath"]) == ("one\ntwo\nthree\n", 0, None)
    assert session_messages(session_file) == [message]


async def test_get_state_is_answered_while_bash_runs(agent_env, project, make_gate):
    gate = make_gate()
    async with await start(agent_env, project) as client:
        reply = client.send_nowait({"type": "bash", "command": f"echo waiting; {gate.wait}"})
        await next_update(client)
        state = await client.send({"type": "get_state"}, timeout=5)
        assert state["success"] is True and state["data"]["isStreaming"] is False
        assert not reply.done()
        gate.open()
        assert (await reply)["data"]["output"] == "waiting\n"


async def test_a_character_split_across_chunks_arrives_whole(agent_env, project, make_gate):
    gate = make_gate()
    # printf writes "a" plus the first two bytes of "€" at once; the last byte comes after the gate opens
    command = f"printf 'a\\342\\202'; {gate.wait}; printf '\\254 b\\n'"
    async with await start(agent_env, project) as client:
        reply = client.send_nowait({"id": "u", "type": "bash", "command": command})
        assert (await next_update(client))["delta"] == "a"
        gate.open()
        response = await reply
    assert [u["delta"] for u in updates(client, "u")] == ["a", "€ b\n"]
    assert response["data"]["output"] == "a€ b\n"


async def test_non_zero_exit_is_a_successful_command(agent_env, project):
    async with await start(agent_env, project) as client:
        response = await client.send({"id": "b2", "type": "bash", "command": "echo out; echo err >&2; exit 3"})
    assert response["success"] is True
    assert response["data"] == {"output": "out\nerr\n", "exitCode": 3, "cancelled": False, "truncated": False}


async def test_huge_output_is_truncated_and_kept_whole_in_a_file(agent_env, project):
    async with await start(agent_env, project) as client:
        response = await client.send({"id": "big", "type": "bash", "command": "seq 1 200000"})
        [message] = (await client.send({"type": "get_messages"}))["data"]["messages"]
    full = "".join(f"{i}\n" for i in range(1, 200001))
    data = response["data"]
    assert data["truncated"] is True and data["exitCode"] == 0
    assert data["output"].endswith("\n200000\n") and len(data["output"].splitlines()) <= 2000
    assert Path(data["fullOutputPath"]).read_text() == full
    streamed = updates(client, "big")
    assert len(streamed) > 1 and "".join(u["delta"] for u in streamed) == full
    assert message["truncated"] is True and message["fullOutputPath"] == data["fullOutputPath"]
    os.unlink(data["fullOutputPath"])


async def test_abort_bash_kills_the_process_group_promptly(agent_env, project):
    async with await start(agent_env, project) as client:
        reply = client.send_nowait({"id": "long", "type": "bash", "command": "echo $$; sleep 30; echo never"})
        pgid = int((await next_update(client))["delta"])
        assert group_alive(pgid)
        started = time.monotonic()
        aborted = await client.send({"id": "ab", "type": "abort_bash"}, timeout=10)
        elapsed = time.monotonic() - started
        assert aborted == {"type": "response", "command": "abort_bash", "success": True, "id": "ab"}
        assert elapsed < 5
        assert not group_alive(pgid)
        assert reply.done()  # abort_bash answers after the command's own response
        response = reply.result()
        again = await client.send({"type": "abort_bash"})  # nothing running: still a success
        [message] = (await client.send({"type": "get_messages"}))["data"]["messages"]
    assert response["success"] is True
    assert response["data"] == {"output": f"{pgid}\n", "exitCode": None, "cancelled": True, "truncated": False}
    assert again["success"] is True
    assert message["cancelled"] is True and message["output"] == f"{pgid}\n"


async def test_two_commands_run_side_by_side(agent_env, project, make_gate):
    gate = make_gate()
    async with await start(agent_env, project) as client:
        replies = [client.send_nowait({"id": n, "type": "bash", "command": f"echo {n}; {gate.wait}; echo {n}-end"})
                   for n in ("one", "two")]
        seen = {(await next_update(client))["id"], (await next_update(client))["id"]}
        assert seen == {"one", "two"}  # both started before either finished
        gate.open()
        gate.open()
        responses = [await r for r in replies]
        outputs = sorted(m["output"] for m in (await client.send({"type": "get_messages"}))["data"]["messages"])
    assert [r["data"]["output"] for r in responses] == ["one\none-end\n", "two\ntwo-end\n"]
    assert outputs == ["one\none-end\n", "two\ntwo-end\n"]


async def test_updates_and_response_without_an_id(agent_env, project):
    async with await start(agent_env, project) as client:
        client.write_raw(b'{"type":"bash","command":"echo anonymous"}\n')
        update = await client.next_event()
        response = await client.next_event()
    assert update == {"type": "bash_execution_update", "delta": "anonymous\n"}
    assert response["type"] == "response" and "id" not in response and response["success"] is True


@pytest.mark.parametrize("command, error", [
    ({"type": "bash"}, "Missing required field: command"),
    ({"type": "bash", "command": 42}, "Field 'command' must be a string"),
    ({"type": "bash", "command": "  "}, "Field 'command' must not be empty"),
    ({"type": "bash", "command": "echo", "excludeFromContext": "yes"}, "Field 'excludeFromContext' must be a"),
])
async def test_bad_bash_commands_are_answered_with_an_error(agent_env, project, command, error):
    async with await start(agent_env, project) as client:
        response = await client.send(command)
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    assert response["success"] is False and response["error"].startswith(error)
    assert messages == []


async def test_a_deleted_working_directory_is_a_clear_error(agent_env, project):
    async with await start(agent_env, project) as client:
        await client.send({"type": "get_state"})  # the agent has started (and read its cwd)
        project.rmdir()
        response = await client.send({"id": "gone", "type": "bash", "command": "echo hi"})
        state = await client.send({"type": "get_state"})
    assert response["success"] is False and response["id"] == "gone"
    assert response["error"] == f"Cannot run the command: working directory {project} does not exist"
    assert state["success"] is True and state["data"]["messageCount"] == 0


async def test_bash_results_reach_the_model_on_the_next_prompt(agent_env, fake_llm, project):
    fake_llm.set_script([{"text": "I see the output."}])
    async with await start(agent_env, project) as client:
        await client.send({"type": "bash", "command": "echo hello"})
        await client.send({"type": "bash", "command": "false"})
        await client.send({"type": "bash", "command": "echo private", "excludeFromContext": True})
        assert fake_llm.requests == []  # bash alone never calls the model
        await client.prompt_and_wait("What happened?")
        roles = [m["role"] for m in (await client.send({"type": "get_messages"}))["data"]["messages"]]
    assert roles == ["bashExecution"] * 3 + ["user", "assistant"]
    assert user_texts(fake_llm.requests[0]) == [
        "Ran `echo hello`\n```\nhello\n```", "Ran `false`\n(no output)\n\nCommand exited with code 1",
        "What happened?"]


async def test_bash_finishing_while_the_agent_streams_joins_after_the_run(agent_env, fake_llm, project):
    fake_llm.set_script([{"text": "a fairly long streamed answer", "hang_after": 3}, {"text": "Noted."}])
    async with await start(agent_env, project) as client:
        await client.send({"type": "prompt", "message": "talk"})
        while (event := await client.next_event())["type"] != "message_update" or \
                event["assistantMessageEvent"]["type"] != "text_delta":
            pass
        response = await client.send({"id": "mid", "type": "bash", "command": "echo during"})
        assert response["data"]["output"] == "during\n"
        during = (await client.send({"type": "get_messages"}))["data"]["messages"]
        assert [m["role"] for m in during] == ["user"]  # not slipped into the running turn
        fake_llm.release_hangs()
        await client.wait_for("agent_settled")
        after = (await client.send({"type": "get_messages"}))["data"]["messages"]
        session_file = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
        await client.prompt_and_wait("and now?")
    assert [m["role"] for m in after] == ["user", "assistant", "bashExecution"]
    assert [m["role"] for m in session_messages(session_file)][:3] == ["user", "assistant", "bashExecution"]
    second = fake_llm.requests[1]["body"]["messages"]
    assert [m["role"] for m in second if m["role"] != "system"] == ["user", "assistant", "user", "user"]
    assert user_texts(fake_llm.requests[1])[1:] == ["Ran `echo during`\n```\nduring\n```", "and now?"]


async def test_stdin_eof_waits_for_a_running_command(agent_env, project, make_gate):
    gate = make_gate()
    client = await start(agent_env, project)
    reply = client.send_nowait({"type": "bash", "command": f"echo started; {gate.wait}; echo finished"})
    await next_update(client)
    client.close_input()
    gate.open()
    response = await asyncio.wait_for(reply, 30)
    assert await client.close() == 0
    assert response["data"]["output"] == "started\nfinished\n"


# -- shellPath and shellCommandPrefix (issue 10.19) ---------------------------------------------------------


def recording_shell(directory: Path) -> tuple[Path, Path]:
    """A shell wrapper that appends its arguments (one per line, then `--end--`) to a log and runs bash."""
    log = directory / "shell.log"
    shell = directory / "my shell.sh"
    shell.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" --end-- >> '{log}'\nexec bash \"$@\"\n")
    shell.chmod(0o755)
    return shell, log


def tool_result_texts(fake_llm) -> list[str]:
    """The tool results in the model's latest request, in order."""
    messages = fake_llm.requests[-1]["body"]["messages"]
    return [m["content"] if isinstance(m["content"], str) else "".join(b["text"] for b in m["content"])
            for m in messages if m["role"] == "tool"]


async def run_both(client: RpcClient, fake_llm, command: str) -> tuple[str, str]:
    """(output of the RPC `bash` command, the model's `bash` tool result) for the same command."""
    user = (await client.send({"type": "bash", "command": command}))["data"]["output"]
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}, {"text": "ok"}])
    await client.prompt_and_wait("run it")
    [tool] = tool_result_texts(fake_llm)
    return user, tool


async def test_shell_path_setting_runs_both_kinds_of_command(agent_env_factory, fake_llm, project, tmp_path):
    shell, log = recording_shell(tmp_path)
    env = agent_env_factory(settings={"shellPath": str(shell)})
    async with await start(env, project) as client:
        user, tool = await run_both(client, fake_llm, "echo via $0")
    assert user == tool.rstrip("\n") + "\n" == "via bash\n"
    assert log.read_text() == "-c\necho via $0\n--end--\n" * 2


async def test_shell_path_with_a_tilde_and_a_missing_shell(agent_env_factory, fake_llm, project, tmp_path):
    env = agent_env_factory(settings={"shellPath": "~/no-such-shell"})
    async with await start(env, project) as client:
        reply = await client.send({"type": "bash", "command": "echo hi"})
        fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
                             {"text": "ok"}])
        await client.prompt_and_wait("run it")
    error = f"Cannot run the command: No such file or directory: {env['HOME']}/no-such-shell"
    assert reply["success"] is False and reply["error"] == error  # one wording for both (as the docs say)
    [tool] = tool_result_texts(fake_llm)
    assert tool == error


async def test_a_nul_byte_in_the_shell_path_or_a_models_command_is_refused_in_words(agent_env_factory, fake_llm,
                                                                                       project):
    env = agent_env_factory(settings={"shellPath": "/bin/ba\0sh"})
    async with await start(env, project) as client:
        reply = await client.send({"type": "bash", "command": "echo hi"})  # the default shell: the path is ignored
        fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": "echo a\0b"}}]},
                             {"text": "ok"}])
        await client.prompt_and_wait("run it")
    assert reply["success"] is True and reply["data"]["output"] == "hi\n"
    assert 'shellPath must be a non-empty string (the path of a shell), got "/bin/ba\\u0000sh"' in \
        client.stderr.decode()
    [tool] = tool_result_texts(fake_llm)
    assert tool.startswith("Cannot run the command: embedded null byte: ") and "ValueError" not in tool


async def test_shell_command_prefix_runs_before_every_command(agent_env_factory, fake_llm, project):
    env = agent_env_factory(settings={"shellCommandPrefix": "greet() { echo hello-$1; }"})
    async with await start(env, project) as client:
        user, tool = await run_both(client, fake_llm, "greet you")
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    assert user == "hello-you\n" and tool.startswith("hello-you")
    assert messages[0]["command"] == "greet you"  # the record keeps the command as the client sent it


async def test_project_shell_settings_apply_only_when_trusted(agent_env, fake_llm, project, tmp_path):
    shell, log = recording_shell(tmp_path)
    settings = project / ".agent-forge" / "agent" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"shellPath": str(shell), "shellCommandPrefix": "echo prefixed"}))
    async with await start(agent_env, project) as client:
        untrusted = await run_both(client, fake_llm, "echo plain")
    assert not log.exists() and untrusted[0] == "plain\n" and "shellPath, shellCommandPrefix skipped" in \
        client.stderr.decode()
    async with await start(agent_env, project, "--approve") as client:
        trusted = await run_both(client, fake_llm, "echo plain")
    assert trusted[0] == "prefixed\nplain\n" and trusted[1].startswith("prefixed\nplain")
    assert log.read_text() == "-c\necho prefixed\necho plain\n--end--\n" * 2
