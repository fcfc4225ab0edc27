"""End to end: plugin code that never returns, blocks its thread or reads stdin cannot hang the agent, leave a
command unanswered or steal protocol lines (the real CLI with a plugin loaded by `-e`, the loopback fake LLM)."""

from __future__ import annotations

import asyncio
import json
import signal
import textwrap

import pytest

from agent_forge.modes.rpc.client import RpcClient

pytestmark = pytest.mark.real_process  # hanging and blocking plugin code, SIGTERM: crash safety needs a process

from .test_print_mode import run, user_texts
from .test_rpc_plugins import answer, next_request, notification

EVIL = textwrap.dedent('''
    import asyncio
    import subprocess
    import sys
    import time

    from agent_forge.plugins import HANDLED


    def setup(plugin):
        @plugin.command("hang")
        async def hang(args, ctx):
            await asyncio.sleep(3600)

        @plugin.command("stubborn")
        async def stubborn(args, ctx):
            while True:
                try:
                    await asyncio.sleep(3600)
                except asyncio.CancelledError:  # ignores every cancellation
                    pass

        @plugin.command("synchang")
        def synchang(args, ctx):
            time.sleep(float(args))

        @plugin.command("syncask")
        def syncask(args, ctx):
            answer = ctx.ui.confirm("Sure?")  # a sync handler gets the dialog's result, not a coroutine
            ctx.ui.notify(f"syncask -> {answer} (streaming: {ctx.session.is_streaming})")

        @plugin.command("stop")
        async def stop(args, ctx):
            await ctx.session.abort()  # its own abort does not cancel the command
            ctx.ui.notify("stopped")

        @plugin.command("syncstop")
        def syncstop(args, ctx):
            ctx.session.abort()
            ctx.ui.notify("sync stopped")

        @plugin.command("readstdin")
        def readstdin(args, ctx):
            child = subprocess.run(["cat"], capture_output=True, timeout=30).stdout
            ctx.ui.notify(f"stdin {sys.stdin.readline()!r} child {child!r}")

        @plugin.tool("nap", description="Sleep for ever")
        def nap(args, ctx):
            ctx.update("napping")  # from the worker thread: marshalled to the loop
            time.sleep(3600)

        @plugin.tool("snooze", description="Await for ever")
        async def snooze(args, ctx):
            await asyncio.sleep(3600)

        @plugin.on("before_run")
        def hang_run(event, ctx):
            if "hang-run" in str(event.prompts):
                time.sleep(3600)

        @plugin.on("tool_call")
        async def hang_check(event, ctx):
            if event.args.get("command") == "echo checked":
                await asyncio.sleep(3600)

        @plugin.on("session_before_change")
        async def hang_veto(event, ctx):
            if ctx.session.session_name == "stuck":
                await asyncio.sleep(3600)

        @plugin.on("session_shutdown")
        def bye(event, ctx):
            ctx.ui.notify("bye")

        @plugin.on("input")
        async def hang_input(event, ctx):
            if event.text.startswith("hang"):
                await asyncio.sleep(3600)
            if event.text == "sync-hang":
                return None

        @plugin.on("input")
        def sync_input(event, ctx):
            if event.text == "sync-hang":
                time.sleep(3600)
            if event.text == "swallow":
                return HANDLED
''')


@pytest.fixture
def evil(tmp_path):
    path = tmp_path / "evil.py"
    path.write_text(EVIL)
    return str(path)


GRACE_MS = 200
"""The cancellation grace these agents get (`AGENT_FORGE_CANCEL_GRACE_MS`) unless a test asks for the agent's
own 1 s: plugin code that ignores its cancellation is waited out once or twice per test (abort, exit), and the
1 s default cost the two files ~25 s of waiting."""


def env_with(agent_env_factory, handler_timeout_ms=None, grace_ms: int | None = GRACE_MS):
    """The agent's env: `pluginHandlerTimeoutMs` as asked and the cancellation grace (`AGENT_FORGE_CANCEL_GRACE_MS`):
    `grace_ms`, or with None the agent's default (1 s)."""
    settings = {} if handler_timeout_ms is None else {"pluginHandlerTimeoutMs": handler_timeout_ms}
    extra = {} if grace_ms is None else {"AGENT_FORGE_CANCEL_GRACE_MS": str(grace_ms)}
    return agent_env_factory(settings=settings, extra_env=extra)


