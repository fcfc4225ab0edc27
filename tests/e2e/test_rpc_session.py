"""End to end: the real CLI in RPC mode against the loopback fake LLM server, driven by the package's client."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient
from support.doubles import group_alive


async def start(env, cwd, *args):
    return await RpcClient.start(list(args), cwd=str(cwd), env=env)


def types(events):
    return [e["type"] for e in events]


def session_lines(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


async def test_plain_text_answer_streams_and_is_saved(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "Hello from the fake model.", "usage": {"input": 1200, "output": 12}}])
    async with await start(agent_env, tmp_path) as client:
        events = await client.prompt_and_wait("Say hello")
        order = [r.get("type") for r in client.records]
        assert order[0] == "response" and order[1] == "agent_start"  # the response precedes the run's events
        assert types(events)[-2:] == ["agent_end", "agent_settled"]
        deltas = [e["assistantMessageEvent"]["delta"] for e in events
                  if e["type"] == "message_update" and e["assistantMessageEvent"]["type"] == "text_delta"]
        assert "".join(deltas) == "Hello from the fake model."
        end = [e for e in events if e["type"] == "message_end"][-1]["message"]
        assert end["stopReason"] == "stop" and end["usage"]["input"] == 1200
        assert end["usage"]["cost"]["total"] == pytest.approx(1200 * 3e-6 + 12 * 15e-6)
        state = (await client.send({"type": "get_state"}))["data"]
        text = (await client.send({"type": "get_last_assistant_text"}))["data"]["text"]
    assert text == "Hello from the fake model."
    assert state["messageCount"] == 2 and state["model"]["id"] == "fake-model"
    lines = session_lines(state["sessionFile"])
    assert lines[0]["type"] == "session" and lines[0]["version"] == 3
    assert [line["type"] for line in lines[1:]] == ["model_change", "thinking_level_change", "message", "message"]
    request = fake_llm.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["body"]["messages"][-1]["content"] == [{"type": "text", "text": "Say hello"}]


async def test_thinking_and_text_over_anthropic(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(api="anthropic-messages")
    fake_llm.set_script([{"thinking": "Consider the question.", "text": "Forty-two.",
                          "usage": {"input": 50, "output": 9, "cache_read": 20}}])
    async with await start(env, tmp_path) as client:
        events = await client.prompt_and_wait("What is the answer?")
    kinds = [e["assistantMessageEvent"]["type"] for e in events if e["type"] == "message_update"]
    assert kinds.index("thinking_start") < kinds.index("thinking_end") < kinds.index("text_start")
    message = [e for e in events if e["type"] == "message_end"][-1]["message"]
    assert [b["type"] for b in message["content"]] == ["thinking", "text"]
    assert message["content"][0]["thinking"] == "Consider the question."
    assert message["content"][0].get("thinkingSignature")
    assert message["usage"]["cacheRead"] == 20
    assert fake_llm.requests[0]["body"]["thinking"]["type"] == "enabled"


async def test_tool_loop_creates_edits_and_runs_a_file(agent_env, fake_llm, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    fake_llm.set_script([
        {"text": "Writing it.", "tool_calls": [{"name": "write", "arguments": {
            "path": "app/hello.py", "content": "print('hello')\n"}}], "args_chunk_chars": 7},
        {"tool_calls": [{"name": "edit", "arguments": {
            "path": "app/hello.py", "edits": [{"oldText": "hello", "newText": "hello, world"}]}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "python3 app/hello.py"}}]},
        {"tool_calls": [{"name": "read", "arguments": {"path": "app/hello.py"}}]},
        {"text": "Done: it prints hello, world."},
    ])
    async with await start(agent_env, project) as client:
        events = await client.prompt_and_wait("Create and run hello.py")
    assert (project / "app" / "hello.py").read_text() == "print('hello, world')\n"
    ends = [e for e in events if e["type"] == "tool_execution_end"]
    assert [e["toolName"] for e in ends] == ["write", "edit", "bash", "read"]
    assert not any(e["isError"] for e in ends)
    assert "hello, world" in ends[2]["result"]["content"][0]["text"]
    assert "diff" in ends[1]["result"]["details"]
    assert any(e["type"] == "tool_execution_update" and e["toolName"] == "bash" for e in events)
    assert types(events).count("turn_start") == 5
    last_request = fake_llm.requests[-1]["body"]["messages"]
    tool_messages = [m for m in last_request if m["role"] == "tool"]
    assert len(tool_messages) == 4 and "hello, world" in tool_messages[2]["content"]


async def test_abort_mid_stream_keeps_partial_and_closes_http(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "This answer will be cut off mid way", "hang_after": 4, "hang_ms": 30000},
                         {"text": "Fresh answer."}])
    async with await start(agent_env, tmp_path) as client:
        await client.send({"type": "prompt", "message": "Write an essay"})
        async for event in client.events_until("message_update"):
            pass
        while True:
            event = await client.next_event()
            if event["type"] == "message_update" and event["assistantMessageEvent"]["type"] == "text_delta":
                break
        state = await client.send({"type": "get_state"})
        assert state["data"]["isStreaming"] is True
        reply = await client.send({"type": "abort"}, timeout=10)
        assert reply["success"] is True
        rest = await client.wait_for("agent_settled")
        assert rest[-1] == {"type": "agent_settled", "aborted": True}
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
        assert messages[-1]["stopReason"] == "aborted" and messages[-1]["content"][0]["text"].startswith("This")
        fake_llm.wait_for(lambda: fake_llm.requests[0].get("client_disconnected"), timeout=10)
        events = await client.prompt_and_wait("Try again")
    assert [m for m in events if m["type"] == "message_end"][-1]["message"]["content"][0]["text"] == "Fresh answer."
    second = fake_llm.requests[1]["body"]["messages"]
    assert [m["role"] for m in second if m["role"] != "system"] == ["user", "user"]  # aborted turn left out


async def test_abort_mid_bash_kills_the_process_tree(agent_env, fake_llm, tmp_path, pid_fifo):
    command = f"echo $$ > {pid_fifo.path}; (sleep 60; echo late) & sleep 60; echo never"
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
                         {"text": "unused"}])
    async with await start(agent_env, tmp_path) as client:
        await client.send({"type": "prompt", "message": "run it"})
        async for _ in client.events_until("tool_execution_start"):
            pass
        pgid = await pid_fifo.pid()  # the shell is the group leader
        assert group_alive(pgid)
        await client.send({"type": "abort"}, timeout=10)
        events = await client.wait_for("agent_settled")
        assert not group_alive(pgid)
    end = next(e for e in events if e["type"] == "tool_execution_end")
    assert end["isError"] is True
    assert events[-1] == {"type": "agent_settled", "aborted": True}
    assert len(fake_llm.requests) == 1  # no model call after an abort


async def test_http_500_ends_run_with_error(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"retry": {"enabled": False}})  # retries: tests/e2e/test_rpc_retry.py
    fake_llm.set_script([{"status": 500, "body": {"error": {"message": "upstream exploded"}}}])
    async with await start(env, tmp_path) as client:
        events = await client.prompt_and_wait("hi")
    message = [e for e in events if e["type"] == "message_end"][-1]["message"]
    assert message["stopReason"] == "error"
    assert "500" in message["errorMessage"] and "upstream exploded" in message["errorMessage"]
    assert [r for r in client.records if r.get("type") == "response"][0]["success"] is True


async def test_second_process_resumes_with_identical_messages(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "one", "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
                         {"text": "two"}, {"text": "three"}])
    async with await start(agent_env, tmp_path) as client:
        await client.prompt_and_wait("first")
        before = (await client.send({"type": "get_messages"}))["data"]["messages"]
        path = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    async with await start(agent_env, tmp_path, "--session", path) as client:
        after = (await client.send({"type": "get_messages"}))["data"]["messages"]
        await client.prompt_and_wait("second")
    assert after == before
    assert [m["role"] for m in fake_llm.requests[-1]["body"]["messages"] if m["role"] != "system"] == [
        "user", "assistant", "tool", "assistant", "user"]


async def test_missing_session_file_is_a_clear_startup_error(agent_env, tmp_path):
    client = await start(agent_env, tmp_path, "--session", str(tmp_path / "nope.jsonl"))
    code = await client.close()
    assert code == 1 and b"nope.jsonl" in client.stderr


async def test_prompt_without_key_names_the_env_var(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(AGENT_FORGE_DIR=str(tmp_path / "agent"), HOME=str(tmp_path))
    async with await start(env, tmp_path, "--no-session") as client:
        reply = await client.send({"type": "prompt", "message": "hi"})
    assert reply["success"] is False and "ANTHROPIC_API_KEY" in reply["error"]


async def test_back_to_back_prompts_are_never_silently_dropped(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "first answer"}, {"text": "second answer"}])
    async with await start(agent_env, tmp_path) as client:
        first = client.send_nowait({"type": "prompt", "message": "one"})
        second = client.send_nowait({"type": "prompt", "message": "two"})
        third = client.send_nowait({"type": "prompt", "message": "three", "streamingBehavior": "followUp"})
        replies = [await f for f in (first, second, third)]
        await client.wait_for("agent_settled")
    assert replies[0]["data"]["disposition"] == "started"
    assert replies[1]["success"] is False and "already processing" in replies[1]["error"]
    assert replies[2]["data"]["disposition"] == "queued"
    users = [m for m in fake_llm.requests[1]["body"]["messages"] if m["role"] == "user"]
    assert [u["content"][0]["text"] for u in users] == ["one", "three"]


@pytest.mark.real_process
async def test_resume_after_kill_mid_tool_sends_a_valid_conversation(agent_env, fake_llm, tmp_path, pid_fifo):
    import signal

    command = f"echo $$ > {pid_fifo.path}; sleep 60"
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
                         {"text": "resumed fine"}])
    client = await start(agent_env, tmp_path)
    await client.send({"type": "prompt", "message": "run"})
    await client.wait_for("tool_execution_start")
    path = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    pgid = await pid_fifo.pid()
    client.process.kill()
    await client.close()
    os.killpg(pgid, signal.SIGKILL)  # kill -9 cannot clean up; we do
    async with await start(agent_env, tmp_path, "--session", path) as resumed:
        events = await resumed.prompt_and_wait("are you there?")
    assert [e for e in events if e["type"] == "message_end"][-1]["message"]["content"][0]["text"] == "resumed fine"
    sent = [m for m in fake_llm.requests[-1]["body"]["messages"] if m["role"] != "system"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "user"]
    assert sent[2]["tool_call_id"] == sent[1]["tool_calls"][0]["id"]


@pytest.mark.real_process
@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM", "SIGHUP"])
async def test_termination_signal_kills_tool_processes_and_keeps_the_session_valid(
        agent_env, fake_llm, tmp_path, signame, pid_fifo):
    """Ctrl-C (SIGINT) takes the path of SIGTERM: the run settles, the lock file goes."""
    import signal

    command = f"echo $$ > {pid_fifo.path}; (sleep 60) & sleep 60"
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}])
    client = await start(agent_env, tmp_path)
    await client.send({"type": "prompt", "message": "run"})
    await client.wait_for("tool_execution_start")
    path = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    pgid = await pid_fifo.pid()
    client.process.send_signal(getattr(signal, signame))
    code = await client.close()
    assert code == 128 + getattr(signal, signame)
    assert not group_alive(pgid)
    roles = [line["message"]["role"] for line in session_lines(path) if line["type"] == "message"]
    assert roles == ["user", "assistant", "toolResult"]
    assert [r.get("type") for r in client.records][-2:] == ["agent_end", "agent_settled"]
    assert not Path(f"{path}.lock").exists()


async def test_unwritable_session_dir_never_kills_the_run(agent_env, fake_llm, tmp_path):
    """A session dir that turns unusable after the start (one unusable at the start is refused before any
    request: tests/e2e/test_cli_path_flags.py): the run goes on, the failure is said on stderr."""
    blocker = tmp_path / "not-a-dir"
    fake_llm.set_script([{"text": "still answering"}])
    client = await start(agent_env, tmp_path, "--session-dir", str(blocker / "sessions"))
    try:
        await client.send({"type": "get_state"})
        shutil.rmtree(blocker, ignore_errors=True)
        blocker.write_text("a file where the session dir should be")
        events = await client.prompt_and_wait("hi")
        assert [e["type"] for e in events][-2:] == ["agent_end", "agent_settled"]
        assert [e for e in events if e["type"] == "message_end"][-1]["message"]["content"][0]["text"] == \
            "still answering"
    finally:
        await client.close()
    assert b"session file could not be written" in client.stderr


async def test_very_deep_cwd_still_saves_its_session(agent_env, fake_llm, tmp_path):
    deep = tmp_path
    for _ in range(6):
        deep = deep / ("d" * 60)
    deep.mkdir(parents=True)
    fake_llm.set_script([{"text": "deep"}])
    async with await start(agent_env, deep) as client:
        await client.prompt_and_wait("hi")
        path = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    assert [line["type"] for line in session_lines(path)][-1] == "message"


async def test_damaged_entries_in_a_resumed_session_do_not_brick_prompts(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "first"}, {"text": "after damage"}, {"text": "still fine"}])
    async with await start(agent_env, tmp_path) as client:
        await client.prompt_and_wait("hello")
        path = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    lines = session_lines(path)
    last = lines[-1]["id"]
    bad = [{"type": "message", "id": "bad00001", "parentId": last, "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "assistant", "content": 7, "usage": {"input": "a", "cost": "x"},
                        "stopReason": "stop"}},
           {"type": "message", "id": "bad00002", "parentId": "bad00001", "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": None}}]
    with open(path, "a") as handle:
        handle.write("".join(json.dumps(entry) + "\n" for entry in bad))
    async with await start(agent_env, tmp_path, "--session", path) as client:
        first = await client.prompt_and_wait("are you ok?")
        second = await client.prompt_and_wait("and now?")
        stats = await client.send({"type": "get_session_stats"})
        last_text = await client.send({"type": "get_last_assistant_text"})
    errors = [e["message"].get("errorMessage") for e in first + second
              if e["type"] == "message_end" and e["message"].get("stopReason") == "error"]
    assert errors == []
    for events in (first, second):
        assert [e["type"] for e in events][-2:] == ["agent_end", "agent_settled"]
    assert [e for e in second if e["type"] == "message_end"][-1]["message"]["content"][0]["text"] == "still fine"
    assert stats["success"] is True and last_text["data"]["text"] == "still fine"


async def test_a_name_given_before_the_first_message_is_saved_and_resumed(agent_env, tmp_path):
    # Round 3: a name set on a session with no message yet was never written, so the file named by
    # get_state.sessionFile never appeared and switch_session to it failed.
    async with await start(agent_env, tmp_path) as client:
        assert (await client.send({"type": "set_session_name", "name": "plans"}))["success"]
        path = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    assert [line["type"] for line in session_lines(path)][-1] == "session_info"
    async with await start(agent_env, tmp_path, "--session", path) as client:
        assert (await client.send({"type": "get_state"}))["data"]["sessionName"] == "plans"


async def test_a_session_nobody_used_leaves_no_file(agent_env, tmp_path):
    async with await start(agent_env, tmp_path) as client:
        assert (await client.send({"type": "set_thinking_level", "level": "high"}))["success"]
        path = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    assert not Path(path).exists()
