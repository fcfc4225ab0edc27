"""One MCP server's connection: start it, keep it, restart it with backoff, stop it (`docs/mcp.md`).

The SDK client runs in the agent's asyncio loop (anyio runs on asyncio), in one task per server. States:
`disabled`, `starting`, `connected`, `failed` (waiting to restart), `stopped`. A server that cannot be
started, does not answer `initialize` within its start-up timeout, exits, or closes its stream is `failed`
with `error` saying why (with the tail of a stdio server's stderr), and is started again after 1, 2, 4 ... 60 s;
one whose answer to `initialize` or a listing is malformed, or an HTTP status the server repeats (401, 403, 404,
405: `http_status.LASTING`), is not (the same answer would come again). A stdio
server's process is watched (`process.process_exit`): its exit ends the connection even while a child holds its
stdout; when a connection ends, what still carries its lifeline token is killed (`process.kill_leftovers`).
The SDK's `ClientSession` speaks the protocol; the streams under it are ours for stdio (`stdio_transport`:
linear-time reading, a 64 MiB cap per message, whose breach fails the server like a crash) and the SDK's for
HTTP with the same cap (`http_transport`). Changed-list notifications are coalesced (`_refresh_stale`). The SDK
is imported in a worker thread on the first connection, never before (`sdk.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from typing import TYPE_CHECKING, AsyncIterator, Awaitable, Callable, TypeVar

from ...agent.types import ToolError
from ...ai.visible_text import name_text
from .config import McpServerConfig
from .errors import (ConnectionLost, SkippedLines, connection_dropped, first_line, innermost, lasting_failure,
                     parse_reason, restart_delay, stream_broke, validation_summary)
from .http_transport import http_transport
from .limits import MAX_ERROR_CHARS, cut
from .process import StderrTail, kill_group, kill_leftovers, process_exit, server_environment
from .sdk import CHANGED, LISTED_KINDS, list_all, load_sdk
from .stdio_transport import MessageTooLong, open_stdio
from .checked_stream import CheckedStream
from .vetting import screen_tool_listing
from .unshown import unshown_message
from .wire import answer_id, unreadable_answer

if TYPE_CHECKING:  # the SDK's types; the SDK itself is imported on the first connection (`sdk.load_sdk`)
    from types import ModuleType

    from anyio import Event as AnyioEvent
    from mcp import ClientSession
    from mcp.client._transport import TransportStreams
    from mcp.shared.message import SessionMessage
    from mcp_types import (CallToolResult, GetPromptResult, Prompt, ReadResourceResult, Resource,
                           ResourceTemplate, Tool)

    from ...ai.types import JsonValue
    from .sdk import Listed

_T = TypeVar("_T")

BACKOFF_S = (1, 2, 4, 8, 16, 30, 60)
STOP_TIMEOUT_S = 8.0
"""How long `stop` waits for the SDK's shutdown (close stdin, 2 s, SIGTERM to the group, 2 s, SIGKILL)."""
_STDERR_TAIL = 2000