async def start(env, cwd, plugin):
    return await RpcClient.start(["-e", plugin], cwd=str(cwd), env=env)


async def exit_code(client, timeout=20.0):
    """The agent's exit code; fails (and kills it) when it does not exit within `timeout` seconds."""
    try:
        return await asyncio.wait_for(client.process.wait(), timeout)
    except asyncio.TimeoutError:
        client.process.kill()
        pytest.fail(f"the agent did not exit within {timeout} s")


def said_bye(client):
    return any(r.get("method") == "notify" and r.get("message") == "bye" for r in client.records)


async def test_abort_cancels_a_command_that_never_returns(agent_env_factory, tmp_path, evil):
    client = await start(env_with(agent_env_factory), tmp_path, evil)
    reply = await client.send({"type": "prompt", "message": "/hang"})
    aborted = await client.send({"type": "abort"}, timeout=10)
    settled = await client.wait_for("agent_settled", timeout=10)
    state = await client.send({"type": "get_state"}, timeout=10)
    client.process.stdin.close()
    assert await exit_code(client) == 0
    assert reply["data"] == {"disposition": "handled"} and aborted["success"] is True
    assert settled[-1] == {"type": "agent_settled", "aborted": True} and state["data"]["isStreaming"] is False


async def test_stdin_eof_ends_a_command_that_never_returns(agent_env_factory, tmp_path, evil):
    client = await start(env_with(agent_env_factory, handler_timeout_ms=300), tmp_path, evil)
    assert (await client.send({"type": "prompt", "message": "/hang"}))["success"] is True
    client.process.stdin.close()
    assert await exit_code(client) == 0
    await client.close()
    assert said_bye(client)


@pytest.mark.parametrize("command", ["/hang", "/synchang 3600"])
async def test_sigterm_ends_a_command_that_never_returns(agent_env_factory, tmp_path, evil, command):
    client = await start(env_with(agent_env_factory), tmp_path, evil)
    assert (await client.send({"type": "prompt", "message": command}))["success"] is True
    client.process.send_signal(signal.SIGTERM)
    assert await exit_code(client) == 128 + signal.SIGTERM
    await client.close()
    assert said_bye(client)  # shutdown went on past the command to the plugins' session_shutdown handlers


@pytest.mark.parametrize("text", ["hang", "sync-hang"])
async def test_a_hanging_input_handler_is_bounded_and_prompts_keep_their_order(agent_env_factory, fake_llm,
                                                                               tmp_path, evil, text):
    fake_llm.set_script([{"text": "first"}, {"text": "second"}])
    client = await start(env_with(agent_env_factory, handler_timeout_ms=500), tmp_path, evil)
    first = client.send_nowait({"type": "prompt", "message": text})
    second = client.send_nowait({"type": "prompt", "message": "after", "streamingBehavior": "followUp"})
    replies = [await asyncio.wait_for(f, 20) for f in (first, second)]
    errors = [e async for e in client.events_until("agent_settled") if e["type"] == "extension_error"]
    await client.close()
    order = [r["id"] for r in client.records if r.get("type") == "response"]
    assert [r["data"] for r in replies] == [{"disposition": "started"}, {"disposition": "queued"}]
    assert order.index(replies[0]["id"]) < order.index(replies[1]["id"])
    assert errors and "TimeoutError" in errors[0]["error"] and errors[0]["event"] == "input"
    users = [m for m in fake_llm.requests[0]["body"]["messages"] if m["role"] == "user"]
    assert json.dumps(users[-1]).count(text) == 1  # the hung prompt went on, as it was, before the later one


