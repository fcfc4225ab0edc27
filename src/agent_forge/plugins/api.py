"""The public plugin API: the `Plugin` a plugin's `setup(plugin)` receives, the contexts and events its
handlers get, and the results they may return (documented with examples in `docs/plugins.md`).

A plugin is a Python module (or package) with a `setup(plugin)` function, sync or async::

    from agent_forge.plugins import Block

    def setup(plugin):
        @plugin.command("hello", description="Say hello")
        async def hello(args, ctx):
            ctx.ui.notify(f"Hello, {args or 'world'}!")

        @plugin.on("tool_call")
        def guard(event, ctx):
            if event.tool_name == "bash" and "rm -rf" in event.args.get("command", ""):
                return Block("rm -rf is not allowed here")

Registration problems (a bad name, a schema that is not an object schema, an unknown event) raise
`PluginError` from `setup`, so the plugin is reported and skipped at load time. Registration ends when `setup`
returns: a later `plugin.command(...)`, `plugin.tool(...)` or `plugin.on(...)` raises `PluginError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Awaitable, Callable, NotRequired, TypedDict, TypeVar, Union, overload

from ..agent.types import AgentMessage, ToolResult
from ..ai.types import JsonValue, Model, UserContent
from .events import (  # noqa: F401 - re-exported: the public API names them
    HANDLED, AddContext, BeforeRunEvent, Block, Cancel, Handled, HandlerResult, HandlerReturn, InputEvent,
    PluginEvent, SessionChangeEvent, SessionShutdownEvent, SessionStartEvent, ToolCallEvent, Transform,
)
from .schema import check_parameters_schema
from .values import json_problem, private_copy
from .ui import PluginUI

if TYPE_CHECKING:
    from ..coding.agent_session import AgentSession

SCOPES = ("user", "project", "temporary")
"""Where a plugin came from (seed 000 `sourceInfo.scope`): the agent dir, the project, or `-e`/the SDK."""

HOOK_EVENTS = ("input", "before_run", "tool_call", "session_before_change", "session_start", "session_shutdown")
"""Events with their own event objects (see the dataclasses below); results may change what happens."""

OBSERVED_EVENTS = (
    "agent_start", "agent_end", "agent_settled", "turn_start", "turn_end", "message_start", "message_update",
    "message_end", "tool_execution_start", "tool_execution_update", "tool_execution_end", "queue_update",
    "bash_execution_update", "compaction_start", "compaction_end", "auto_retry_start", "auto_retry_end",
    "context_window_changed", "thinking_level_changed", "session_info_changed",
)
"""Session events (the RPC event stream, `docs/rpc.md`) a plugin may observe; the handler gets a shallow copy of
the event dict and its return value is ignored."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
_TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")  # what every provider API accepts for a tool name


class PluginError(ValueError):
    """A plugin used the API wrongly (raised at registration, so the plugin is skipped with this message)."""


# -- contexts -----------------------------------------------------------------------------------------


class SessionView:
    """What plugins may see and do with the running session (`ctx.session`)."""

    def __init__(self, session: AgentSession):
        self._session = session

    @property
    def cwd(self) -> str:
        return self._session.cwd

    @property
    def session_file(self) -> str | None:
        path = self._session.store.path
        return str(path) if path else None

    @property
    def session_id(self) -> str:
        return self._session.store.session_id

    @property
    def session_name(self) -> str | None:
        return self._session.store.session_name

    @property
    def model(self) -> Model | None:
        """A copy of the current Model dict (changing it changes nothing), or None."""
        return private_copy(self._session.model)

    @property
    def thinking_level(self) -> str:
        return self._session.agent.thinking_level

    @property
    def is_streaming(self) -> bool:
        return self._session.is_streaming

    @property
    def messages(self) -> list[AgentMessage]:
        """A copy of the conversation so far (changing it changes nothing)."""
        return private_copy(self._session.messages)

    def send_user_message(self, text: str, *, deliver_as: str | None = None) -> str:
        """Send `text` as a user message, as `prompt` would but without plugin command or input handling.
        While the agent works it is queued: `deliver_as` "steer" or "followUp" (the default then). Returns the
        disposition ("started" or "queued"); raises `CommandError` when no model is usable."""
        if deliver_as not in (None, "steer", "followUp"):
            raise ValueError("deliver_as must be 'steer', 'followUp' or None")
        return self._session.prompt(text, None, deliver_as or "followUp")

    def set_session_name(self, name: str) -> None:
        self._session.set_session_name(name)

    def append_entry(self, custom_type: str, data: JsonValue = None) -> None:
        """Save plugin state in the session file (a `custom` entry; never sent to the model). Raises TypeError
        when `custom_type` is not a string or JSON cannot hold `data` (the message names the bad part); nothing
        is saved then."""
        if not isinstance(custom_type, str):
            raise TypeError(f"append_entry: custom_type must be a string, got {type(custom_type).__name__}")
        problem = json_problem(data, "data")
        if problem is not None:
            raise TypeError(f"append_entry: {problem}")
        self._session.store.append_custom(custom_type, data)

    async def abort(self) -> None:
        await self._session.abort()

    async def wait_for_idle(self) -> None:
        await self._session.wait_for_idle()


