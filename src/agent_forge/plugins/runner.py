"""The plugin runner: puts loaded plugins' commands, tools and handlers into a session (its `SessionHooks`)
and calls them with every failure isolated.

A plugin that raises (anything, `SystemExit` and `KeyboardInterrupt` included: `isolation.py`) or returns a
result its event does not accept never breaks the session: the failure becomes an `extension_error` event
`{type, extensionPath, event, error}` (seed 003) and a line on stderr, and the session goes on as if the handler
had returned nothing, with two fail-safe exceptions: a failing `tool_call` handler blocks the call, and a
failing command simply ends. A failing observer is reported once per handler and event type until the next run
starts (a `message_update` observer would otherwise report every streamed delta). Handlers run in load order,
then registration order. No method here raises, except when its own task is cancelled.

Plugin code can never hang the agent: synchronous handlers and commands run in a worker thread
(`threads.py`), so the event loop keeps answering; `abort` cancels running commands; every hook handler (all
but the observers) gets `handler_timeout` seconds, extended while a dialog waits for the client's answer, and
is then cancelled and reported as failing; `shutdown` gives running tasks the same time, then cancels them.
Sync observers stay on the event loop: they are called in event order, inside `emit`.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import re
import sys
from typing import Awaitable, Callable, TypeVar

from ..agent.types import AgentMessage
from ..ai.types import ImageContent, ToolCall
from ..coding.paths import path_text
from ..coding.agent_session import AgentSession
from ..coding.events import SessionEvent
from ..coding.events import ExtensionError
from ..coding.hooks import SessionHooks
from .api import (
    AddContext,
    BeforeRunEvent,
    Block,
    Cancel,
    CommandSpec,
    Context,
    Handled,
    HandlerResult,
    InputEvent,
    Plugin,
    SessionChangeEvent,
    SessionShutdownEvent,
    SessionStartEvent,
    SessionView,
    ToolCallEvent,
    ToolSpec,
    Transform,
)
from .bounded import CANCEL_GRACE_S, PluginTimeout, bounded, stoppable
from .isolation import describe_error, is_cancellation, spawn_contained
from .threads import in_thread, is_async, thread_context
from .tool_deadline import runner_deadlines
from .tools import PluginTool
from .values import command_item, context_message, describe_value, images_problem, private_copy
from .ui import PluginUI

HANDLER_TIMEOUT_S = 10.0
"""Default of `handler_timeout` (settings `pluginHandlerTimeoutMs`): seconds an `input`, `session_before_change`,
`before_run`, `tool_call`, `session_start` or `session_shutdown` handler may run, and running commands get at
exit, before cancellation."""


_CURRENT_COMMAND: contextvars.ContextVar[asyncio.Task | None] = contextvars.ContextVar("plugin_command",
                                                                                     default=None)
"""The command task the running code belongs to (worker threads carry it): a command's own `abort` spares it."""

_R = TypeVar("_R")

_BOUNDED_EVENTS = ("input", "before_run", "tool_call", "session_before_change", "session_start", "session_shutdown")

_COMMAND = re.compile(r"/(\S+)(?:\s+(.*))?\Z", re.S)


def parse_command(text: str) -> tuple[str, str] | None:
    """`"/name rest"` → `("name", "rest")` (rest stripped); None when `text` is not a slash command."""
    match = _COMMAND.match(text.strip()) if isinstance(text, str) else None
    return (match.group(1), (match.group(2) or "").strip()) if match else None