class ServerConnection:
    """The live state of one configured server; `on_change(self)` is called on every state or tool change."""

    def __init__(self, config: McpServerConfig, on_change: Callable[["ServerConnection"], None]):
        self.config = config
        self.on_change = on_change
        self.state = "starting" if config.enabled else "disabled"
        self.error: str | None = None  # the last problem: why it failed, or what a connected server did wrong
        self.tools: list[Tool] = []  # the SDK's `Tool` objects while connected
        self.prompts: list[Prompt] = []  # its `Prompt` objects (when it offers prompts)
        self.resources: list[Resource] = []  # its `Resource` objects, listed at connection (when it offers any)
        self.resource_templates: list[ResourceTemplate] = []  # its `ResourceTemplate` objects
        self.warnings: list[str] = []  # current naming problems of its tools (set by the manager)
        self.tool_names: list[str] = []  # the agent tool names they became (set by the manager)
        self.listing_notices: list[str] = []  # the tools its last `tools/list` answer had that were repaired or
        # taken out (`vetting.screen_tool_listing`); the manager adds them to `warnings`
        self._version: str | None = None  # the protocol version its `initialize` answer gave
        self.instructions: str | None = None
        self.first_attempt = asyncio.Event()  # set when the first connection attempt succeeded or failed
        self._changed = asyncio.Event()  # set (and replaced) on every state change: `wait_connected` waits on it
        self._gave_up = False  # failed without a restart to come (a malformed answer)
        self.started_at = 0.0
        self._session: ClientSession | None = None
        self._task: asyncio.Task | None = None
        self._stop = asyncio.Event()
        self._stderr: StderrTail | None = None
        self._lost_reason: str | None = None  # why the transport ended, when it said (an HTTP error)
        self._ended: str | None = None  # why this attempt's connection ended, once `_gone` reported it
        self._lost: AnyioEvent | None = None  # set to end this attempt's connection (`_connect_once`)
        self._connected = False  # this attempt connected: the backoff starts again from its first step
        self._watch: str | None = None  # the lifeline token in the stdio server's environment, while it runs
        self._pid: int | None = None  # the stdio server's process, while it runs
        self._stale: set[str] = set()  # the listings the server said changed, not listed again yet
        self._refreshing: tuple[asyncio.Task | None, ClientSession | None] = (None, None)  # listing them, and for
        # which session (one at a time; a reconnected server's announcements start their own)
        self._skipped = SkippedLines(self._report_skipped)  # its stdout lines that are not JSON-RPC

    @property
    def name(self) -> str:
        return self.config.name

    def start(self) -> None:
        """Start connecting in the background (idempotent; nothing for a disabled server)."""
        if self._task is None and self.config.enabled:
            self.started_at = time.monotonic()
            self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        """Disconnect and stop the server process (its process group); bounded by `STOP_TIMEOUT_S`. A server not
        connected yet is cancelled at once (the SDK's shutdown of its process still runs, shielded)."""
        self._stop.set()
        task = self._task
        if task is not None and not task.done() and self.state != "connected":
            task.cancel()  # starting (maybe hung in `initialize`) or in its backoff: nothing to finish
            await self._kill_now()
        if task is not None and not task.done():
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError, Exception):
                await asyncio.wait_for(asyncio.shield(task), STOP_TIMEOUT_S)
            if not task.done():
                task.cancel()
        if self._stderr is not None:
            self._stderr.close()
        if self.state != "disabled":
            self._set("stopped")

    async def _kill_now(self) -> None:
        """SIGKILL a stdio server not connected yet (and its group): the SDK's graceful shutdown (close stdin,
        2 s, SIGTERM, 2 s) would hold the agent's exit for 4 s while there is nothing to finish."""
        if self._watch:
            from ..tools import lifeline

            await asyncio.to_thread(lifeline.sweep, [self._watch], 5)

    @property
    def offers_resources(self) -> bool:
        """Whether it listed resources or resource templates (then `read_mcp_resource` can read them)."""
        return bool(self.resources or self.resource_templates)

    async def call_tool(self, name: str, args: dict[str, JsonValue],
                        progress: Callable[[float, float | None, str | None], Awaitable[None]]) -> CallToolResult:
        """The server's `CallToolResult`. Raises `ToolError` when not connected or when the call fails."""
        return await self._request(f"the call of {name}",
                                   lambda session: session.call_tool(name, args, progress_callback=progress))

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> GetPromptResult:
        """The server's `GetPromptResult` for prompt `name`. Raises `ToolError` as `call_tool` does."""
        return await self._request(f"getting the prompt {name}", lambda session: session.get_prompt(name, arguments))

    async def read_resource(self, uri: str) -> ReadResourceResult:
        """The server's `ReadResourceResult` for `uri`. Raises `ToolError` as `call_tool` does."""
        return await self._request(f"reading {uri}", lambda session: session.read_resource(uri))

    async def wait_connected(self) -> None:
        """Wait while the server is starting or restarting (`failed` with a restart to come) until an attempt
        ends, at most its start-up timeout from now (the first attempt: from its start). Returns at once when
        it is connected, stopped, disabled or failed for good; the caller checks `state` after."""
        deadline = (self.started_at if not self.first_attempt.is_set() else time.monotonic()) \
            + self.config.startup_timeout_s
        attempted = False  # an attempt began during this wait: its failure ends the wait
        while self.state == "starting" or (self.state == "failed" and not self._gave_up and not attempted):
            attempted = attempted or self.state == "starting"
            left = deadline - time.monotonic()
            if left <= 0:
                return
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._changed.wait(), left)

    async def _request(self, what: str, send: Callable[[ClientSession], Awaitable[_T]]) -> _T:
        await self.wait_connected()  # a restarting server's call waits as its prompt does (docs/mcp.md)
        session = self._session
        if session is None or self.state != "connected":
            raise ToolError(f"MCP server {self.name} is not connected ({self.state}"
                            + (f": {self.error})" if self.error else ")"))
        try:
            return await send(session)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if stream_broke(exc) and session is self._session:  # the HTTP server is gone (or broke its stream):
                self._lost_reason = "the server closed the connection"  # reconnect; it is reported failed now
                self._gone()
                if self._lost is not None:
                    self._lost.set()
            raise ToolError(f"MCP server {self.name}: {what} failed: {self._describe(exc)}") from None

    # -- the connection task ------------------------------------------------------------------------------
    async def _run(self) -> None:
        attempt = 0
        while not self._stop.is_set():
            self._connected, self._lost_reason, self._ended = False, None, None
            self._stale.clear()
            lasting: str | None = None  # why the same attempt would fail the same way: then it is not made again
            try:
                await self._connect_once()
                error = "the connection ended"
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # noqa: BLE001 (the SDK's exception groups included)
                await self._stderr_read(exc)
                error = self._describe(exc)
                lasting = None if self._connected else lasting_failure(innermost(exc))
            if self._ended is not None:  # `_gone` reported the end already: the same words, not a second report
                error = self._ended  # (what the transport raises after it, an HTTP `ReadError`, says less)
            self._session, self.tools, self.prompts, self.resources, self.resource_templates = None, [], [], [], []
            if self._stop.is_set():
                return
            if lasting is not None:  # its answer to initialize or a listing: the same answer would come every time
                self.error = f"{error}; not restarted ({lasting})"
                self._gave_up = True
                self._set("failed")
                self.first_attempt.set()
                return
            attempt = 0 if self._connected else attempt
            delay = BACKOFF_S[min(attempt, len(BACKOFF_S) - 1)]
            attempt += 1
            self.error = error + restart_delay(delay)
            self._set("failed")
            self.first_attempt.set()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stop.wait(), delay)
            if not self._stop.is_set():
                self._set("starting")

    async def _connect_once(self) -> None:
        ClientSession, anyio = await load_sdk()
        async with self._transport() as (read, write):
            lost = self._lost = anyio.Event()
            async with anyio.create_task_group() as group:
                if self._pid is not None:
                    group.start_soon(self._on_exit, self._pid, lost)
                try:
                    async with ClientSession(CheckedStream(self, read, lost), write,
                                             message_handler=self._on_message) as session:
                        await self._initialize(session, anyio, lost)
                        await self._wait_until_over(anyio, lost)
                finally:
                    group.cancel_scope.cancel()

    async def _initialize(self, session: ClientSession, anyio: ModuleType, lost: AnyioEvent) -> None:
        timeout = self.config.startup_timeout_s
        with anyio.move_on_after(timeout) as scope:
            result = await session.initialize()
            tools = await list_all(session.list_tools, "tools")
            offers = result.capabilities
            self.prompts = await self._optional_list(session, "prompts") if offers.prompts else []
            self.resources = await self._optional_list(session, "resources") if offers.resources else []
            self.resource_templates = await self._optional_list(session, "resource_templates") \
                if offers.resources else []
        if scope.cancelled_caught:
            if lost.is_set():
                raise ConnectionLost()
            raise TimeoutError(f"no answer to initialize within {timeout:g} s")
        self.instructions = getattr(result, "instructions", None)
        self._session, self.tools, self._connected = session, tools, True
        self._set("connected")
        self.first_attempt.set()

    async def _wait_until_over(self, anyio: ModuleType, lost: AnyioEvent) -> None:
        async with anyio.create_task_group() as group:
            async def on_stop() -> None:
                await asyncio.shield(self._stop.wait())
                group.cancel_scope.cancel()

            group.start_soon(on_stop)
            await lost.wait()
            group.cancel_scope.cancel()
        if not self._stop.is_set():
            raise ConnectionLost()

    def _checked_item(self, item: SessionMessage | Exception) -> SessionMessage | None:
        """`item` as the session gets it (a tool listing screened first, `_screen`), or None when it is skipped: a
        stdio line that is not JSON-RPC is reported (as `error`), and one answering a request fails it
        (`_unreadable_answer`). Raises `ConnectionLost` when the connection must end: a line over the cap (the
        server is killed: the rest of it is unread), an HTTP transport error (reconnect, with backoff)."""
        if isinstance(item, MessageTooLong):
            self._lost_reason = str(item)
            if self._pid is not None:
                kill_group(self._pid)
            raise ConnectionLost()
        if isinstance(item, Exception):
            if self.config.transport == "http":
                self._lost_reason = "the server closed the connection" if connection_dropped(item) else \
                    f"HTTP transport error: {first_line(item)}"
                raise ConnectionLost()
            self._skipped.add(first_line(item))  # the event at most every second
            self.error = self._skipped.text
            return self._unreadable_answer(item)
        if unshown_message(item.message):  # (a stdio server's are dropped before they are parsed)
            return None
        self._screen(getattr(item.message, "result", None))  # before the SDK checks it
        return item

    def _unreadable_answer(self, item: Exception) -> SessionMessage | None:
        """For a stdio line that is not JSON-RPC but answers a request (`wire.answer_id`), an error answer to it:
        that request fails now instead of waiting for ever (an id nobody waits for is dropped by the SDK)."""
        line = getattr(item, "line", None)
        request_id = answer_id(line) if isinstance(line, str) else None
        if request_id is None:
            return None
        return unreadable_answer(request_id, parse_reason(getattr(item, "cause", item)), first_line(item))

    def _screen(self, result: object) -> None:
        """Note the protocol version an `initialize` answer gives; take the tools out of a `tools/list` answer
        that would make the SDK refuse the listing (`vetting.screen_tool_listing`), keeping the notices."""
        if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
            self._version = result["protocolVersion"]
        elif isinstance(result, dict) and "tools" in result:
            self.listing_notices = screen_tool_listing(self.name, result, self._version)

    async def _on_exit(self, pid: int, lost: AnyioEvent) -> None:
        """The stdio server process itself exited: the connection is over even while a child it started keeps
        its stdout open (the stream would never end); its pending calls fail now, and its group is killed."""
        how = await process_exit(pid)
        if self._stop.is_set():
            return
        if self._lost_reason is None:  # else it was killed for a reason given already (`_pump`)
            self._lost_reason = f"the server exited ({how})" if how else "the server exited"
        self._gone()
        lost.set()
        kill_group(pid)  # its children holding its stdout: the SDK's shutdown kills none once it has exited

    def _gone(self) -> None:
        """The connected server's stream ended: it is `failed` now, its tools withdrawn, before the failed call
        answers (the SDK's shutdown and the stderr read that `_run` then waits for take a second or more)."""
        if self._connected and self.state == "connected" and not self._stop.is_set():
            self._session, self.tools, self.prompts, self.resources, self.resource_templates = None, [], [], [], []
            self._ended = self._describe(ConnectionLost())
            self.error = self._ended + restart_delay(BACKOFF_S[0])
            self._set("failed")

    async def _optional_list(self, session: ClientSession, kind: str) -> list[Listed]:
        """A listing a server offers besides its tools; one that fails is reported and taken as empty (the
        server's tools still work)."""
        try:
            return await list_all(getattr(session, f"list_{kind}"), kind)
        except Exception as exc:  # noqa: BLE001 (a JSON-RPC error, a malformed answer)
            self.error = f"listing its {kind.replace('_', ' ')} failed: {self._describe(exc)}"
            return []

    async def _on_message(self, message: object) -> None:
        kinds = CHANGED.get(type(message).__name__, ())
        if kinds and self._session is not None:
            self._stale.update(kinds)
            running, session = self._refreshing
            if running is None or running.done() or session is not self._session:  # (that one ends by itself)
                task = asyncio.ensure_future(self._refresh_stale(self._session))  # not in the SDK's path
                self._refreshing = (task, self._session)

    async def _refresh_stale(self, session: ClientSession) -> None:
        """List again what the server said has changed, one listing at a time: the announcements that come while
        one runs are served by a single listing after it (a burst of 3000 costs at most two)."""
        while self._stale and session is self._session:
            kinds = tuple(kind for kind in LISTED_KINDS if kind in self._stale)
            self._stale.clear()
            await self._refresh(session, kinds)

    async def _refresh(self, session: ClientSession, kinds: tuple[str, ...]) -> None:
        listed = {}
        for kind in kinds:
            try:
                listed[kind] = await list_all(getattr(session, f"list_{kind}"), kind)
            except Exception as exc:  # noqa: BLE001 (the connection may be ending: its task reports that)
                self.error = f"listing the changed {kind.replace('_', ' ')} failed: {self._describe(exc)}"
                return
        if session is self._session:
            for kind, items in listed.items():
                setattr(self, kind, items)
            self.on_change(self)

    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[TransportStreams]:
        if self.config.transport == "http":
            async with http_transport(self.config) as streams:
                yield streams
            return
        from ..tools import lifeline

        config = self.config
        if self._stderr is not None:
            self._stderr.close()  # the previous attempt's (its tail was reported with its failure)
        self._stderr = stderr = StderrTail()
        await stderr.start()
        watch = self._watch = lifeline.token()  # a SIGKILLed agent's servers are killed by the watchdog too
        env = {**server_environment(config.env), **({lifeline.ENV_VAR: watch} if watch else {})}
        try:
            async with open_stdio(os.path.expanduser(config.command or ""), config.args, env, config.cwd,
                                  stderr.writer) as server:
                stderr.spawned()
                self._pid = server.pid
                yield server.read, server.write
        except OSError as exc:
            # name_text: a newline or tab in the command would split or blur every line that shows this error
            raise OSError(f"cannot start {name_text(config.command)}: {exc.strerror or exc}") from None
        finally:
            stderr.spawned()
            if self._pid is not None:
                kill_group(self._pid)  # what it started in its group, when it exited within the SDK's grace
            self._pid = None
            await kill_leftovers(watch)
            self._watch = None

    async def _stderr_read(self, exc: BaseException) -> None:
        """A server that exited may have written its last words just before: read them (up to 1 s; its
        children may keep the pipe open) so the failure quotes them."""
        leaf = innermost(exc)
        if self._stderr is not None and (isinstance(leaf, ConnectionLost) or "Connection closed" in str(leaf)):
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stderr.ended.wait(), 1.0)

    def _report_skipped(self) -> None:
        if self.state in ("connected", "starting"):  # not when a failure's reason is the news
            self.error = self._skipped.text
            self.on_change(self)

    def _set(self, state: str) -> None:
        self.state = state
        self._changed.set()
        self._changed = asyncio.Event()
        self.on_change(self)

    def _describe(self, exc: BaseException) -> str:
        leaf = innermost(exc)
        if type(leaf).__name__ == "ValidationError":  # pydantic: the answer does not have the protocol's shape
            summary = validation_summary(leaf)
            return cut(f"the server's answer is malformed ({summary})", MAX_ERROR_CHARS, "the message")
        ended = isinstance(leaf, ConnectionLost) or "Connection closed" in str(leaf) or (
            self.config.transport == "http" and connection_dropped(leaf))
        if ended and self._lost_reason:
            text = self._lost_reason
        elif ended:
            text = "the server exited or closed its output" if self.config.transport == "stdio" else \
                "the server closed the connection"
        else:
            text = cut(str(leaf), MAX_ERROR_CHARS, "the message") or self._nameless(leaf)  # a server's own text
        if self.config.transport == "http" and not isinstance(leaf, ToolError):
            text = f"{text} ({cut(self.config.url or '', 300, 'the URL')})"  # httpx's errors name no URL
        tail = self._stderr_tail()  # the last lines of its stderr: capped where they are kept (process.py)
        return f"{text} (stderr: {tail})" if tail else text

    def _nameless(self, leaf: BaseException) -> str:
        """An exception without a message (httpx's `ReadError()` when a server dies): what it means."""
        if self.config.transport == "http":
            return f"the connection to the server failed ({type(leaf).__name__})"
        return type(leaf).__name__

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        text = self._stderr.text()[-_STDERR_TAIL:].strip()
        return " | ".join(line for line in text.splitlines()[-5:] if line.strip())