async def test_hanging_run_handlers_are_bounded_and_the_run_goes_on(agent_env_factory, fake_llm, tmp_path, evil):
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": "echo checked"}}]},
                         {"text": "done"}])
    client = await start(env_with(agent_env_factory, handler_timeout_ms=300), tmp_path, evil)
    events = await client.prompt_and_wait("please hang-run", timeout=20)
    client.process.stdin.close()
    assert await exit_code(client) == 0
    failed = [e["event"] for e in events if e["type"] == "extension_error" and "TimeoutError" in e["error"]]
    end = next(e for e in events if e["type"] == "tool_execution_end")
    assert failed == ["before_run", "tool_call"] and events[-1] == {"type": "agent_settled", "aborted": False}
    assert end["isError"] is True and "Blocked" in end["result"]["content"][0]["text"]  # fail-safe: not run


async def test_a_hanging_veto_handler_is_bounded_and_the_change_is_answered(agent_env_factory, tmp_path, evil):
    async with await start(env_with(agent_env_factory, handler_timeout_ms=300), tmp_path, evil) as client:
        await client.send({"type": "set_session_name", "name": "stuck"})
        reply = await client.send({"type": "new_session"}, timeout=20)
        while (error := await client.next_event(timeout=10))["type"] != "extension_error":
            pass
    assert reply["success"] is True and reply["data"] == {"cancelled": False}
    assert error["event"] == "session_before_change" and "TimeoutError" in error["error"]


async def test_abort_cancels_a_hanging_input_handler_and_refuses_its_prompt(agent_env_factory, fake_llm,
                                                                            tmp_path, evil):
    client = await start(env_with(agent_env_factory, handler_timeout_ms=120000), tmp_path, evil)  # abort first
    pending = client.send_nowait({"type": "prompt", "message": "hang forever"})
    await client.send({"type": "get_state"})  # the prompt is in its input handler by now (commands in order)
    aborted = await client.send({"type": "abort"}, timeout=10)
    refused = await asyncio.wait_for(pending, 10)
    handled = await client.send({"type": "prompt", "message": "swallow"}, timeout=10)
    await client.wait_for("agent_settled", timeout=10)
    client.process.stdin.close()
    assert await exit_code(client) == 0
    assert aborted["success"] is True and refused["success"] is False and "Aborted" in refused["error"]
    assert handled["data"] == {"disposition": "handled"} and fake_llm.requests == []


async def test_stdin_eof_with_a_hanging_input_handler_answers_and_exits(agent_env_factory, fake_llm, tmp_path,
                                                                        evil):
    fake_llm.set_script([{"text": "went on"}])
    client = await start(env_with(agent_env_factory, handler_timeout_ms=300), tmp_path, evil)
    pending = client.send_nowait({"type": "prompt", "message": "hang at exit"})
    client.process.stdin.close()
    assert await exit_code(client) == 0
    assert (await asyncio.wait_for(pending, 10))["data"] == {"disposition": "started"}
    assert len(fake_llm.requests) == 1


async def test_a_blocking_sync_command_does_not_block_the_rpc_loop(agent_env_factory, fake_llm, tmp_path, evil):
    fake_llm.set_script([{"text": "a long answer that hangs half way", "hang_after": 3, "hang_ms": 30000}])
    client = await start(env_with(agent_env_factory), tmp_path, evil)
    await client.send({"type": "prompt", "message": "write"})
    async for _ in client.events_until("message_update"):
        pass
    assert (await client.send({"type": "prompt", "message": "/synchang 3600"}))["success"] is True
    state = await client.send({"type": "get_state"}, timeout=10)  # the sleeping thread does not hold it
    aborted = await client.send({"type": "abort"}, timeout=10)
    settled = await client.wait_for("agent_settled", timeout=10)
    client.process.stdin.close()
    assert await exit_code(client) == 0
    assert state["data"]["isStreaming"] is True and aborted["success"] is True
    assert settled[-1]["aborted"] is True


async def test_a_blocking_sync_plugin_tool_does_not_block_the_rpc_loop(agent_env_factory, fake_llm, tmp_path, evil):
    fake_llm.set_script([{"tool_calls": [{"name": "nap", "arguments": {}}]}, {"text": "unused"}])
    client = await start(env_with(agent_env_factory), tmp_path, evil)
    await client.send({"type": "prompt", "message": "nap"})
    updates = [e async for e in client.events_until("tool_execution_update")]
    state = await client.send({"type": "get_state"}, timeout=10)
    aborted = await client.send({"type": "abort"}, timeout=10)
    settled = await client.wait_for("agent_settled", timeout=10)
    client.process.stdin.close()
    assert await exit_code(client) == 0
    assert state["data"]["isStreaming"] is True and aborted["success"] is True
    assert settled[-1] == {"type": "agent_settled", "aborted": True}
    assert updates[-1]["partialResult"]["content"] == [{"type": "text", "text": "napping"}]


