"""Faults a tester found in the plugin layer, each input kept as a test: BaseExceptions from plugin code, malformed
handler results, a flood of observer errors, late registrations, a hanging setup, and plugins changing the
session's live state. In-process, on a real AgentSession with the scripted faux model."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

import pytest

from agent_forge.agent.types import ToolError
from agent_forge.plugins import AddContext, Block, Cancel, PluginError, Transform, install_plugins
from agent_forge.plugins.isolation import describe_error
from agent_forge.plugins.loader import PluginSource, load_plugin
from agent_forge.sdk import FauxResponse, create_agent_session, faux_model, faux_requests, set_faux_responses

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


@pytest.fixture
def key(request) -> str:
    return request.node.name


@pytest.fixture
def make(tmp_path, key):
    async def build(*setups, settings=None, **options):
        options.setdefault("no_session", True)
        agent_dir = tmp_path / "agent"
        if settings is not None:
            agent_dir.mkdir(exist_ok=True)
            (agent_dir / "settings.json").write_text(json.dumps(settings))
        session = create_agent_session(cwd=str(tmp_path), model=faux_model(key=key), agent_dir=agent_dir, **options)
        events: list[dict] = []
        session.subscribe(events.append)
        runner = await install_plugins(session, plugins=setups, discover=False)
        return session, runner, events

    return build


def errors(events, event=None):
    return [e for e in events if e["type"] == "extension_error" and event in (None, e["event"])]


def kinds(events):
    return [e["type"] for e in events if e["type"] in ("agent_start", "agent_end", "agent_settled")]


def tool_ends(events):
    order = [e["toolCallId"] for e in events if e["type"] == "tool_execution_start"]
    return sorted((e for e in events if e["type"] == "tool_execution_end"), key=lambda e: order.index(e["toolCallId"]))


# -- 1. SystemExit / KeyboardInterrupt from plugin code ---------------------------------------------------


def _parse_bogus(args, ctx):
    parser = argparse.ArgumentParser(prog="strict")
    parser.add_argument("--name")
    return parser.parse_args(["--bogus"]).name  # argparse exits: SystemExit(2)


def _interrupt(args, ctx):
    raise KeyboardInterrupt


async def _async_exit(args, ctx):
    await asyncio.sleep(0)
    sys.exit(7)


async def test_plugin_tools_raising_systemexit_or_keyboardinterrupt_are_error_results(make, key, capfd):
    set_faux_responses([FauxResponse(tool_calls=[("strict", {}), ("interrupted", {}), ("exiting", {})]),
                        FauxResponse(text="still here")], key=key)

    def tools(plugin):
        plugin.register_tool("strict", _parse_bogus, description="Parses options with argparse")
        plugin.register_tool("interrupted", _interrupt, description="Raises KeyboardInterrupt")
        plugin.register_tool("exiting", _async_exit, description="Exits from a coroutine")

    session, _, events = await make(tools)
    await session.prompt_and_wait("go")
    ends = tool_ends(events)
    assert [e["isError"] for e in ends] == [True, True, True]
    assert [e["result"]["content"][0]["text"] for e in ends] == ["SystemExit: 2", "KeyboardInterrupt", "SystemExit: 7"]
    assert session.last_assistant_text() == "still here"
    assert "unrecognized arguments: --bogus" in capfd.readouterr().err


async def test_the_plugin_tool_wrapper_itself_turns_baseexceptions_into_tool_errors(make):
    def tools(plugin):
        plugin.register_tool("strict", _parse_bogus, description="Parses options with argparse")

    session, _, _ = await make(tools)
    tool = next(t for t in session.agent.tools if t.name == "strict")
    with pytest.raises(ToolError, match="SystemExit: 2"):
        await tool.execute("call-1", {}, lambda partial: None)


def _exit_5():
    sys.exit(5)


def _keyboard_interrupt():
    raise KeyboardInterrupt


@pytest.mark.parametrize("raise_it, shown", [(_exit_5, "SystemExit: 5"), (_keyboard_interrupt, "KeyboardInterrupt")],
                         ids=["sys.exit", "KeyboardInterrupt"])
async def test_commands_and_input_handlers_raising_baseexceptions_are_reported(make, key, raise_it, shown):
    set_faux_responses([FauxResponse(text="answered")], key=key)

    def exits(plugin):
        plugin.register_command("quit", lambda args, ctx: raise_it())

        @plugin.on("input")
        async def leave(event, ctx):
            if event.text == "leave":
                raise_it()

    session, runner, events = await make(exits)
    assert await session.submit("/quit") == "handled"
    await runner.wait_for_tasks()
    assert await session.submit("leave") == "started"
    await session.wait_for_idle()
    assert [(e["event"], e["error"]) for e in errors(events)] == [("command:quit", shown), ("input", shown)]
    assert session.last_assistant_text() == "answered"


async def test_every_hook_contains_baseexceptions(make, key):
    set_faux_responses([FauxResponse(tool_calls=[("bash", {"command": "echo ran"})]), FauxResponse(text="done")],
                       key=key)

    def exit_5(event, ctx):
        sys.exit(5)

    async def interrupt(event, ctx):
        raise KeyboardInterrupt

    def everywhere(plugin):
        for event in ("before_run", "session_before_change", "session_start", "session_shutdown", "agent_start"):
            plugin.on(event, exit_5)
        plugin.on("tool_call", interrupt)
        plugin.on("agent_end", interrupt)  # an async observer: runs as its own task

    session, runner, events = await make(everywhere)
    await runner.start()
    await session.prompt_and_wait("go")
    assert await session.new_session() is False  # a failing veto does not cancel
    await session.close()
    assert sorted((e["event"], e["error"]) for e in errors(events)) == sorted([
        ("session_start", "SystemExit: 5"), ("before_run", "SystemExit: 5"), ("agent_start", "SystemExit: 5"),
        ("tool_call", "KeyboardInterrupt"), ("agent_end", "KeyboardInterrupt"),
        ("session_before_change", "SystemExit: 5"), ("session_start", "SystemExit: 5"),
        ("session_shutdown", "SystemExit: 5")])
    [end] = tool_ends(events)
    assert end["isError"] and "failed while checking this call" in end["result"]["content"][0]["text"]


async def test_a_cancelled_error_raised_by_plugin_code_is_a_failure_but_abort_still_cancels_a_tool(make, key):
    set_faux_responses([FauxResponse(tool_calls=[("wait", {})]), FauxResponse(text="never")], key=key)
    started, cancelled = asyncio.Event(), []

    def plugin_code(plugin):
        @plugin.command("odd")
        def odd(args, ctx):
            raise asyncio.CancelledError("not a real cancellation")

        @plugin.tool("wait", description="Waits until aborted")
        async def wait(args, ctx):
            started.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled.append(True)
                raise

    session, runner, events = await make(plugin_code)
    await session.submit("/odd")
    await runner.wait_for_tasks()
    assert [(e["event"], e["error"]) for e in errors(events)] == [
        ("command:odd", "CancelledError: not a real cancellation")]
    session.prompt("go")
    await started.wait()
    await session.abort()
    assert cancelled == [True] and events[-1] == {"type": "agent_settled", "aborted": True}


async def test_a_setup_raising_keyboardinterrupt_is_a_load_warning(make):
    def interrupted(plugin):
        raise KeyboardInterrupt

    def fine(plugin):
        plugin.register_command("fine", lambda args, ctx: None)

    session, runner, _ = await make(interrupted, fine)
    assert [p.id for p in runner.plugins] == ["fine"]
    assert any("interrupted: KeyboardInterrupt" in w for w in session.warnings)


def test_describe_error_never_raises():
    class Broken(Exception):
        def __str__(self):
            raise RuntimeError("no text")

    assert describe_error(Broken()) == "Broken" and describe_error(SystemExit(3)) == "SystemExit: 3"


# -- 2. malformed handler results -------------------------------------------------------------------------


@pytest.mark.parametrize("build, problem", [
    (lambda event: AddContext(None), "messages must be a string or a list of strings, got None"),
    (lambda event: AddContext(["extra"], system_prompt=123), "system_prompt must be a string or None, got int"),
    (lambda event: AddContext(["extra", 5]), "messages must be a string or a list of strings"),
    (lambda event: AddContext("extra", display="yes"), "display must be True or False, got str"),
], ids=["messages-None", "system_prompt-int", "messages-not-text", "display-str"])
async def test_malformed_before_run_results_are_reported_and_every_prompt_still_runs(make, key, build, problem):
    set_faux_responses([FauxResponse(text="first"), FauxResponse(text="second")], key=key)

    def malformed(plugin):
        plugin.on("before_run", lambda event, ctx: build(event))

    session, _, events = await make(malformed)
    await session.prompt_and_wait("one")
    await session.prompt_and_wait("two")
    assert kinds(events) == ["agent_start", "agent_end", "agent_settled"] * 2
    assert [m["role"] for m in session.messages] == ["user", "assistant", "user", "assistant"]
    assert session.last_assistant_text() == "second"
    assert [e["event"] for e in errors(events)] == ["before_run", "before_run"]
    assert all(problem in e["error"] and e["error"].startswith("TypeError: AddContext") for e in errors(events))
    assert len(faux_requests(key)[0].context["messages"]) == 1  # nothing was added


async def test_results_changed_after_they_were_built_and_invalid_event_changes_are_ignored(make, key):
    set_faux_responses([FauxResponse(text="ok")], key=key)

    def sneaky(plugin):
        @plugin.on("before_run")
        def add(event, ctx):
            event.system_prompt = 123  # not through AddContext: checked all the same
            result = AddContext(["fine"])
            result.messages.append(None)  # the list inside a frozen result can still change
            return result

        @plugin.on("input")
        def erase(event, ctx):
            event.text = None

    session, _, events = await make(sneaky)
    await session.prompt_and_wait("question")
    request = faux_requests(key)[0].context
    assert request["messages"][-1]["content"] == [{"type": "text", "text": "question"}]
    assert isinstance(request["systemPrompt"], str) and request["systemPrompt"]
    assert [(e["event"], e["error"].split(":")[0]) for e in errors(events)] == [
        ("input", "invalid change ignored"), ("before_run", "invalid change ignored"),
        ("before_run", "invalid AddContext")]


@pytest.mark.parametrize("result, problem", [
    (lambda: Transform(None), "text must be a string, got NoneType"),
    (lambda: Transform("x", images={"type": "image"}), "images must be a list of image blocks or None"),
    (lambda: Transform("x", images=[{"type": "image", "data": "%%%", "mimeType": "image/png"}]), "images[0]"),
    (lambda: Transform("x", images=[{"type": "image", "data": PNG, "mimeType": "image/tiff"}]), "images[0]"),
], ids=["text-None", "images-dict", "image-not-base64", "image-type"])
async def test_malformed_input_results_are_reported_and_the_prompt_goes_on(make, key, result, problem):
    set_faux_responses([FauxResponse(text="ok")], key=key)

    def malformed(plugin):
        plugin.on("input", lambda event, ctx: result())

    session, _, events = await make(malformed)
    await session.prompt_and_wait("as typed")
    assert faux_requests(key)[0].context["messages"][-1]["content"] == [{"type": "text", "text": "as typed"}]
    [error] = errors(events)
    assert error["event"] == "input" and problem in error["error"]


async def test_a_valid_transform_with_an_image_is_used(make, key):
    set_faux_responses([FauxResponse(text="ok")], key=key)
    image = {"type": "image", "data": PNG, "mimeType": "image/png"}

    def picture(plugin):
        plugin.on("input", lambda event, ctx: Transform("look", images=[image]))

    session, _, events = await make(picture)
    await session.prompt_and_wait("anything")
    assert faux_requests(key)[0].context["messages"][-1]["content"] == [{"type": "text", "text": "look"}, image]
    assert errors(events) == []


async def test_an_invalid_block_blocks_and_an_invalid_cancel_does_not_cancel(make, key):
    set_faux_responses([FauxResponse(tool_calls=[("bash", {"command": "echo never"})]), FauxResponse(text="ok")],
                       key=key)

    def malformed(plugin):
        @plugin.on("tool_call")
        def block(event, ctx):
            result = Block("no")
            object.__setattr__(result, "reason", None)  # what the constructor check would have refused
            return result

        plugin.on("session_before_change", lambda event, ctx: Cancel(reason=5))

    session, _, events = await make(malformed)
    await session.prompt_and_wait("run")
    [end] = tool_ends(events)
    assert end["isError"] and "failed while checking this call" in end["result"]["content"][0]["text"]
    assert await session.new_session() is False
    assert [(e["event"], e["error"]) for e in errors(events)] == [
        ("tool_call", "invalid Block: reason must be a string, got NoneType"),
        ("session_before_change", "TypeError: Cancel: reason must be a string or None, got int")]


def test_results_check_their_fields_when_built():
    with pytest.raises(TypeError, match="AddContext: messages"):
        AddContext(None)
    with pytest.raises(TypeError, match="Block: reason"):
        Block(None)
    assert AddContext(("a", "b")).texts() == ["a", "b"] and AddContext("a").texts() == ["a"]


# -- 3. one report per failing observer and event type per run ------------------------------------------


async def test_a_failing_message_update_observer_is_reported_once_per_run(make, key, capfd):
    set_faux_responses([FauxResponse(text="a fairly long answer, streamed in many small deltas", chunk_size=2),
                        FauxResponse(text="another long answer in many deltas", chunk_size=2)], key=key)

    def noisy(plugin):
        plugin.on("message_update", lambda event, ctx: 1 / 0)

        @plugin.on("message_update")
        async def also_noisy(event, ctx):
            raise SystemExit(1)

    session, runner, events = await make(noisy)
    await session.prompt_and_wait("one")
    await runner.wait_for_tasks()
    first = [e["error"] for e in errors(events)]
    await session.prompt_and_wait("two")
    await runner.wait_for_tasks()
    updates = [e for e in events if e["type"] == "message_update"]
    assert len(updates) > 20
    assert sorted(first) == ["SystemExit: 1", "ZeroDivisionError: division by zero"]
    assert len(errors(events, "message_update")) == 4  # each handler once in each of the two runs
    assert "not reported until the next run" in capfd.readouterr().err


# -- 4. late registrations --------------------------------------------------------------------------------


async def test_registering_after_setup_raises_a_clear_error(make):
    kept = {}

    def late(plugin):
        kept["plugin"] = plugin

        @plugin.command("later")
        def later(args, ctx):
            plugin.register_command("added", lambda a, c: None)

    session, runner, events = await make(late)
    await session.submit("/later")
    await runner.wait_for_tasks()
    [error] = errors(events)
    assert error["event"] == "command:later" and "PluginError" in error["error"]
    assert "after setup has returned" in error["error"] and "inside setup(plugin)" in error["error"]
    plugin = kept["plugin"]
    for register in (lambda: plugin.command("x"), lambda: plugin.tool("t", description="d"),
                     lambda: plugin.on("agent_end", print)):
        with pytest.raises(PluginError, match="after setup has returned"):
            register()
    assert [c["name"] for c in session.hooks.commands()] == ["later"]
    assert not any(t.name == "t" for t in session.agent.tools)


async def test_an_async_setup_registers_until_it_returns(make):
    async def slow(plugin):
        await asyncio.sleep(0)
        plugin.register_command("after-await", lambda args, ctx: None)

    session, _, _ = await make(slow)
    assert [c["name"] for c in session.hooks.commands()] == ["after-await"]


# -- 5. a hanging async setup -----------------------------------------------------------------------------


async def test_a_hanging_async_setup_is_skipped_after_the_timeout(tmp_path, key):
    async def hangs(plugin):
        await asyncio.Event().wait()

    def fine(plugin):
        plugin.register_command("fine", lambda args, ctx: None)

    session = create_agent_session(cwd=str(tmp_path), model=faux_model(key=key), agent_dir=tmp_path / "agent",
                                   no_session=True)
    runner = await install_plugins(session, plugins=[hangs, fine], discover=False, setup_timeout=0.05)
    assert [p.id for p in runner.plugins] == ["fine"]
    assert any("hangs: setup did not finish within 0.05 s" in w for w in session.warnings)


async def test_a_setup_ignoring_its_cancellation_does_not_hang_loading():
    release = asyncio.Event()

    async def stubborn(plugin):
        while not release.is_set():
            try:
                await release.wait()
            except asyncio.CancelledError:
                pass  # ignores the cancellation

    with pytest.raises(Exception, match="did not finish within 0.01 s"):
        await load_plugin(PluginSource("stubborn", "object", "temporary", value=stubborn), setup_timeout=0.01)
    release.set()
    leftovers = asyncio.all_tasks() - {asyncio.current_task()}
    await asyncio.wait(leftovers)
    assert all(task.done() for task in leftovers)


async def test_the_setup_timeout_comes_from_settings(make):
    async def hangs(plugin):
        await asyncio.Event().wait()

    session, runner, _ = await make(hangs, settings={"pluginSetupTimeoutMs": 20})
    assert runner is None and any("within 0.02 s" in w for w in session.warnings)
    session, runner, _ = await make(lambda plugin: None, settings={"pluginSetupTimeoutMs": "soon"})
    assert runner is not None and any("pluginSetupTimeoutMs must be a positive number" in w for w in session.warnings)


# -- 6. plugins cannot change the session's live state -----------------------------------------------------


async def test_the_session_view_and_events_give_copies(make, key):
    set_faux_responses([FauxResponse(text="first"), FauxResponse(text="second")], key=key)

    def meddler(plugin):
        @plugin.command("meddle")
        def meddle(args, ctx):
            ctx.session.model["id"] = "evil"
            ctx.session.model["cost"]["input"] = 1e9
            ctx.session.messages[0]["content"][0]["text"] = "rewritten"

        @plugin.on("before_run")
        def prompts(event, ctx):
            event.prompts[0]["content"][0]["text"] = "changed in before_run"

        @plugin.on("message_end")
        def message(event, ctx):
            event["message"]["content"].clear()

    session, runner, events = await make(meddler)
    await session.prompt_and_wait("hello")
    await session.submit("/meddle")
    await runner.wait_for_tasks()
    await session.prompt_and_wait("again")
    assert session.model["id"] == faux_model(key=key)["id"] and session.model["cost"]["input"] != 1e9
    second = faux_requests(key)[1]
    assert second.model["id"] == faux_model(key=key)["id"]
    assert second.context["messages"][0]["content"] == [{"type": "text", "text": "hello"}]
    assert second.context["messages"][1]["content"] == [{"type": "text", "text": "first"}]
    assert errors(events) == []


def test_private_copies_share_only_what_cannot_be_copied():
    import threading

    from agent_forge.plugins.values import private_copy

    lock = threading.Lock()  # a tool's details may hold anything
    event = {"type": "tool_execution_end", "result": {"content": [{"type": "text", "text": "x"}],
                                                       "details": {"lock": lock}}}
    copied = private_copy(event)
    copied["result"]["content"].clear()
    assert event["result"]["content"] == [{"type": "text", "text": "x"}] and copied["result"]["details"]["lock"] is lock


async def test_a_plugin_task_cancelled_before_it_starts_leaves_no_never_awaited_warning():
    """Abort storms cancel plugin command tasks before their first step; the command's coroutine was then
    collected unawaited ("coroutine ... was never awaited" on stderr, in the client's view)."""
    import gc
    import warnings

    from agent_forge.plugins.isolation import spawn_contained

    async def command() -> None:
        raise AssertionError("never runs")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        task = spawn_contained(command())
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        del task
        gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message)]


async def test_an_sdk_object_that_is_no_plugin_is_named_on_one_line(tmp_path, key):
    """Its `__repr__` was shown raw: a newline or an escape code split the warning or drove the terminal."""
    class Odd:
        __name__ = 42  # not a name: the plugin is reported as `plugin<n>`

        def __repr__(self):
            return "odd\nWarning: \x1b[31mforged"

    class Broken:
        def __repr__(self):
            raise RuntimeError("no repr")

    session = create_agent_session(cwd=str(tmp_path), model=faux_model(key=key), agent_dir=tmp_path / "agent",
                                   no_session=True)
    assert await install_plugins(session, plugins=[Odd(), Broken()], discover=False) is None
    assert session.warnings[-2:] == [
        "Plugin not loaded: odd\\nWarning: \\x1b[31mforged is neither a module nor a setup function",
        "Plugin not loaded: <Broken object> is neither a module nor a setup function"]
