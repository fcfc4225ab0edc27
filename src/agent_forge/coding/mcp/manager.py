"""The MCP servers of a session: their connections, their tools in the agent's tool list, their reports.

`McpManager.start()` starts every enabled server in the background (it must run in the agent's asyncio loop);
nothing here waits for a server except `wait_ready`, which a run awaits before its first request. Tools join
the session through the session's `ToolSelection` (`--tools`, `--no-tools`, `--exclude-tools` apply as to plugin
tools) and leave it when their server is not connected. Every state change is an `mcp_server_changed` event.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any, Callable

from ..events import Emit, McpServerChanged, McpServerInfo
from ..tools.output_files import OutputDir
from ..tools.selection import ToolSelection
from .config import McpServerConfig
from .connection import ServerConnection
from .deadline import DEFAULT_TIMEOUT_S, CallDeadlines
from .limits import MAX_INSTRUCTIONS_CHARS, one_line, shown_name
from .tools import McpTool, assign_names
from .vetting import vet_tool


START_DELAY_S = 0.3
"""`start_soon` waits this long: importing the SDK takes a second or two of CPU (in a worker thread, but it
shares the interpreter), and a client's first commands, sent at spawn, are answered before it begins."""


class McpManager:
    """`configs` in order; `agent` is the session's agent (its `tools` list is updated in place of the old one);
    `output_dir` gives the directory of full outputs for truncated results; `call_timeout()` is the seconds a
    tool call may still run after `input_closed()` (`pluginHandlerTimeoutMs`)."""

    def __init__(self, configs: list[McpServerConfig], *, agent: Any, selection: Callable[[], ToolSelection],
                 emit: Emit, output_dir: Callable[[], OutputDir] | None = None,
                 call_timeout: Callable[[], float] = lambda: DEFAULT_TIMEOUT_S):
        self.agent = agent
        self._selection = selection
        self._emit = emit
        self._output_dir = output_dir
        self.connections = [ServerConnection(config, self._changed) for config in configs]
        self.clashes: list[str] = []
        self._started = False
        self._closed = False  # `close` ran: a `start_soon` timer still due starts nothing
        self._reported: dict[str, tuple] = {}
        self.deadlines = CallDeadlines(call_timeout)
        self._input_closed = asyncio.Event()  # no client any more: `wait_ready` waits for no server

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
            left = connection.started_at + connection.config.startup_timeout_s - time.monotonic()
            if left > 0 and not self._input_closed.is_set():
                await _first_of(connection.first_attempt, self._input_closed, left)
            if connection.state != "connected":
                self._report(connection, message=f"MCP server {connection.name} is not ready ({connection.state}"
                             + (f": {connection.error}" if connection.error else "")
                             + "); this prompt runs without its tools")

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
        others = [t for t in self.agent.tools if not isinstance(t, McpTool)]
        offered = [(c, tool) for c in self.connections if c.state == "connected" for tool in self._listed(c)]
        names, clashes = assign_names([(c.name, tool.name) for c, tool in offered], {t.name for t in others})
        for message in clashes:
            self._warn(message)
        selection = self._selection()
        tools = []
        used = {t.name for t in others}  # a guard: no name is sent twice, whatever the names look like
        for connection in self.connections:
            connection.tool_names = []
        for connection, tool in offered:
            name = names[(connection.name, tool.name)]
            if name in used:
                self._warn(f"MCP tool {shown_name(tool.name)} of server {connection.name!r}: the name {name} is "
                           "taken; not offered", connection)
            elif selection.admits(name):
                used.add(name)
                tools.append(McpTool(connection, tool, name, self._output_dir, self.deadlines))
                connection.tool_names.append(name)
        self.agent.tools = others + tools

    def _listed(self, connection: ServerConnection) -> list[Any]:
        """The server's admitted tools, each name once: a name listed again is reported, its first tool kept."""
        seen: dict[str, Any] = {}
        for tool in connection.tools:
            if not connection.config.admits(tool.name) or not self._vetted(connection, tool):
                continue
            if tool.name in seen:
                self._warn(f"MCP server {connection.name!r} lists the tool {shown_name(tool.name)} more than "
                           "once; only the first is offered", connection)
            else:
                seen[tool.name] = tool
        return list(seen.values())

    def _vetted(self, connection: ServerConnection, tool: Any) -> bool:
        """False for a tool withheld for its schema (`vetting.py`); its problems are reported either way."""
        offered, notices = vet_tool(connection.name, tool)
        for notice in notices:
            self._warn(notice, connection)
        return offered

    def _warn(self, message: str, connection: ServerConnection | None = None) -> None:
        """Print a naming problem once to stderr; one of `connection`'s own is also its `lastError`."""
        if message in self.clashes:
            return
        self.clashes.append(message)
        print(f"Warning: {message}", file=sys.stderr)
        if connection is not None:
            connection.error = message

    def _report(self, connection: ServerConnection, message: str | None = None) -> None:
        info = self._info(connection)
        key = (info["state"], tuple(info["tools"]), info.get("lastError"), message)
        if self._reported.get(connection.name) == key:
            return
        self._reported[connection.name] = key
        event = McpServerChanged(type="mcp_server_changed", **info)
        if message is not None:
            event["message"] = message
        self._emit(event)

    def _info(self, connection: ServerConnection) -> McpServerInfo:
        config = connection.config
        info = McpServerInfo(name=config.name, scope=config.scope, transport=config.transport,
                             state=connection.state, tools=list(connection.tool_names))
        if connection.error:
            info["lastError"] = connection.error
        return info


async def _first_of(first: asyncio.Event, second: asyncio.Event, timeout: float) -> None:
    """Return when either event is set or after `timeout` seconds."""
    waits = [asyncio.ensure_future(first.wait()), asyncio.ensure_future(second.wait())]
    try:
        await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
