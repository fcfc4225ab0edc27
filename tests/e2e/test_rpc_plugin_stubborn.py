"""End to end: plugin code that catches its own cancellation and goes on (a handler, a tool, a command) cannot
hang the agent or leave a command or prompt unanswered: each is given up after its grace period and reported
(docs/plugins.md, "Time limits"; the real CLI with a plugin loaded by `-e`, the loopback fake LLM)."""

from __future__ import annotations

import asyncio
import textwrap

import pytest

from .test_rpc_plugin_hangs import GRACE_MS, env_with, exit_code, start

pytestmark = pytest.mark.real_process  # the process must exit at stdin EOF: only a real one shows it

STUBBORN = textwrap.dedent('''
    import asyncio


    async def forever():
        while True:
            try:
                await asyncio.sleep(100)
            except asyncio.CancelledError:  # swallows every cancellation
                pass


    def setup(plugin):
        @plugin.on("before_run")
        async def run_hook(event, ctx):
            if "stuck-run" in str(event.prompts):
                ctx.ui.notify("entered before_run")  # the test aborts once the handler runs
                await forever()

        @plugin.on("input")
        async def input_hook(event, ctx):
            if event.text == "stuck-input":
                ctx.ui.notify("entered input")
                await forever()

        @plugin.on("tool_call")
        async def call_hook(event, ctx):
            if event.args.get("command") == "echo stuck":
                await forever()

        @plugin.on("session_before_change")
        async def change_hook(event, ctx):
            await forever()

        @plugin.tool("stuck", description="Never ends")
        async def stuck(args, ctx):
            ctx.update("stuck now")
            await forever()

        @plugin.command("stubborn")
        async def stubborn(args, ctx):
            await forever()
''')


@pytest.fixture
def stubborn(tmp_path):
    path = tmp_path / "stubborn.py"
    path.write_text(STUBBORN)
    return str(path)


def errors(client) -> list[tuple[str, str]]:
    return [(r["event"], r["error"]) for r in client.records if r.get("type") == "extension_error"]


def given_up(client, event: str) -> bool:
    """The agent reported both the timeout and that it went on without the handler."""
    said = [error for name, error in errors(client) if name == event]
    return any("TimeoutError" in e for e in said) and any("ignored its cancellation" in e for e in said)


async def finish(client) -> None:
    client.process.stdin.close()
    assert await exit_code(client, timeout=15) == 0
    await client.close()


async def test_a_run_handler_ignoring_its_timeout_is_given_up_and_the_run_goes_on(agent_env_factory, fake_llm,
                                                                                  tmp_path, stubborn):
    fake_llm.set_script([{"text": "went on"}])
    client = await start(env_with(agent_env_factory, handler_timeout_ms=300), tmp_path, stubborn)
    events = await client.prompt_and_wait("please stuck-run", timeout=20)
    await finish(client)
    assert [e["type"] for e in events].count("agent_start") == 1 and len(fake_llm.requests) == 1
    assert events[-1] == {"type": "agent_settled", "aborted": False} and given_up(client, "before_run")


async def test_an_input_handler_ignoring_its_timeout_is_given_up_and_the_prompt_answered(agent_env_factory,
                                                                                         fake_llm, tmp_path,
                                                                                         stubborn):
    fake_llm.set_script([{"text": "went on"}])
    client = await start(env_with(agent_env_factory, handler_timeout_ms=300), tmp_path, stubborn)
    reply = await client.send({"type": "prompt", "message": "stuck-input"}, timeout=20)
    await client.wait_for("agent_settled", timeout=20)
    await finish(client)
    assert reply["data"] == {"disposition": "started"} and given_up(client, "input")


async def test_a_tool_call_handler_ignoring_its_timeout_blocks_the_call_and_the_run_goes_on(agent_env_factory,
                                                                                            fake_llm, tmp_path,
                                                                                            stubborn):
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": "echo stuck"}}]},
                         {"text": "done"}])
    client = await start(env_with(agent_env_factory, handler_timeout_ms=300), tmp_path, stubborn)
    events = await client.prompt_and_wait("go", timeout=20)
    await finish(client)
    end = next(e for e in events if e["type"] == "tool_execution_end")
    assert end["isError"] is True and "Blocked" in end["result"]["content"][0]["text"]
    assert events[-1] == {"type": "agent_settled", "aborted": False} and given_up(client, "tool_call")