@dataclass
class Context:
    """What every handler gets besides its event: the plugin, the interaction API, the session."""

    plugin: Plugin
    ui: PluginUI
    session: SessionView

    @property
    def cwd(self) -> str:
        return self.session.cwd

    @property
    def has_ui(self) -> bool:
        """True in RPC mode (dialogs reach a client); False in print and JSON modes (dialogs return defaults)."""
        return self.ui.has_ui


class ToolResultFields(TypedDict):
    """A tool result given as a dict: `{content: [text or image blocks], details?}`."""

    content: list[UserContent]
    details: NotRequired[object]


@dataclass
class ToolContext(Context):
    """A plugin tool's context: `update(partial)` streams progress (a `tool_execution_update` event) with the
    result so far: a string, a `ToolResult`, or a dict `{content, details?}`."""

    tool_call_id: str = ""
    on_update: Callable[[object], None] = field(default=lambda partial: None)
    """The loop's progress callback: it checks `partial` (`check_result`) and raises `ToolError` for a bad one."""

    def update(self, partial: str | ToolResult | ToolResultFields) -> None:
        self.on_update(partial)


# -- registration -------------------------------------------------------------------------------------

CommandHandler = Callable[[str, Context], Union[None, Awaitable[None]]]
ToolReturn = Union[str, ToolResult, "ToolResultFields"]
ToolExecute = Callable[[dict[str, JsonValue], ToolContext], Union[ToolReturn, Awaitable[ToolReturn]]]
Handler = Callable[[PluginEvent, Context], Union[HandlerReturn, Awaitable[HandlerReturn]]]
"""`handler(event, ctx)`: `event` is the event object of its `HOOK_EVENTS` name, or an observed event's dict."""
_Command = TypeVar("_Command", bound=CommandHandler)
_Execute = TypeVar("_Execute", bound=ToolExecute)
_Handler = TypeVar("_Handler", bound=Handler)


@dataclass(frozen=True)
class CommandSpec:
    name: str
    handler: CommandHandler
    description: str | None
    plugin: Plugin
    argument_hint: str | None = None


@dataclass(frozen=True)
class ToolSpec:
    name: str
    label: str
    description: str
    parameters: dict[str, JsonValue]
    execute: ToolExecute
    plugin: Plugin
    read_only: bool = False


