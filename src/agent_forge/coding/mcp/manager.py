"""The MCP servers of a session: their connections, their tools in the agent's tool list, their reports.

`McpManager.start()` starts every enabled server in the background (it must run in the agent's asyncio loop);
nothing here waits for a server except `wait_ready`, which a run awaits before its first request. Tools join
the session through the session's `ToolSelection` (`--tools`, `--no-tools`, `--exclude-tools` apply as to plugin
tools) and leave it when their server is not connected. Every state change is an `mcp_server_changed` event.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import TYPE_CHECKING, Awaitable, Callable

from ..events import Emit, McpServerChanged, McpServerInfo
from ..tools import TOOL_FACTORIES
from ..tools.output_files import OutputDir
from ..tools.selection import ToolSelection
from ...agent.types import ToolError
from ..errors import CommandError
from .config import McpServerConfig
from .connection import ServerConnection
from .deadline import DEFAULT_TIMEOUT_S, CallDeadlines, CallExpired
from .limits import MAX_INSTRUCTIONS_CHARS, one_line, shown_name
from .prompts import map_arguments, offered_prompts, prompt_command, prompt_message, split_prompt_command
from .resources import NAME as READ_RESOURCE, ReadResourceTool
from .tools import McpTool, assign_names
from .vetting import offered_tools

if TYPE_CHECKING:
    from mcp_types import Prompt, Tool

    from ...agent.agent import Agent
    from ...agent.types import AgentTool
    from ...ai.types import ImageContent


PROMPT_TIMEOUT_S = 30.0
"""How long `prompts/get` may take before the prompt is refused."""
START_DELAY_S = 0.3
"""`start_soon` waits this long: importing the SDK takes a second or two of CPU (in a worker thread, but it
shares the interpreter), and a client's first commands, sent at spawn, are answered before it begins."""