async def test_a_veto_handler_ignoring_its_timeout_is_given_up_and_the_change_answered(agent_env_factory, tmp_path,
                                                                                       stubborn):
    client = await start(env_with(agent_env_factory, handler_timeout_ms=300), tmp_path, stubborn)
    reply = await client.send({"type": "new_session"}, timeout=20)
    await finish(client)
    assert reply["success"] is True and reply["data"] == {"cancelled": False}
    assert given_up(client, "session_before_change")


@pytest.mark.parametrize("hang", ["abort", "eof"])
async def test_abort_and_eof_give_up_a_plugin_tool_ignoring_its_cancellation(agent_env_factory, fake_llm,
                                                                             tmp_path, stubborn, hang):
    fake_llm.set_script([{"tool_calls": [{"name": "stuck", "arguments": {}}]}, {"text": "unused"}])
    client = await start(env_with(agent_env_factory, handler_timeout_ms=300), tmp_path, stubborn)
    await client.send({"type": "prompt", "message": "call it"})
    await client.wait_for("tool_execution_update", timeout=20)  # inside `execute`
    if hang == "abort":
        aborted = await client.send({"type": "abort"}, timeout=10)
        assert aborted["success"] is True
        assert (await client.wait_for("agent_settled", timeout=10))[-1]["aborted"] is True
    await finish(client)
    assert any(name == "tool:stuck" and "ignored its cancellation" in e for name, e in errors(client))
    assert len(fake_llm.requests) == 1


async def test_a_command_ignoring_abort_settles_its_prompt_before_abort_is_answered(agent_env_factory, tmp_path,
                                                                                   stubborn):
    client = await start(env_with(agent_env_factory), tmp_path, stubborn)
    assert (await client.send({"type": "prompt", "message": "/stubborn"}))["success"] is True
    aborted = await client.send({"type": "abort"}, timeout=10)
    state = await client.send({"type": "get_state"}, timeout=10)
    await finish(client)
    kinds = [(r.get("type"), r.get("id")) for r in client.records]
    settled = [r for r in client.records if r.get("type") == "agent_settled"]
    assert aborted["success"] is True and state["data"]["isStreaming"] is False
    assert settled == [{"type": "agent_settled", "aborted": True}]  # once, not again at exit
    assert kinds.index(("agent_settled", None)) < kinds.index(("response", aborted["id"]))
    assert any(name == "command:stubborn" and "ignored its cancellation" in e for name, e in errors(client))


@pytest.mark.parametrize("message", ["please stuck-run", "stuck-input"])
async def test_abort_gives_up_a_hook_ignoring_its_cancellation(agent_env_factory, fake_llm, tmp_path, stubborn,
                                                               message):
    """The round-5 input: a stubborn `before_run` (or `input`) handler, a long limit, then `abort`, then EOF."""
    client = await start(env_with(agent_env_factory, handler_timeout_ms=120000), tmp_path, stubborn)
    pending = client.send_nowait({"type": "prompt", "message": message})
    notified = await client.wait_for("extension_ui_request", timeout=10)  # the handler runs now
    assert notified[-1]["message"].startswith("entered ")
    aborted = await client.send({"type": "abort"}, timeout=10)
    reply = await asyncio.wait_for(pending, 10)
    await finish(client)
    assert aborted["success"] is True and fake_llm.requests == []
    if message == "stuck-input":
        assert reply["success"] is False and "Aborted" in reply["error"]
    else:
        assert reply["data"] == {"disposition": "started"}
        settled = [r for r in client.records if r.get("type") == "agent_settled"]
        assert settled == [{"type": "agent_settled", "aborted": True}]
    assert any("ignored its cancellation" in e for _, e in errors(client))


async def test_an_abort_right_behind_the_prompt_never_waits_for_the_stubborn_hook(agent_env_factory, fake_llm,
                                                                                 tmp_path, stubborn):
    """`prompt` and `abort` in one write: the abort can come before the run's pre-run waits begin (it once
    found nothing to cancel, and the stubborn `before_run` then held the run for its whole 120 s limit)."""
    client = await start(env_with(agent_env_factory, handler_timeout_ms=120000), tmp_path, stubborn)
    started = 0
    for _ in range(3):
        pending = client.send_nowait({"type": "prompt", "message": "please stuck-run"})
        aborted = await client.send({"type": "abort"}, timeout=10)  # was: no answer for 120 s
        reply = await asyncio.wait_for(pending, 10)
        assert aborted["success"] is True
        if reply["success"]:  # the abort came once the prompt was taken: its run starts aborted
            started += 1
            assert (await client.wait_for("agent_settled", timeout=10))[-1]["aborted"] is True
        else:  # the abort came while the input handlers ran: the prompt was not taken
            assert "Aborted" in reply["error"]
    messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    await finish(client)
    assert [m["role"] for m in messages].count("user") == started and fake_llm.requests == []