async def test_stdin_eof_bounds_a_blocking_sync_plugin_tool_then_aborts_and_exits(agent_env_factory, fake_llm,
                                                                                    tmp_path, evil):
    fake_llm.set_script([{"tool_calls": [{"name": "nap", "arguments": {}}]}, {"text": "unused"}])
    client = await start(env_with(agent_env_factory, handler_timeout_ms=300), tmp_path, evil)
    await client.send({"type": "prompt", "message": "nap"})
    [e async for e in client.events_until("tool_execution_update")]
    client.process.stdin.close()
    assert await exit_code(client) == 0
    await client.close()
    kinds = [r["type"] for r in client.records]
    error = next(r for r in client.records if r["type"] == "extension_error")
    assert error["event"] == "tool:nap" and "still running 0.3 s after stdin closed" in error["error"]
    assert kinds.index("extension_error") < kinds.index("tool_execution_end") < kinds.index("agent_settled")
    assert next(r for r in client.records if r["type"] == "agent_settled") == {"type": "agent_settled",
                                                                               "aborted": True}
    assert len(fake_llm.requests) == 1 and said_bye(client)


async def test_a_sync_command_uses_ctx_from_its_thread(agent_env_factory, tmp_path, evil):
    async with await start(env_with(agent_env_factory), tmp_path, evil) as client:
        await client.send({"type": "prompt", "message": "/syncask"})
        request = await next_request(client, "confirm")
        answer(client, request["id"], confirmed=True)
        result = await notification(client)
        settled = await client.wait_for("agent_settled")
    assert result == "syncask -> True (streaming: False)" and settled[-1]["aborted"] is False


@pytest.mark.parametrize("command, said", [("/stop", "stopped"), ("/syncstop", "sync stopped")])
async def test_a_command_aborting_the_run_is_not_cancelled_by_its_own_abort(agent_env_factory, fake_llm, tmp_path,
                                                                            evil, command, said):
    fake_llm.set_script([{"text": "a long answer that hangs half way", "hang_after": 3, "hang_ms": 30000}])
    async with await start(env_with(agent_env_factory), tmp_path, evil) as client:
        await client.send({"type": "prompt", "message": "write"})
        async for _ in client.events_until("message_update"):
            pass
        await client.send({"type": "prompt", "message": command})
        result = await notification(client)
        settled = (await client.wait_for("agent_settled"))[-1]  # after the command: it closes both prompts
        await client.send({"type": "get_state"})
    assert result == said and settled == {"type": "agent_settled", "aborted": True}  # the run was aborted
    assert [r.get("type") for r in client.records].count("agent_settled") == 1


async def test_a_plugin_reading_stdin_gets_nothing_and_steals_no_command(agent_env_factory, tmp_path, evil):
    async with await start(env_with(agent_env_factory), tmp_path, evil) as client:
        reply = client.send_nowait({"type": "prompt", "message": "/readstdin"})
        later = client.send_nowait({"type": "get_state"})
        result = await notification(client)
        replies = [await asyncio.wait_for(f, 10) for f in (reply, later)]
    assert result == "stdin '' child b''"
    assert [r["success"] for r in replies] == [True, True]


GREEDY = textwrap.dedent('''
    import pathlib
    import sys


    def setup(plugin):  # runs before print mode reads the piped prompt
        pathlib.Path("stolen.txt").write_text(repr(sys.stdin.read()))
''')