class Plugin:
    """One loaded plugin: its identity and what it registered. `id` names it in `get_commands`
    (`sourceInfo.source`); `path` is its file (`extension_error.extensionPath`); `scope` is one of `SCOPES`;
    `origin` is "top-level" or "package" (an installed entry point)."""

    def __init__(self, *, id: str, path: str, scope: str = "temporary", origin: str = "top-level",
                 ui: PluginUI | None = None):
        self.id = id
        self.path = path
        self.scope = scope
        self.origin = origin
        self.ui: PluginUI = ui or PluginUI()
        self.commands: list[CommandSpec] = []
        self.tools: list[ToolSpec] = []
        self.handlers: dict[str, list[Handler]] = {}
        self.sealed = False
        """Set once `setup` has returned: from then on registering raises `PluginError`."""
        self.source_digest: str | None = None
        """SHA-256 (hex) of the source the plugin's modules ran (`source_import.source_digest`): a path plugin's,
        or a module's or entry point's package's; None for one keeping the code first imported (`kept_code`).
        `/reload` compares it to tell which plugins changed."""
        self.kept_code: str | None = None
        """Why loading this plugin again runs the code first imported, not its current source (`loader.py`:
        its package was imported before the plugin first loaded, it holds compiled code, it was given as an
        object); None when every load runs its current source."""

    def seal(self) -> None:
        """End registration (the loader calls it when `setup` returns): the session is built from what was
        registered by then, so a later registration would silently do nothing; it raises instead."""
        self.sealed = True

    def _check_open(self, what: str) -> None:
        if self.sealed:
            raise PluginError(f"Plugin {self.id}: {what} after setup has returned; register commands, tools and "
                              "handlers inside setup(plugin)")

    def __repr__(self) -> str:
        return f"Plugin({self.id!r}, {self.path!r})"

    @overload
    def register_command(self, name: str, handler: None = None, *, description: str | None = None,
                         argument_hint: str | None = None) -> Callable[[_Command], _Command]: ...
    @overload
    def register_command(self, name: str, handler: _Command, *, description: str | None = None,
                         argument_hint: str | None = None) -> _Command: ...

    def register_command(self, name: str, handler: _Command | None = None, *, description: str | None = None,
                         argument_hint: str | None = None) -> _Command | Callable[[_Command], _Command]:
        """Register `/name`: `handler(args, ctx)` (sync or async) runs at once when a `prompt` starts with
        `/name`, even while the agent works; `args` is the rest of the text, stripped. `argument_hint`
        (`"<file> [focus]"`) is shown next to the name in command menus. Without `handler`, returns a
        decorator."""
        self._check_open(f"register_command({name!r})")
        if handler is None:
            return lambda fn: self.register_command(name, fn, description=description, argument_hint=argument_hint)
        if not isinstance(name, str) or not _NAME.match(name) or name.startswith("skill:"):
            raise PluginError(f"Invalid command name {name!r}: use letters, digits, '_', '.', ':' or '-' "
                              "(no leading '/', not 'skill:...')")
        _check_callable("command handler", handler)
        _check_optional_text("description", description)
        _check_optional_text("argument_hint", argument_hint)
        self.commands.append(CommandSpec(name, handler, description, self, argument_hint))
        return handler

    command = register_command

    @overload
    def register_tool(self, name: str, execute: None = None, *, description: str,
                      parameters: dict[str, JsonValue] | None = None, label: str | None = None,
                      read_only: bool = False) -> Callable[[_Execute], _Execute]: ...
    @overload
    def register_tool(self, name: str, execute: _Execute, *, description: str,
                      parameters: dict[str, JsonValue] | None = None, label: str | None = None,
                      read_only: bool = False) -> _Execute: ...

    def register_tool(self, name: str, execute: _Execute | None = None, *, description: str,
                      parameters: dict[str, JsonValue] | None = None, label: str | None = None,
                      read_only: bool = False) -> _Execute | Callable[[_Execute], _Execute]:
        """Register a tool the model can call. `parameters` is a JSON schema of type object (default: no
        parameters); arguments are checked against it before `execute(args, ctx)` (sync or async) runs.
        `execute` returns a string, a `ToolResult` or `{content, details?}`, raises `ToolError` for failures
        the model should see, and may stream progress with `ctx.update(...)`. `read_only=True` declares that it
        changes nothing: it then runs unasked under the `ask` approval policy. Without `execute`, returns a
        decorator."""
        self._check_open(f"register_tool({name!r})")
        if execute is None:
            return lambda fn: self.register_tool(name, fn, description=description, parameters=parameters,
                                                 label=label, read_only=read_only)
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            raise PluginError(f"Invalid tool name {name!r}: 1-64 letters, digits, '_' or '-', not starting "
                              "with a digit or '-'")
        _check_callable("tool execute", execute)
        if not isinstance(description, str) or not description.strip():
            raise PluginError(f"Tool {name}: description must be a non-empty string")
        schema: dict[str, JsonValue] = parameters if parameters is not None else {"type": "object", "properties": {}}
        problem = check_parameters_schema(schema)
        if problem:
            raise PluginError(f"Tool {name}: {problem}")
        if not isinstance(read_only, bool):
            raise PluginError(f"Tool {name}: read_only must be True or False, got {type(read_only).__name__}")
        self.tools.append(ToolSpec(name, label or name, description, schema, execute, self, read_only))
        return execute

    tool = register_tool

    @overload
    def on(self, event: str, handler: None = None) -> Callable[[_Handler], _Handler]: ...
    @overload
    def on(self, event: str, handler: _Handler) -> _Handler: ...

    def on(self, event: str, handler: _Handler | None = None) -> _Handler | Callable[[_Handler], _Handler]:
        """Call `handler(event, ctx)` (sync or async) for `event`: one of `HOOK_EVENTS` or `OBSERVED_EVENTS`.
        Without `handler`, returns a decorator."""
        self._check_open(f"on({event!r})")
        if handler is None:
            return lambda fn: self.on(event, fn)
        if event not in HOOK_EVENTS and event not in OBSERVED_EVENTS:
            raise PluginError(f"Unknown event {event!r}; plugins can handle {', '.join(HOOK_EVENTS)} and observe "
                              f"{', '.join(OBSERVED_EVENTS)}")
        _check_callable(f"{event} handler", handler)
        self.handlers.setdefault(event, []).append(handler)
        return handler


def _check_callable(what: str, value: object) -> None:
    if not callable(value):
        raise PluginError(f"The {what} must be callable, got {type(value).__name__}")


def _check_optional_text(what: str, value: object) -> None:
    if value is not None and not isinstance(value, str):
        raise PluginError(f"The {what} must be a string, got {type(value).__name__}")