class PluginRunner(SessionHooks):
    """Binds `plugins` to `session` and serves as its hooks. Build it, then `install()` and `await start()`."""

    def __init__(self, session: AgentSession, plugins: list[Plugin], ui: PluginUI | None = None, *,
                 handler_timeout: float = HANDLER_TIMEOUT_S):
        self.session = session
        self.handler_timeout = handler_timeout
        self.plugins = plugins
        self.ui = ui or PluginUI()
        self.view = SessionView(session)
        self.warnings: list[str] = []
        self.commands_by_name: dict[str, CommandSpec] = {}
        self._tasks: set[asyncio.Task] = set()
        self._commands: set[asyncio.Task] = set()  # running command tasks (`abort` cancels them)
        self._specs: dict[asyncio.Task, CommandSpec] = {}  # what each running command task runs (for reports)
        self._cancelled: set[asyncio.Task] = set()  # commands `abort` cancelled that have not ended yet
        self._lifecycle: set[asyncio.Task] = set()  # session_start / session_shutdown work running (`abort` ends it)
        self._unsubscribe: Callable[[], None] | None = None
        self._closed = False
        self._started = False
        self._observer_failures: set[tuple[int, str]] = set()  # (handler id, event type) reported in this run
        self.tool_deadlines = runner_deadlines(self)  # plugin tools after stdin EOF

    # -- installation -------------------------------------------------------------------------------

    def install(self) -> None:
        """Register commands and tools (first come wins on a name clash, with a warning; a plugin tool replaces
        a built-in tool of the same name; the session's tool selection may leave a tool out), then become the
        session's hooks and observe its events."""
        for plugin in self.plugins:
            plugin.seal()  # what is registered now is what the session gets
            plugin.ui = self.ui
            for command in plugin.commands:
                self._add_command(command)
            for spec in plugin.tools:
                self._add_tool(plugin, spec)
        self.session.hooks = self  # `tool_call` below is the session tool gate's plugin step
        self._unsubscribe = self.session.subscribe(self._observe)

    def _add_command(self, command: CommandSpec) -> None:
        taken = self.commands_by_name.get(command.name)
        if taken is not None:
            self.warnings.append(f"Plugin {path_text(command.plugin.id)}: command /{command.name} is already "
                                 f"registered by plugin {path_text(taken.plugin.id)}; ignored")
            return
        self.commands_by_name[command.name] = command

    def _add_tool(self, plugin: Plugin, spec: ToolSpec) -> None:
        selection = getattr(self.session, "tool_selection", None)
        if selection is not None and not selection.admits(spec.name):
            return  # left out by --tools / --no-tools / defaultTools, like a built-in would be
        tools = self.session.agent.tools
        taken = next((t for t in tools if t.name == spec.name), None)
        if isinstance(taken, PluginTool):
            self.warnings.append(f"Plugin {path_text(plugin.id)}: tool {spec.name} is already registered by plugin "
                                 f"{path_text(taken.spec.plugin.id)}; ignored")
            return
        tool = PluginTool(spec, lambda: self.context(plugin), self.tool_deadlines)
        self.session.agent.tools = [t for t in tools if t is not taken] + [tool]

    async def start(self) -> None:
        """Run `session_start` handlers (reason "startup"), once."""
        if not self._started:
            self._started = True
            await self.session_started("startup", None)

    def context(self, plugin: Plugin) -> Context:
        return Context(plugin=plugin, ui=self.ui, session=self.view)

    # -- error isolation ----------------------------------------------------------------------------

    def report(self, plugin: Plugin, event: str, error: BaseException | str, note: str = "") -> None:
        """Emit `extension_error` for `plugin` failing in `event` and note it on stderr (with `note`)."""
        from ..coding.tools.sanitize import terminal_text  # the message may quote model or tool text

        message = describe_error(error)
        print(terminal_text(f"agent-forge: plugin {path_text(plugin.id)} failed in {event}: "
                            f"{message}{note}"), file=sys.stderr)
        self.session.emit(ExtensionError(type="extension_error", extensionPath=plugin.path, event=event, error=message))

    async def _call(self, plugin: Plugin, event: str, fn: Callable[..., object], *args: object) -> tuple[bool, object]:
        """`(True, result)`, or `(False, None)` after reporting what the plugin raised. The plugin code runs in
        a task of its own (`bounded.py`): cancelling the caller (abort, shutdown) cancels it, and code that
        ignores that is abandoned after `CANCEL_GRACE_S` and reported. A synchronous `fn` runs in a worker
        thread with a thread-safe context (`threads.py`). Hook handlers (not commands) get `handler_timeout`
        seconds, extended while a dialog waits for the client; then they are cancelled and reported."""
        timeout = self.handler_timeout if event in _BOUNDED_EVENTS else None

        def timed_out() -> None:
            self.report(plugin, event, f"TimeoutError: the handler did not return within {self.handler_timeout:g} "
                                       "s; it was cancelled")

        def abandoned() -> None:
            self.report(plugin, event, f"it ignored its cancellation for {CANCEL_GRACE_S:g} s; the agent went on "
                                       "without it")
        try:
            return await bounded(self._run(plugin, event, fn, *args), timeout, extend=self.ui.has_pending,
                                 on_timeout=timed_out, on_abandoned=abandoned)
        except PluginTimeout:
            return False, None

    async def _run(self, plugin: Plugin, event: str, fn: Callable[..., object], *args: object) -> tuple[bool, object]:
        try:
            if is_async(fn):
                result = fn(*args)
            else:
                result = await in_thread(fn, *args[:-1], thread_context(args[-1]))  # the context comes last
            if inspect.isawaitable(result):
                result = await result
            return True, result
        except BaseException as exc:
            if is_cancellation(exc):
                raise
            self.report(plugin, event, exc)
            return False, None

    def _accept(self, plugin: Plugin, event: str, result: object, kinds: tuple[type[_R], ...],
                expected: str) -> _R | None:
        """`result` when it is None or a valid instance of one of `kinds`; otherwise reported and None."""
        if result is None:
            return None
        if not isinstance(result, kinds):
            self.report(plugin, event, f"unexpected return value {describe_value(result)} (expected None or "
                                       f"{expected})")
            return None
        problem = result.problem() if isinstance(result, HandlerResult) else None
        if problem is None:
            return result
        self.report(plugin, event, f"invalid {type(result).__name__}: {problem}")
        return None

    def _handlers(self, event: str) -> list[tuple[Plugin, Callable[..., object]]]:
        return [(plugin, fn) for plugin in self.plugins for fn in plugin.handlers.get(event, [])]

    # -- commands -----------------------------------------------------------------------------------

    def command_name(self, text: str) -> str | None:
        parsed = parse_command(text)
        return parsed[0] if parsed and parsed[0] in self.commands_by_name else None

    def run_command(self, text: str) -> asyncio.Future[object] | None:
        parsed = parse_command(text)
        command = self.commands_by_name.get(parsed[0]) if parsed else None
        if command is None or parsed is None:
            return None
        task = self._spawn(self._command(command, parsed[1]))
        self._commands.add(task)
        self._specs[task] = command
        task.add_done_callback(self._commands.discard)
        task.add_done_callback(lambda done: self._specs.pop(done, None))
        return task

    async def _command(self, command: CommandSpec, args: str) -> tuple[bool, object]:
        _CURRENT_COMMAND.set(asyncio.current_task())
        return await self._call(command.plugin, f"command:{command.name}", command.handler, args,
                                self.context(command.plugin))

    def commands(self) -> list[dict[str, object]]:
        """`get_commands` items (seed 000 shape, plus the plugin file as `path`)."""
        return [command_item(command) for command in self.commands_by_name.values()]

    def _spawn(self, coro: Awaitable[object]) -> asyncio.Task:
        task = spawn_contained(coro)  # a SystemExit escaping a task would stop the event loop
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- input and runs ----------------------------------------------------------------------------

    def handles_input(self) -> bool:
        return bool(self._handlers("input"))

    async def input(self, text: str, images: list[ImageContent] | None,
                    streaming_behavior: str | None) -> tuple[str, list[ImageContent] | None] | None:
        event = InputEvent(text, images, streaming_behavior)
        for plugin, fn in self._handlers("input"):
            before = (event.text, event.images)
            _, result = await self._call(plugin, "input", fn, event, self.context(plugin))
            self._restore_input(plugin, event, before)
            result = self._accept(plugin, "input", result, (Transform, Handled), "Transform or HANDLED")
            if isinstance(result, Handled):
                return None
            if isinstance(result, Transform):
                event.text = result.text
                event.images = result.images if result.images is not None else event.images
        return event.text, event.images

    def _restore_input(self, plugin: Plugin, event: InputEvent, before: tuple[str, list[ImageContent] | None]) -> None:
        """A handler that assigned something unusable to the event's fields: reported, the fields restored."""
        problem = None if isinstance(event.text, str) else f"event.text must be a string, got " \
                                                           f"{type(event.text).__name__}"
        if problem is None and event.images is not before[1] and event.images is not None:
            problem = images_problem(event.images)
        if problem is not None:
            self.report(plugin, "input", f"invalid change ignored: {problem}")
            event.text, event.images = before

    async def before_run(self, prompts: list[AgentMessage], system_prompt: str) -> str:
        event = BeforeRunEvent(private_copy(prompts), system_prompt)
        for plugin, fn in self._handlers("before_run"):
            current = event.system_prompt
            _, result = await self._call(plugin, "before_run", fn, event, self.context(plugin))
            if not isinstance(event.system_prompt, str):
                self.report(plugin, "before_run", "invalid change ignored: event.system_prompt must be a string, "
                                                  f"got {type(event.system_prompt).__name__}")
                event.system_prompt = current
            result = self._accept(plugin, "before_run", result, (AddContext,), "AddContext")
            if result is not None:
                prompts.extend(context_message(plugin, text, result.display) for text in result.texts())
                event.system_prompt = result.system_prompt if result.system_prompt is not None \
                    else event.system_prompt
        return event.system_prompt

    async def tool_call(self, call: ToolCall) -> str | None:
        """The session's tool gate asks it before the approval policy (`coding/approvals.py`): a block reason,
        or None to run the call with `call["arguments"]`. A handler that fails, or returns an invalid `Block`,
        blocks the call (fail-safe)."""
        event = ToolCallEvent(call["name"], call["id"], call["arguments"])
        for plugin, fn in self._handlers("tool_call"):
            ok, result = await self._call(plugin, "tool_call", fn, event, self.context(plugin))
            if ok and result is not None:
                accepted = self._accept(plugin, "tool_call", result, (Block,), "Block")
                if accepted is not None:
                    return accepted.reason
                ok = not isinstance(result, Block)  # an invalid Block still says "do not run it"
            if not ok:
                return f"Blocked: plugin {plugin.id} failed while checking this call"
        if not isinstance(event.args, dict):
            return f"Blocked: a plugin replaced the arguments with {type(event.args).__name__}"
        call["arguments"] = event.args
        return None

    # -- session lifecycle -----------------------------------------------------------------------------

    async def before_session_change(self, action: str, details: dict[str, str | None]) -> bool:
        event = SessionChangeEvent(action, details.get("targetSessionFile"), details.get("entryId"),
                                   details.get("parentSession"))
        for plugin, fn in self._handlers("session_before_change"):
            _, result = await self._call(plugin, "session_before_change", fn, event, self.context(plugin))
            if self._accept(plugin, "session_before_change", result, (Cancel,), "Cancel") is not None:
                return True
        return False

    async def session_started(self, reason: str, previous_session_file: str | None) -> None:
        """`session_start` handlers, in order; an `abort` meanwhile ends them (`_stoppable`)."""
        await self._stoppable(self._each("session_start", SessionStartEvent(reason, previous_session_file)))

    async def _each(self, event_name: str, event: object) -> None:
        for plugin, fn in self._handlers(event_name):
            await self._call(plugin, event_name, fn, event, self.context(plugin))

    async def _stoppable(self, work: Awaitable[object]) -> None:
        """Await `work`, lifecycle work a session change or `/reload` waits on, so that `abort` ends it."""
        await stoppable(work, self._lifecycle)

    def abort(self) -> None:
        """Pending dialogs get their defaults; running commands are cancelled (`CancelledError` at their next
        `await`; a synchronous one's thread cannot be stopped and is left to finish, its result dropped), and so
        are running `session_start` and `session_shutdown` handlers and the exit's wait for the commands (the
        rest of that work goes on). A command that aborts through its own `ctx.session.abort()` goes on."""
        self.ui.cancel_pending()
        for task in [*self._commands - {_CURRENT_COMMAND.get()}, *self._lifecycle]:
            task.cancel()
            self._cancelled.add(task)
            task.add_done_callback(self._cancelled.discard)

    async def wait_aborted(self) -> None:
        """Give the commands and handlers `abort` cancelled up to `CANCEL_GRACE_S` to end."""
        if self._cancelled:  # each ends within its grace (`bounded`); the margin covers the loop's own delay
            await asyncio.wait(set(self._cancelled), timeout=CANCEL_GRACE_S + 0.5)

    def ui_response(self, answer: dict[str, object]) -> None:
        self.ui.resolve(answer)

    def input_closed(self) -> None:
        self.ui.close()
        self.tool_deadlines.input_closed()  # a blocked plugin tool must not keep the agent alive

    async def wait_for_tasks(self, bounded: bool = False) -> None:
        """Wait until the plugin commands and async observers started so far (and any they start) have
        finished (print mode runs a command to its end before the next prompt). `bounded` (print and JSON
        mode, which have no `abort`): tasks still running after `handler_timeout` seconds are cancelled (a
        command is reported as an `extension_error`) and get `CANCEL_GRACE_S`; a run going on then (one a
        command started) extends the limit until it settles plus another `handler_timeout`."""
        while self._tasks:
            _, pending = await asyncio.wait(set(self._tasks), timeout=self.handler_timeout if bounded else None)
            if not pending:
                continue
            if self.session.is_streaming:
                await self.session.wait_for_idle()
                continue
            await self._expire(pending)
            return

    async def _expire(self, tasks: set[asyncio.Task]) -> None:
        """Cancel `tasks` that outlived `handler_timeout`, report the commands among them, wait for them up to
        `CANCEL_GRACE_S` (one that ignores its cancellation is left behind)."""
        for task in tasks:
            command = self._specs.get(task)
            task.cancel()
            if command is not None:
                self.report(command.plugin, f"command:{command.name}",
                            f"TimeoutError: the command did not finish within {self.handler_timeout:g} s "
                            "(pluginHandlerTimeoutMs); it was cancelled")
        await asyncio.wait(tasks, timeout=CANCEL_GRACE_S)

    async def shutdown(self, graceful: bool = True) -> None:
        """Pending and later dialogs get their defaults; running commands and async observers get
        `handler_timeout` seconds to finish (none when not `graceful`: SIGTERM), then are cancelled and get
        `CANCEL_GRACE_S`; then `session_shutdown` handlers run (each bounded)."""
        if self._closed:
            return
        self._closed = True
        self.ui.close()
        if graceful and self._tasks:  # an `abort` (Escape during `/reload`) ends this wait and the handlers
            await self._stoppable(asyncio.wait(set(self._tasks), timeout=self.handler_timeout))
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=CANCEL_GRACE_S)
        await self._stoppable(self._each("session_shutdown", SessionShutdownEvent()))
        if self._unsubscribe is not None:
            self._unsubscribe()

    # -- observation --------------------------------------------------------------------------------

    def _observe(self, event: SessionEvent) -> None:
        """Session listener: each observer gets its own copy of the event (changing it changes nothing); async
        ones run as tasks (awaited at shutdown)."""
        kind = event.get("type")
        if kind == "agent_start":
            self._observer_failures.clear()  # a new run: failing observers are reported again
        for plugin in self.plugins:
            for fn in plugin.handlers.get(kind, ()):  # type: ignore[arg-type]
                try:
                    result = fn(private_copy(event), self.context(plugin))
                except BaseException as exc:
                    if is_cancellation(exc):
                        raise
                    self._observer_failed(plugin, fn, kind, exc)  # type: ignore[arg-type]
                    continue
                if inspect.isawaitable(result):
                    self._spawn(self._finish(plugin, fn, kind, result))  # type: ignore[arg-type]

    async def _finish(self, plugin: Plugin, fn: Callable[..., object], event: str,
                      awaitable: Awaitable[object]) -> None:
        try:
            await awaitable
        except BaseException as exc:
            if is_cancellation(exc):
                raise
            self._observer_failed(plugin, fn, event, exc)

    def _observer_failed(self, plugin: Plugin, fn: Callable[..., object], event: str, exc: BaseException) -> None:
        """Report an observer's failure once per handler and event type until the next run starts."""
        key = (id(fn), event)
        if key not in self._observer_failures:
            self._observer_failures.add(key)
            self.report(plugin, event, exc, note=f" (its further failures in {event} are not reported until the "
                                                 "next run starts)")
