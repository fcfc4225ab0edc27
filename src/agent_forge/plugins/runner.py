"""The plugin runner: puts loaded plugins' commands, tools and handlers into a session (its `SessionHooks`)
and calls them with every failure isolated.

A plugin that raises never breaks the session: the failure becomes an `extension_error` event
`{type, extensionPath, event, error}` (seed 003) and a line on stderr, and the session goes on as if the handler
had returned nothing, with two fail-safe exceptions: a failing `tool_call` handler blocks the call, and a
failing command simply ends. Handlers run in load order, then registration order.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import sys
from typing import Any, Callable

from ..agent.loop import now_ms
from ..coding.agent_session import AgentSession
from ..coding.session_hooks import SessionHooks
from .api import (
    AddContext,
    BeforeRunEvent,
    Block,
    Cancel,
    CommandSpec,
    Context,
    Handled,
    InputEvent,
    Plugin,
    SessionChangeEvent,
    SessionShutdownEvent,
    SessionStartEvent,
    SessionView,
    ToolCallEvent,
    Transform,
)
from .tools import PluginTool
from .ui import PluginUI

_COMMAND = re.compile(r"/(\S+)(?:\s+(.*))?\Z", re.S)


def parse_command(text: str) -> tuple[str, str] | None:
    """`"/name rest"` → `("name", "rest")` (rest stripped); None when `text` is not a slash command."""
    match = _COMMAND.match(text.strip()) if isinstance(text, str) else None
    return (match.group(1), (match.group(2) or "").strip()) if match else None


class PluginRunner(SessionHooks):
    """Binds `plugins` to `session` and serves as its hooks. Build it, then `install()` and `await start()`."""

    def __init__(self, session: AgentSession, plugins: list[Plugin], ui: PluginUI | None = None):
        self.session = session
        self.plugins = plugins
        self.ui = ui or PluginUI()
        self.view = SessionView(session)
        self.warnings: list[str] = []
        self.commands_by_name: dict[str, CommandSpec] = {}
        self._tasks: set[asyncio.Task] = set()
        self._unsubscribe: Callable[[], None] | None = None
        self._closed = False
        self._started = False

    # -- installation -------------------------------------------------------------------------------

    def install(self) -> None:
        """Register commands and tools (first come wins on a name clash, with a warning; a plugin tool replaces
        a built-in tool of the same name; the session's tool selection may leave a tool out), then become the
        session's hooks and observe its events."""
        for plugin in self.plugins:
            plugin.ui = self.ui
            for command in plugin.commands:
                self._add_command(command)
            for spec in plugin.tools:
                self._add_tool(plugin, spec)
        self.session.hooks = self
        self.session.agent.before_tool_call = self.tool_call
        self._unsubscribe = self.session.subscribe(self._observe)

    def _add_command(self, command: CommandSpec) -> None:
        taken = self.commands_by_name.get(command.name)
        if taken is not None:
            self.warnings.append(f"Plugin {command.plugin.id}: command /{command.name} is already registered by "
                                 f"plugin {taken.plugin.id}; ignored")
            return
        self.commands_by_name[command.name] = command

    def _add_tool(self, plugin: Plugin, spec: Any) -> None:
        selection = getattr(self.session, "tool_selection", None)
        if selection is not None and not selection.admits(spec.name):
            return  # left out by --tools / --no-tools / defaultTools, like a built-in would be
        tools = self.session.agent.tools
        taken = next((t for t in tools if t.name == spec.name), None)
        if isinstance(taken, PluginTool):
            self.warnings.append(f"Plugin {plugin.id}: tool {spec.name} is already registered by plugin "
                                 f"{taken.spec.plugin.id}; ignored")
            return
        tool = PluginTool(spec, lambda: self.context(plugin))
        self.session.agent.tools = [t for t in tools if t is not taken] + [tool]

    async def start(self) -> None:
        """Run `session_start` handlers (reason "startup"), once."""
        if not self._started:
            self._started = True
            await self.session_started("startup", None)

    def context(self, plugin: Plugin) -> Context:
        return Context(plugin=plugin, ui=self.ui, session=self.view)

    # -- error isolation ----------------------------------------------------------------------------

    def report(self, plugin: Plugin, event: str, error: BaseException | str) -> None:
        """Emit `extension_error` for `plugin` failing in `event` and note it on stderr."""
        message = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        print(f"agent-forge: plugin {plugin.id} failed in {event}: {message}", file=sys.stderr)
        self.session.emit({"type": "extension_error", "extensionPath": plugin.path, "event": event,
                           "error": message})

    async def _call(self, plugin: Plugin, event: str, fn: Callable[..., Any], *args: Any) -> tuple[bool, Any]:
        """`(True, result)`, or `(False, None)` after reporting the exception."""
        try:
            result = fn(*args)
            if inspect.isawaitable(result):
                result = await result
            return True, result
        except Exception as exc:
            self.report(plugin, event, exc)
            return False, None

    def _unexpected(self, plugin: Plugin, event: str, result: Any, expected: str) -> None:
        self.report(plugin, event, f"unexpected return value {result!r} (expected None or {expected})")

    def _handlers(self, event: str) -> list[tuple[Plugin, Callable[..., Any]]]:
        return [(plugin, fn) for plugin in self.plugins for fn in plugin.handlers.get(event, [])]

    # -- commands -----------------------------------------------------------------------------------

    def command_name(self, text: str) -> str | None:
        parsed = parse_command(text)
        return parsed[0] if parsed and parsed[0] in self.commands_by_name else None

    def run_command(self, text: str) -> bool:
        parsed = parse_command(text)
        command = self.commands_by_name.get(parsed[0]) if parsed else None
        if command is None or parsed is None:
            return False
        self._spawn(self._call(command.plugin, f"command:{command.name}", command.handler, parsed[1],
                               self.context(command.plugin)))
        return True

    def commands(self) -> list[dict[str, Any]]:
        """`get_commands` items (seed 000 shape, plus the plugin file as `path`)."""
        return [_command_item(command) for command in self.commands_by_name.values()]

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- input and runs ----------------------------------------------------------------------------

    async def input(self, text: str, images: list[dict[str, Any]] | None,
                    streaming_behavior: str | None) -> tuple[str, list[dict[str, Any]] | None] | None:
        event = InputEvent(text, images, streaming_behavior)
        for plugin, fn in self._handlers("input"):
            ok, result = await self._call(plugin, "input", fn, event, self.context(plugin))
            if isinstance(result, Handled):
                return None
            if isinstance(result, Transform) and isinstance(result.text, str):
                event.text = result.text
                event.images = result.images if result.images is not None else event.images
            elif ok and result is not None:
                self._unexpected(plugin, "input", result, "Transform or HANDLED")
        return event.text, event.images

    async def before_run(self, prompts: list[dict[str, Any]], system_prompt: str) -> str:
        event = BeforeRunEvent(list(prompts), system_prompt)
        for plugin, fn in self._handlers("before_run"):
            ok, result = await self._call(plugin, "before_run", fn, event, self.context(plugin))
            if isinstance(result, AddContext):
                prompts.extend(_context_message(plugin, text, result.display) for text in result.texts())
                event.system_prompt = result.system_prompt if result.system_prompt is not None \
                    else event.system_prompt
            elif ok and result is not None:
                self._unexpected(plugin, "before_run", result, "AddContext")
        return event.system_prompt

    async def tool_call(self, call: dict[str, Any]) -> str | None:
        """The agent's `before_tool_call`: a block reason, or None to run the call with `call["arguments"]`."""
        event = ToolCallEvent(call["name"], call["id"], call["arguments"])
        for plugin, fn in self._handlers("tool_call"):
            ok, result = await self._call(plugin, "tool_call", fn, event, self.context(plugin))
            if not ok:
                return f"Blocked: plugin {plugin.id} failed while checking this call"
            if isinstance(result, Block):
                return result.reason
            if result is not None:
                self._unexpected(plugin, "tool_call", result, "Block")
        if not isinstance(event.args, dict):
            return f"Blocked: a plugin replaced the arguments with {type(event.args).__name__}"
        call["arguments"] = event.args
        return None

    # -- session lifecycle -----------------------------------------------------------------------------

    async def before_session_change(self, action: str, details: dict[str, Any]) -> bool:
        event = SessionChangeEvent(action, details.get("targetSessionFile"), details.get("entryId"),
                                   details.get("parentSession"))
        for plugin, fn in self._handlers("session_before_change"):
            ok, result = await self._call(plugin, "session_before_change", fn, event, self.context(plugin))
            if isinstance(result, Cancel):
                return True
            if ok and result is not None:
                self._unexpected(plugin, "session_before_change", result, "Cancel")
        return False

    async def session_started(self, reason: str, previous_session_file: str | None) -> None:
        event = SessionStartEvent(reason, previous_session_file)
        for plugin, fn in self._handlers("session_start"):
            await self._call(plugin, "session_start", fn, event, self.context(plugin))

    def abort(self) -> None:
        self.ui.cancel_pending()

    def ui_response(self, answer: dict[str, Any]) -> None:
        self.ui.resolve(answer)

    def input_closed(self) -> None:
        self.ui.close()

    async def shutdown(self) -> None:
        """Pending and later dialogs get their defaults, running commands finish, `session_shutdown` runs."""
        if self._closed:
            return
        self._closed = True
        self.ui.close()
        while self._tasks:
            await asyncio.wait(set(self._tasks))
        for plugin, fn in self._handlers("session_shutdown"):
            await self._call(plugin, "session_shutdown", fn, SessionShutdownEvent(), self.context(plugin))
        if self._unsubscribe is not None:
            self._unsubscribe()

    # -- observation --------------------------------------------------------------------------------

    def _observe(self, event: dict[str, Any]) -> None:
        """Session listener: observers get a shallow copy; async ones run as tasks (awaited at shutdown)."""
        kind = event.get("type")
        for plugin in self.plugins:
            for fn in plugin.handlers.get(kind, ()):  # type: ignore[arg-type]
                try:
                    result = fn(dict(event), self.context(plugin))
                except Exception as exc:
                    self.report(plugin, kind, exc)  # type: ignore[arg-type]
                    continue
                if inspect.isawaitable(result):
                    self._spawn(self._finish(plugin, kind, result))  # type: ignore[arg-type]

    async def _finish(self, plugin: Plugin, event: str, awaitable: Any) -> None:
        try:
            await awaitable
        except Exception as exc:
            self.report(plugin, event, exc)


def _context_message(plugin: Plugin, text: str, display: bool) -> dict[str, Any]:
    """A `custom` message (`coding/messages.py`: the model reads it as user text) carrying a plugin's context."""
    return {"role": "custom", "customType": plugin.id, "content": str(text), "display": display,
            "timestamp": now_ms()}


def _command_item(command: CommandSpec) -> dict[str, Any]:
    plugin = command.plugin
    item: dict[str, Any] = {"name": command.name}
    if command.description:
        item["description"] = command.description
    item["source"] = "capability"
    item["sourceInfo"] = {"path": f"<plugin:{plugin.id}:{command.name}>", "source": plugin.id,
                          "scope": plugin.scope, "origin": plugin.origin}
    item["path"] = plugin.path
    return item