BLOCKING = textwrap.dedent('''
    import threading
    import time

    release = threading.Event()  # never set: each blocking call outlives its cancellation


    def setup(plugin):
        @plugin.on("before_run")
        def run_hook(event, ctx):
            if "block-run" in str(event.prompts):
                ctx.ui.notify("entered before_run")
                release.wait(30)

        @plugin.tool("nap", description="Blocks its thread")
        def nap(args, ctx):
            ctx.update("napping")
            release.wait(30)

        @plugin.command("block")
        def block(args, ctx):
            ctx.ui.notify("entered block")
            release.wait(30)
''')


async def run_and_abort(client, fake_llm, case: str) -> dict:
    """Start what `case` names, abort it once its plugin code runs; the `abort` response."""
    if case == "nap":
        fake_llm.set_script([{"tool_calls": [{"name": "nap", "arguments": {}}]}, {"text": "unused"}])
        await client.send({"type": "prompt", "message": "call it"})
        await client.wait_for("tool_execution_update", timeout=20)
    else:
        client.send_nowait({"type": "prompt", "message": "/block" if case == "block" else "please block-run"})
        await client.wait_for("extension_ui_request", timeout=20)
    return await client.send({"type": "abort"}, timeout=10)


@pytest.mark.parametrize("case", ["nap", "block", "block-run"])
async def test_blocked_sync_plugin_code_is_reported_before_its_run_settles(agent_env_factory, fake_llm, tmp_path,
                                                                           case):
    """Synchronous plugin code cannot see its cancellation: a worker thread still running its grace after `abort`
    is reported as ignoring it, and (as for async code) before the run settles, so a client that reads events
    up to `agent_settled` (or up to the `abort` response) has the report. The client then closes stdin. The
    `block` case keeps the agent's default grace (1 s), the others the tests' shorter one."""
    path = tmp_path / "blocking.py"
    path.write_text(BLOCKING)
    grace = "1 s" if case == "block" else f"{GRACE_MS / 1000:g} s"
    client = await start(env_with(agent_env_factory, grace_ms=None if case == "block" else GRACE_MS), tmp_path,
                         str(path))
    aborted = await run_and_abort(client, fake_llm, case)
    await finish(client)
    kinds = [(r.get("type"), r.get("id")) for r in client.records]
    event = {"nap": "tool:nap", "block": "command:block", "block-run": "before_run"}[case]
    assert any(name == event and f"ignored its cancellation for {grace}" in e for name, e in errors(client))
    report = kinds.index(("extension_error", None))
    assert report < kinds.index(("agent_settled", None)) < kinds.index(("response", aborted["id"]))
    if case == "nap":
        assert report < kinds.index(("tool_execution_end", None)) and fake_llm.requests[1:] == []


@pytest.mark.parametrize("case", ["tool", "command"])
async def test_async_plugin_code_ignoring_abort_is_reported_before_its_run_settles(agent_env_factory, fake_llm,
                                                                                   tmp_path, stubborn, case):
    """The tester's input: abort mid-call, read events to `agent_settled`, close stdin: the report is there."""
    if case == "tool":
        fake_llm.set_script([{"tool_calls": [{"name": "stuck", "arguments": {}}]}, {"text": "unused"}])
    client = await start(env_with(agent_env_factory), tmp_path, stubborn)
    if case == "tool":
        await client.send({"type": "prompt", "message": "call it"})
        await client.wait_for("tool_execution_update", timeout=20)
    else:
        await client.send({"type": "prompt", "message": "/stubborn"})
    aborted = client.send_nowait({"type": "abort"})
    settled = await client.wait_for("agent_settled", timeout=10)
    assert [e for e in settled if e["type"] == "extension_error"]  # already read when the run settled
    await asyncio.wait_for(aborted, 10)
    await finish(client)