def test_print_mode_keeps_piped_stdin_from_plugins(agent_env, fake_llm, tmp_path):
    (tmp_path / "greedy.py").write_text(GREEDY)
    fake_llm.set_script([{"text": "seen"}])
    result = run(agent_env, tmp_path, "-e", str(tmp_path / "greedy.py"), "-p", "summarise", stdin=b"piped text\n")
    assert result.returncode == 0 and result.stdout.decode().strip() == "seen"
    assert (tmp_path / "stolen.txt").read_text() == "''"
    assert user_texts(fake_llm.requests[0]) == ["piped text\nsummarise"]


def test_print_mode_bounds_a_command_that_never_returns(agent_env_factory, tmp_path, evil):
    env = env_with(agent_env_factory, handler_timeout_ms=300)
    result = run(env, tmp_path, "-e", evil, "--no-session", "-p", "/hang", timeout=30)
    stderr = result.stderr.decode()
    assert result.returncode == 0, stderr
    assert "command:hang" in stderr and "TimeoutError" in stderr and "pluginHandlerTimeoutMs" in stderr


def test_json_mode_bounds_a_command_that_never_returns(agent_env_factory, tmp_path, evil):
    env = env_with(agent_env_factory, handler_timeout_ms=300)
    result = run(env, tmp_path, "-e", evil, "--no-session", "--mode", "json", "-p", "/hang", timeout=30)
    events = [json.loads(line) for line in result.stdout.decode().splitlines()]
    errors = [e for e in events if e.get("type") == "extension_error"]
    assert result.returncode == 0, result.stderr
    assert [e["event"] for e in errors] == ["command:hang"] and "TimeoutError" in errors[0]["error"]


@pytest.mark.parametrize("tool", ["nap", "snooze"])  # a blocked sync tool's thread, an async one that never ends
@pytest.mark.parametrize("mode", [["-p"], ["--mode", "json", "-p"]])
def test_print_and_json_mode_bound_a_plugin_tool_that_never_returns(agent_env_factory, fake_llm, tmp_path, evil,
                                                                     tool, mode):
    """Nobody can abort there: a plugin tool gets `pluginHandlerTimeoutMs`, as from stdin EOF on in RPC mode."""
    fake_llm.set_script([{"tool_calls": [{"name": tool, "arguments": {}}]}, {"text": "unused"}])
    env = env_with(agent_env_factory, handler_timeout_ms=300)
    result = run(env, tmp_path, "-e", evil, "--no-session", *mode, "go", timeout=30)
    shown = result.stdout.decode() + result.stderr.decode()
    assert result.returncode == 1, shown
    assert f"tool:{tool}" in shown and "still running 0.3 s after stdin closed (in print and JSON mode" in shown
    assert len(fake_llm.requests) == 1  # the aborted run asks the model nothing more


ECHO = textwrap.dedent('''
    import pathlib


    def setup(plugin):
        @plugin.command("stdin")
        async def record(args, ctx):
            pathlib.Path("args.txt").write_text(args)
''')


def test_piped_text_follows_a_plugin_command_so_it_still_runs(agent_env, fake_llm, tmp_path):
    (tmp_path / "echo.py").write_text(ECHO)
    result = run(agent_env, tmp_path, "-e", str(tmp_path / "echo.py"), "--no-session", "-p", "/stdin",
                 stdin=b"PIPED\n")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "args.txt").read_text() == "PIPED" and fake_llm.requests == []


def test_piped_text_follows_a_prompt_template_and_precedes_plain_text(agent_env, fake_llm, tmp_path):
    (tmp_path / "review.md").write_text("Review this: $@")
    fake_llm.set_script([{"text": "ok"}, {"text": "ok"}])
    templated = run(agent_env, tmp_path, "--no-session", "--prompt-template", "review.md", "-p", "/review",
                    stdin=b"DIFF\n")
    plain = run(agent_env, tmp_path, "--no-session", "-p", "/unknown thing", stdin=b"DIFF\n")
    assert templated.returncode == 0 and plain.returncode == 0, (templated.stderr, plain.stderr)
    assert user_texts(fake_llm.requests[0]) == ["Review this: DIFF"]
    assert user_texts(fake_llm.requests[1]) == ["DIFF\n/unknown thing"]