class McpManager:
    """`configs` in order; `agent` is the session's agent (its `tools` list is updated in place of the old one);
    `output_dir` gives the directory of full outputs for truncated results; `call_timeout()` is the seconds a
    tool call may still run after `input_closed()` (`pluginHandlerTimeoutMs`); `call_limit` the seconds any
    call may run for a server without `toolTimeoutMs` (print mode's default; None: no limit)."""

    def __init__(self, configs: list[McpServerConfig], *, agent: Agent, selection: Callable[[], ToolSelection],
                 emit: Emit, output_dir: Callable[[], OutputDir] | None = None,
                 call_timeout: Callable[[], float] = lambda: DEFAULT_TIMEOUT_S, call_limit: float | None = None):
        self.agent = agent
        self.call_limit = call_limit
        self._selection = selection
        self._emit = emit
        self._output_dir = output_dir
        self.connections = [ServerConnection(config, self._changed) for config in configs]
        self.clashes: list[str] = []
        self._started = False
        self._closed = False  # `close` ran: a `start_soon` timer still due starts nothing
        self._reported: dict[str, tuple[str, str | None]] = {}
        self.deadlines = CallDeadlines(call_timeout)
        self._input_closed = asyncio.Event()  # no client any more: `wait_ready` waits for no server
        self._owners: dict[str, ServerConnection] = {}  # every agent tool name a server's tool had, and the server
        agent.missing_tool = self.missing_tool

    def start_soon(self) -> None:
        """`start` after `START_DELAY_S` (a prompt's `wait_ready` starts at once); needs a running loop."""
        asyncio.get_running_loop().call_later(START_DELAY_S, self.start)

    def start(self) -> None:
        """Start every enabled server's connection (idempotent)."""
        if self._started or self._closed:
            return
        self._started = True
        for connection in self.connections:
            connection.start()

    async def wait_ready(self) -> None:
        """Wait for servers still on their first attempt, each up to its start-up timeout from its start; one
        not connected by then is reported with an `mcp_server_changed` event whose `message` says the run goes
        on without it. `input_closed()` ends the wait at once."""
        self.start()
        waiting = [c for c in self.connections if c.state == "starting" and not c.first_attempt.is_set()]
        for connection in waiting:
            await self._first_attempt(connection)
            if connection.state != "connected":
                self._report(connection, message=f"MCP server {connection.name} is not ready ({connection.state}"
                             + (f": {connection.error}" if connection.error else "")
                             + "); this prompt runs without its tools")

    def commands(self) -> list[dict[str, object]]:
        """`get_commands` items: each connected server's prompts as `mcp:<server>:<prompt>` (source `mcp`)."""
        return [prompt_command(c.name, c.config.scope, p) for c in self.connections if c.state == "connected"
                for p in self._prompts(c).values()]

    def _prompts(self, connection: ServerConnection) -> dict[str, Prompt]:
        """The server's prompts by command name, each once; a name offered twice is reported (`_warn`)."""
        offered, warnings = offered_prompts(connection.name, connection.prompts)
        for message in warnings:
            self._warn(message, connection)
        return offered

    def names_prompt(self, text: object) -> bool:
        """Whether `text` starts with `/mcp:<server>:<prompt>` of a configured server (connected or not)."""
        parts = split_prompt_command(text)  # type: ignore[arg-type]
        return parts is not None and self._connection(parts[0]) is not None

    def expand_prompt(self, text: object) -> Awaitable[tuple[str, list[ImageContent]]] | None:
        """The user message of `/mcp:<server>:<prompt> args` (`prompts.py`), awaitable; None for other text."""
        parts = split_prompt_command(text)  # type: ignore[arg-type]
        connection = self._connection(parts[0]) if parts else None
        return self._expand(connection, parts[1], parts[2]) if connection and parts else None

    async def _expand(self, connection: ServerConnection, name: str, rest: str) -> tuple[str, list[ImageContent]]:
        command = f"mcp:{connection.name}:{name}"
        await self._connected(connection)
        if connection.state != "connected":
            raise CommandError(f"/{command}: MCP server {connection.name} is not connected ({connection.state}"
                               + (f": {connection.error})" if connection.error else ")"))
        prompts = self._prompts(connection)
        prompt = prompts.get(name)
        if prompt is None:
            names = ", ".join(prompts) or "none"
            raise CommandError(f"/{command}: MCP server {connection.name} has no prompt {name!r} (its prompts: "
                               f"{names})")
        arguments = map_arguments(prompt, rest, command)
        try:
            # as a tool call: after stdin EOF a server that never answers cannot keep the agent alive
            result = await self.deadlines.run(connection.get_prompt(prompt.name, arguments), PROMPT_TIMEOUT_S)
        except ToolError as exc:
            raise CommandError(f"/{command}: {exc}") from None
        except CallExpired as exc:
            why = f"within {exc.seconds:g} s" if exc.limit else \
                f"{exc.seconds:g} s after stdin closed (pluginHandlerTimeoutMs)"
            raise CommandError(f"/{command}: MCP server {connection.name} did not answer prompts/get {why}") from None
        text, images = prompt_message(result)
        if not text.strip() and not images:
            raise CommandError(f"/{command}: MCP server {connection.name} returned an empty prompt")
        return text, images

    def _connection(self, name: str) -> ServerConnection | None:
        return next((c for c in self.connections if c.name == name), None)

    async def _first_attempt(self, connection: ServerConnection) -> None:
        """Wait for a server still on its first attempt, up to its start-up timeout (see `wait_ready`)."""
        if connection.state == "starting" and not connection.first_attempt.is_set():
            left = connection.started_at + connection.config.startup_timeout_s - time.monotonic()
            if left > 0 and not self._input_closed.is_set():
                await _first_of(connection.first_attempt, self._input_closed, left)

    async def _connected(self, connection: ServerConnection) -> None:
        """Wait for a server starting or restarting, up to its start-up timeout (`wait_connected`); stdin EOF
        ends the wait (as it ends `wait_ready`'s)."""
        self.start()
        if self._input_closed.is_set():
            return
        waits = [asyncio.ensure_future(connection.wait_connected()), asyncio.ensure_future(self._input_closed.wait())]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()

    def servers(self) -> list[McpServerInfo]:
        """The `get_mcp_servers` items, in configuration order."""
        return [self._info(c) for c in self.connections]

    def prompt_sections(self) -> list[str]:
        """The system prompt's list of connected servers: each with its `description`, else the first line of
        its instructions (empty when none is connected)."""
        lines = []
        for c in self.connections:
            if c.state == "connected" and c.tool_names:
                about = c.config.description or self._instructions_line(c)
                lines.append(f"- {c.name}" + (f": {about}" if about else ""))
        return ["Connected MCP servers (their tools are listed with the others):\n" + "\n".join(lines)] if lines else []

    def _instructions_line(self, connection: ServerConnection) -> str:
        """The first line of the server's instructions, at most `MAX_INSTRUCTIONS_CHARS` (a longer one is
        reported once)."""
        first = (connection.instructions or "").lstrip().partition("\n")[0].strip()
        if len(first) > MAX_INSTRUCTIONS_CHARS:
            self._warn(f"MCP server {connection.name!r}: the first line of its instructions has {len(first):,} "
                       f"characters; the system prompt shows the first {MAX_INSTRUCTIONS_CHARS:,}", connection)
        return one_line(first, MAX_INSTRUCTIONS_CHARS)

    def missing_tool(self, name: str) -> str | None:
        """Why tool `name`, once a server's, is not offered now (its server restarting, ...), or None."""
        connection = self._owners.get(name)
        if connection is None or name in connection.tool_names:
            return None
        if connection.state == "connected":
            return f"Tool {name} is no longer offered by MCP server {connection.name} (its tool list changed)"
        why = f": {connection.error}" if connection.error else ""
        return (f"Tool {name} is not available now: MCP server {connection.name} is {connection.state}{why}. Its "
                "tools come back when it is connected again")

    def input_closed(self) -> None:
        """stdin EOF or the session closing: a run's wait for starting servers ends, and each tool call running
        then or later is cancelled after `call_timeout()` (idempotent)."""
        self._input_closed.set()
        self.deadlines.input_closed()

    async def close(self) -> None:
        """Stop every server (their process groups end); tools are withdrawn."""
        self._closed = True
        self.input_closed()
        await asyncio.gather(*(c.stop() for c in self.connections), return_exceptions=True)

    # -- changes ----------------------------------------------------------------------------------------
    def _changed(self, connection: ServerConnection) -> None:
        self._sync_tools()
        self._report(connection)

    def _sync_tools(self) -> None:
        others = [t for t in self.agent.tools if not isinstance(t, (McpTool, ReadResourceTool))]
        for connection in self.connections:
            connection.tool_names, connection.warnings = [], []
            for notice in connection.listing_notices if connection.state == "connected" else ():
                self._warn(notice, connection)
        offered = [(c, tool) for c in self.connections if c.state == "connected" for tool in self._listed(c)]
        # built-in names (active or not) and the resource reader's are reserved: a server never takes them
        reserved = {t.name for t in others} | set(TOOL_FACTORIES) | {READ_RESOURCE}
        names, clashes = assign_names([(c.name, tool.name) for c, tool in offered], reserved)
        for server, message in clashes:
            self._warn(message, self._connection(server))
        selection = self._selection()
        tools: list[AgentTool] = []
        used = {t.name for t in others}  # a guard: no name is sent twice, whatever the names look like
        for connection, tool in offered:
            name = names[(connection.name, tool.name)]
            if name in used:
                self._warn(f"MCP tool {shown_name(tool.name)} of server {connection.name!r}: the name {name} is "
                           "taken; not offered", connection)
            elif selection.admits(name):
                used.add(name)
                tools.append(McpTool(connection, tool, name, self._output_dir, self.deadlines,
                                     self._limit(connection)))
                connection.tool_names.append(name)
                self._owners[name] = connection
        readable = [c for c in self.connections if c.state == "connected" and c.offers_resources]
        if readable and READ_RESOURCE in used:
            self._warn(f"the tool name {READ_RESOURCE} is taken by another tool; MCP resources cannot be read")
        elif readable and selection.admits(READ_RESOURCE):
            tools.append(ReadResourceTool(readable, self._output_dir, self.deadlines, self._limit))
        self.agent.tools = others + tools

    def _limit(self, connection: ServerConnection) -> float | None:
        """Seconds one call to `connection` may run: its `toolTimeoutMs`, else the session's `call_limit`."""
        return connection.config.tool_timeout_s or self.call_limit

    def _listed(self, connection: ServerConnection) -> list[Tool]:
        """The server's tools a session offers (`vetting.offered_tools`); their problems are reported."""
        tools, notices = offered_tools(connection.name, connection.tools, connection.config.admits)
        for notice in notices:
            self._warn(notice, connection)
        return tools

    def _warn(self, message: str, connection: ServerConnection | None = None) -> None:
        """A naming problem: one of `connection`'s `warnings` until the next tool sync (so it goes once the
        problem does), and printed to stderr (once)."""
        if connection is not None and message not in connection.warnings:
            connection.warnings.append(message)
        if message in self.clashes:
            return
        self.clashes.append(message)
        print(f"Warning: {message}", file=sys.stderr)

    def _report(self, connection: ServerConnection, message: str | None = None) -> None:
        info = self._info(connection)
        key = (json.dumps(info, sort_keys=True), message)
        if self._reported.get(connection.name) == key:
            return
        self._reported[connection.name] = key
        event = McpServerChanged(type="mcp_server_changed", **info)
        if message is not None:
            event["message"] = message
        self._emit(event)

    def _info(self, connection: ServerConnection) -> McpServerInfo:
        config = connection.config
        prompts = self._prompts(connection)  # first: it may add to the warnings
        info = McpServerInfo(name=config.name, scope=config.scope, transport=config.transport,
                             state=connection.state, tools=list(connection.tool_names))
        if connection.error:
            info["lastError"] = connection.error
        if connection.warnings:
            info["warnings"] = list(connection.warnings)
        if prompts:
            info["prompts"] = list(prompts)
        if connection.offers_resources:
            info["resources"] = len(connection.resources)
        return info


async def _first_of(first: asyncio.Event, second: asyncio.Event, timeout: float) -> None:
    """Return when either event is set or after `timeout` seconds."""
    waits = [asyncio.ensure_future(first.wait()), asyncio.ensure_future(second.wait())]
    try:
        await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
