"""The plugin runner in-process: a real AgentSession on the scripted faux model, plugins given as setup
functions; handler chaining, error isolation, session hooks, observation and shutdown."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agent_forge.agent.types import ToolError
from agent_forge.plugins import HANDLED, AddContext, Block, Cancel, Transform, install_plugins
from agent_forge.plugins.runner import parse_command
from agent_forge.plugins.ui import RpcUI
from agent_forge.coding.errors import CommandError
from agent_forge.sdk import FauxResponse, create_agent_session, faux_model, faux_requests, set_faux_responses


@pytest.fixture
def key(request) -> str:
    return request.node.name


@pytest.fixture
def make(tmp_path, key):
    sessions = []

    async def build(*setups, ui=None, **options):
        options.setdefault("no_session", True)
        session = create_agent_session(cwd=str(tmp_path), model=faux_model(key=key), agent_dir=tmp_path / "agent",
                                       **options)
        events: list[dict] = []
        session.subscribe(events.append)
        runner = await install_plugins(session, plugins=setups, discover=False, ui=ui)
        sessions.append(session)
        return session, runner, events

    yield build


def errors(events):
    return [e for e in events if e["type"] == "extension_error"]


@pytest.mark.parametrize("text, parsed", [
    ("/x", ("x", "")), ("/x  a b ", ("x", "a b")), ("  /x\nline two", ("x", "line two")),
    ("x", None), ("/", None), ("/ x", None), ("", None)])
def test_parse_command(text, parsed):
    assert parse_command(text) == parsed


async def test_no_plugins_means_no_runner(make):
    session, runner, _ = await make()
    assert runner is None and session.hooks.commands() == []


async def test_commands_run_as_tasks_and_first_registration_wins(make, key):
    ran: list[str] = []

    def first(plugin):
        plugin.register_command("go", lambda args, ctx: ran.append(f"first {args}"), description="Go")

    def second(plugin):
        @plugin.command("go")
        async def go(args, ctx):
            ran.append("second")

    session, runner, _ = await make(first, second)
    assert session.hooks.command_name("/go now") == "go" and session.hooks.command_name("/other") is None
    assert await session.submit("/go now") == "handled"
    assert ran == []  # started, not yet run: it runs on its own
    await runner.shutdown()
    assert ran == ["first now"]
    assert any("command /go is already registered by plugin first" in w for w in session.warnings)
    item = session.hooks.commands()[0]
    assert item["sourceInfo"] == {"path": "<plugin:first:go>", "source": "first", "scope": "temporary",
                                  "origin": "top-level"}
    with pytest.raises(CommandError, match="/go"):
        session.steer("/go later")
    with pytest.raises(CommandError, match="/go"):
        session.follow_up("/go later")


async def test_input_handlers_chain_and_handled_stops(make, key):
    set_faux_responses([FauxResponse(text="ok")], key=key)
    seen: list[str] = []

    def upper(plugin):
        plugin.on("input", lambda event, ctx: Transform(event.text.upper()))

    def watcher(plugin):
        @plugin.on("input")
        async def watch(event, ctx):
            seen.append(event.text)
            return HANDLED if event.text == "STOP" else None

    session, _, _ = await make(upper, watcher)
    assert await session.submit("stop") == "handled"
    assert await session.submit("hello") == "started"
    await session.wait_for_idle()
    assert seen == ["STOP", "HELLO"]
    assert faux_requests(key)[0].context["messages"][-1]["content"][0]["text"] == "HELLO"


async def test_input_handler_errors_and_bad_results_are_reported_and_ignored(make, key):
    set_faux_responses([FauxResponse(text="ok")], key=key)

    def broken(plugin):
        plugin.on("input", lambda event, ctx: 1 / 0)
        plugin.on("input", lambda event, ctx: "not a result")

    session, _, events = await make(broken)
    assert await session.submit("hi") == "started"
    await session.wait_for_idle()
    assert [(e["event"], e["error"].split(":")[0]) for e in errors(events)] == [
        ("input", "ZeroDivisionError"), ("input", "unexpected return value 'not a result' (expected None or "
                                         "Transform or HANDLED)")]
    assert errors(events)[0]["extensionPath"] == __file__  # the module defining the setup function


async def test_before_run_adds_context_messages_and_chains_the_system_prompt(make, key, tmp_path):
    set_faux_responses([FauxResponse(text="ok")], key=key)

    def one(plugin):
        plugin.on("before_run", lambda event, ctx: AddContext(["first", "second"], system_prompt="ONE"))

    def two(plugin):
        plugin.on("before_run", lambda event, ctx: AddContext(system_prompt=event.system_prompt + "+TWO"))

    session, _, _ = await make(one, two, no_session=False, session_dir=str(tmp_path / "sessions"))
    await session.prompt_and_wait("question")
    request = faux_requests(key)[0].context
    assert request["systemPrompt"] == "ONE+TWO"
    assert [m["content"] for m in request["messages"]] == [
        [{"type": "text", "text": "question"}], [{"type": "text", "text": "first"}],
        [{"type": "text", "text": "second"}]]
    lines = [json.loads(line) for line in Path(session.store.path).read_text().splitlines()]
    custom = [line for line in lines if line["type"] == "custom_message"]
    assert [c["content"] for c in custom] == ["first", "second"] and custom[0]["customType"] == "one"
    await session.close()


async def test_abort_while_a_plugin_prepares_the_run_cancels_the_handler_and_the_run(make, key):
    set_faux_responses([FauxResponse(text="never")], key=key)
    asked = asyncio.Event()
    answers: list[object] = []

    def careful(plugin):
        @plugin.on("before_run")
        async def ask(event, ctx):
            try:
                answers.append(await ctx.ui.confirm("Start the run?"))
            except asyncio.CancelledError:
                answers.append("cancelled")  # the handler may clean up; the cancellation is not a plugin error
                raise

    ui = RpcUI(lambda event: asked.set())
    session, _, events = await make(careful, ui=ui)
    session.prompt("go")
    await asked.wait()
    await session.abort()
    assert answers == ["cancelled"] and errors(events) == []
    assert events[-1] == {"type": "agent_settled", "aborted": True}
    assert faux_requests(key) == []


async def test_tool_call_block_rewrite_and_fail_safe(make, key):
    set_faux_responses([FauxResponse(tool_calls=[("bash", {"command": "echo one"}), ("bash", {"command": "echo two"}),
                                                 ("bash", {"command": "echo three"}), ("read", {"path": "x"})]),
                        FauxResponse(text="done")], key=key)

    def guard(plugin):
        @plugin.on("tool_call")
        def check(event, ctx):
            command = event.args.get("command")
            if command == "echo one":
                return Block("no one")
            if command == "echo two":
                event.args = {"command": "echo replaced"}
            if command == "echo three":
                raise RuntimeError("checker broke")
            if event.tool_name == "read":
                event.args = ["not", "a", "dict"]
            return None

    session, _, events = await make(guard)
    await session.prompt_and_wait("run")
    order = [e["toolCallId"] for e in events if e["type"] == "tool_execution_start"]
    ends = sorted((e for e in events if e["type"] == "tool_execution_end"), key=lambda e: order.index(e["toolCallId"]))
    texts = [e["result"]["content"][0]["text"] for e in ends]
    assert [e["isError"] for e in ends] == [True, False, True, True]
    assert texts[0] == "no one" and texts[1] == "replaced\n"
    assert texts[2] == "Blocked: plugin guard failed while checking this call"
    assert texts[3] == "Blocked: a plugin replaced the arguments with list"
    assert [e["event"] for e in errors(events)] == ["tool_call"]


async def test_plugin_tools_register_replace_builtins_and_follow_the_tool_selection(make, key):
    set_faux_responses([FauxResponse(tool_calls=[("shout", {"text": "hey"}), ("shout", {"text": 5}),
                                                 ("broken", {})]), FauxResponse(text="ok")], key=key)

    def tools(plugin):
        plugin.register_tool("shout", lambda args, ctx: args["text"].upper(), description="Shout",
                             parameters={"type": "object", "properties": {"text": {"type": "string"}},
                                         "required": ["text"]})

        @plugin.tool("read", description="A replacement read")
        def read(args, ctx):
            return "replaced"

        @plugin.tool("broken", description="Returns nonsense")
        def broken(args, ctx):
            return 42

        plugin.register_tool("hidden", lambda args, ctx: "", description="Left out by the selection")

    session, _, events = await make(tools, tool_names=["read", "bash", "shout", "broken"])
    names = [t.name for t in session.agent.tools]
    assert names.count("read") == 1 and "hidden" not in names and {"shout", "broken"} <= set(names)
    assert next(t for t in session.agent.tools if t.name == "read").description == "A replacement read"
    await session.prompt_and_wait("go")
    order = [e["toolCallId"] for e in events if e["type"] == "tool_execution_start"]
    ends = sorted((e for e in events if e["type"] == "tool_execution_end"), key=lambda e: order.index(e["toolCallId"]))
    assert ends[0]["result"]["content"] == [{"type": "text", "text": "HEY"}] and not ends[0]["isError"]
    assert "Parameter 'text' must be string, got integer" in ends[1]["result"]["content"][0]["text"]
    assert "returned an invalid result: int 42" in ends[2]["result"]["content"][0]["text"] and ends[2]["isError"]


async def test_a_tool_name_taken_by_another_plugin_is_refused(make):
    def first(plugin):
        plugin.register_tool("t", lambda args, ctx: "1", description="one")

    def second(plugin):
        plugin.register_tool("t", lambda args, ctx: "2", description="two")

    session, _, _ = await make(first, second)
    assert [t.description for t in session.agent.tools if t.name == "t"] == ["one"]
    assert any("tool t is already registered by plugin first" in w for w in session.warnings)


async def test_session_changes_can_be_vetoed_and_a_failing_veto_does_not_cancel(make, key):
    set_faux_responses([FauxResponse(text="answer")], key=key)
    actions: list[tuple[str, str | None]] = []
    starts: list[tuple[str, str | None]] = []

    def vetoes(plugin):
        @plugin.on("session_before_change")
        def decide(event, ctx):
            actions.append((event.action, event.entry_id or event.target_session_file or event.parent_session))
            if event.action == "clone":
                raise RuntimeError("undecided")
            return Cancel() if event.action in ("fork", "new_session") else None

        plugin.on("session_start", lambda event, ctx: starts.append((event.reason, event.previous_session_file)))

    session, _, events = await make(vetoes)
    await session.prompt_and_wait("question")
    user_entry = next(e for e in session.store.entries if e.get("message", {}).get("role") == "user")
    with pytest.raises(CommandError, match="Invalid entry ID"):
        await session.fork("missing")
    assert await session.fork(user_entry["id"]) == {"text": "question", "cancelled": True}
    assert await session.new_session("/parent.jsonl") is True
    assert len(session.messages) == 2
    assert await session.clone() is False
    assert actions == [("fork", user_entry["id"]), ("new_session", "/parent.jsonl"), ("clone", None)]
    assert starts == [("clone", None)]
    assert [e["event"] for e in errors(events)] == ["session_before_change"]


async def test_observers_see_events_and_their_failures_are_reported(make, key):
    set_faux_responses([FauxResponse(text="ok")], key=key)
    seen: list[str] = []

    def observer(plugin):
        plugin.on("agent_start", lambda event, ctx: seen.append(event["type"]))
        plugin.on("turn_end", lambda event, ctx: event.clear())  # a copy: the other listeners keep theirs

        @plugin.on("agent_end")
        async def later(event, ctx):
            seen.append("agent_end (async)")
            raise KeyError("async failure")

        plugin.on("agent_settled", lambda event, ctx: 1 / 0)

    session, runner, events = await make(observer)
    await session.prompt_and_wait("go")
    await runner.shutdown()
    assert seen == ["agent_start", "agent_end (async)"]
    assert next(e for e in events if e["type"] == "turn_end")["message"]["role"] == "assistant"
    assert sorted(e["event"] for e in errors(events)) == ["agent_end", "agent_settled"]


async def test_shutdown_resolves_dialogs_waits_for_commands_and_runs_shutdown_handlers(make):
    finished: list[object] = []

    def asker(plugin):
        @plugin.command("ask")
        async def ask(args, ctx):
            finished.append(await ctx.ui.confirm("Sure?"))

        plugin.on("session_shutdown", lambda event, ctx: finished.append(event.reason))

    ui = RpcUI(lambda event: None)
    session, runner, _ = await make(asker, ui=ui)
    asked = asyncio.Event()
    ui._emit = lambda event: asked.set()
    assert await session.submit("/ask") == "handled"
    await asked.wait()
    await session.close()
    assert finished == [False, "quit"]
    await runner.shutdown()  # idempotent
    assert finished == [False, "quit"]


async def test_session_view_sends_messages_and_saves_state(make, key, tmp_path):
    set_faux_responses([FauxResponse(text="reply")], key=key)

    def driver(plugin):
        @plugin.command("drive")
        async def drive(args, ctx):
            ctx.session.append_entry("driver-state", {"n": 1})
            assert ctx.session.send_user_message(args) == "started"
            await ctx.session.wait_for_idle()
            ctx.session.set_session_name("driven")

    session, runner, _ = await make(driver, no_session=False, session_dir=str(tmp_path / "sessions"))
    await session.submit("/drive hello from a plugin")
    await runner.shutdown()
    assert session.last_assistant_text() == "reply" and session.get_state()["sessionName"] == "driven"
    assert faux_requests(key)[0].context["messages"][-1]["content"][0]["text"] == "hello from a plugin"
    custom = [e for e in session.store.entries if e["type"] == "custom"]
    assert custom[0]["customType"] == "driver-state" and custom[0]["data"] == {"n": 1}
    with pytest.raises(ValueError):
        runner.view.send_user_message("x", deliver_as="later")
    await session.close()


async def test_setup_problems_are_warnings_and_other_plugins_still_load(make):
    def bad_name(plugin):
        plugin.register_command("/slash", lambda args, ctx: None)

    def bad_schema(plugin):
        plugin.register_tool("t", lambda args, ctx: "", description="d", parameters={"type": "string"})

    def bad_event(plugin):
        plugin.on("tool_cal", lambda event, ctx: None)

    def raising(plugin):
        raise ToolError("setup failed")

    def good(plugin):
        plugin.register_command("fine", lambda args, ctx: None)

    session, runner, _ = await make(bad_name, bad_schema, bad_event, raising, good)
    assert [p.id for p in runner.plugins] == ["good"]
    problems = "\n".join(session.warnings)
    assert "Invalid command name '/slash'" in problems and '"type": "object"' in problems
    assert "Unknown event 'tool_cal'" in problems and "setup failed" in problems