@pytest.mark.parametrize("end", ["sigterm", "eof"])
async def test_a_command_ignoring_cancellation_still_gets_its_closing_agent_settled(agent_env_factory, tmp_path,
                                                                                    evil, end):
    client = await start(env_with(agent_env_factory, handler_timeout_ms=300), tmp_path, evil)
    assert (await client.send({"type": "prompt", "message": "/stubborn"}))["success"] is True
    if end == "sigterm":
        client.process.send_signal(signal.SIGTERM)
    else:
        client.process.stdin.close()
    assert await exit_code(client) == (128 + signal.SIGTERM if end == "sigterm" else 0)
    await client.close()
    settled = [r for r in client.records if r.get("type") == "agent_settled"]
    assert settled == [{"type": "agent_settled", "aborted": True}]


async def test_abort_in_one_write_refuses_the_prompt_before_it_and_not_the_one_after(agent_env_factory, fake_llm,
                                                                                    tmp_path, evil):
    """Prompts and `abort` take their places on arrival, even as long commands (docs/rpc.md, "Response order")."""
    fake_llm.set_script([{"text": "answered"}])
    client = await start(env_with(agent_env_factory, handler_timeout_ms=120000), tmp_path, evil)
    client.write_raw(b'{"id":"p1","type":"prompt","message":"hang forever"}\n{"id":"a","type":"abort"}\n'
                     b'{"id":"p2","type":"prompt","message":"after"}\n')
    replies: dict[str, dict] = {}
    while len(replies) < 3:
        event = await client.next_event(timeout=10)
        if event["type"] == "response":
            replies[event["id"]] = event
    await client.wait_for("agent_settled", timeout=10)
    client.process.stdin.close()
    assert await exit_code(client) == 0
    assert replies["p1"]["success"] is False and replies["p1"]["error"].startswith("Aborted while plugin input")
    assert replies["a"]["success"] is True and replies["p2"]["data"] == {"disposition": "started"}
    assert [m for m in fake_llm.requests[0]["body"]["messages"] if m["role"] == "user"][-1]["content"] in (
        "after", [{"type": "text", "text": "after"}])


async def test_an_abort_refusal_names_what_each_prompt_was_waiting_for(agent_env_factory, fake_llm, tmp_path, evil):
    """The prompt in a plugin's input handler and the one queued behind it are refused, each saying why."""
    fake_llm.set_script([{"text": "answered"}])
    client = await start(env_with(agent_env_factory, handler_timeout_ms=120000), tmp_path, evil)
    client.write_raw(b'{"id":"p1","type":"prompt","message":"hang forever"}\n')
    await client.send({"type": "get_state"})  # the prompt is in its input handler by now (commands in order)
    client.write_raw(b'{"id":"p2","type":"prompt","message":"behind it"}\n{"id":"a","type":"abort"}\n')
    replies: dict[str, dict] = {}
    while len(replies) < 3:
        event = await client.next_event(timeout=10)
        if event["type"] == "response":
            replies[event["id"]] = event
    client.process.stdin.close()
    assert await exit_code(client) == 0
    assert replies["p1"]["error"] == "Aborted while plugin input handlers were running: the prompt was not sent"
    assert replies["p2"]["error"] == "Aborted while the prompts before it were taken in: the prompt was not sent"
    assert replies["a"]["success"] is True and fake_llm.requests == []


async def test_abort_while_before_run_hangs_keeps_the_prompt_and_the_run_ends_aborted(agent_env_factory, fake_llm,
                                                                                      tmp_path, evil):
    fake_llm.set_script([{"text": "never asked"}])
    async with await start(env_with(agent_env_factory), tmp_path, evil) as client:
        reply = await client.send({"type": "prompt", "message": "please hang-run"})
        aborted = await client.send({"type": "abort"}, timeout=10)
        events = await client.wait_for("agent_settled", timeout=10)
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    kinds = [e["type"] for e in events if e["type"] in ("agent_start", "agent_end", "agent_settled")]
    assert reply["data"] == {"disposition": "started"} and aborted["success"] is True
    assert kinds == ["agent_start", "agent_end", "agent_settled"] and events[-1]["aborted"] is True
    assert [(m["role"], m.get("stopReason")) for m in messages] == [("user", None), ("assistant", "aborted")]
    assert fake_llm.requests == []
