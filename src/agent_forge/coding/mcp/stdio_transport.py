"""Our stdio transport for MCP servers: spawn the server, split its stdout into messages in linear time, with a
cap on one message (64 MiB, `docs/mcp.md`, "Connections").

The SDK's own `stdio_client` rebuilds its buffer (`buffer + chunk`) on every read, so one long line costs time
quadratic in its length, and it has no cap (a server printing 1 GB without a newline would hold it all). Here a
line is kept in a `bytearray` that each byte enters once, and a line over `MAX_MESSAGE_BYTES` ends the read: the
session receives a `MessageTooLong` item and the end of the stream; the rest of that line is never read.

The session gets the streams the SDK's `ClientSession` takes: `SessionMessage | Exception` items to read (an
`Exception` for a line that is not JSON-RPC, as the SDK's transport does), `SessionMessage` items to write. The
shutdown is the SDK's (and the MCP specification's): close stdin, wait 2 s, SIGTERM the process group, wait 2 s,
SIGKILL it. The SDK is imported only when a server starts (this module is imported by `connection.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, AsyncIterator, Mapping, Sequence

from .unshown import unshown_line
from .wire import validate_message

if TYPE_CHECKING:
    from anyio import Event as AnyioEvent
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.shared.message import SessionMessage

MiB = 1024 * 1024
MAX_MESSAGE_BYTES = 64 * MiB
"""The longest line (one JSON-RPC message, without its newline) a stdio server may write, in bytes; a longer one
fails the server's connection. Above what a result may usefully hold: an image of the 20 MB that tool results
may carry is 27 MB in base64, and servers often send a 10 MB text result twice (as text and as
`structuredContent`)."""
CHUNK_BYTES = 256 * 1024
"""How much of stdout one read takes at most."""
GRACE_S = 2.0
"""After stdin is closed, and again after SIGTERM: how long the server has to exit."""
_WRITER_FLUSH_S = 0.5
_EXIT_POLL_S = 0.01


class NotJsonRpc(ValueError):
    """A stdout line that is not a JSON-RPC message (not JSON, or JSON of another shape): `line` is its text,
    which `errors.first_line` quotes (pydantic's own message for JSON of another shape does not); `cause` is
    pydantic's error (`errors.parse_reason` says what it found)."""

    def __init__(self, line: str, cause: Exception):
        super().__init__(str(cause))
        self.line = line
        self.cause = cause


class MessageTooLong(Exception):
    """The server wrote a line of more than `limit` bytes (`seen` of it were read before it was refused)."""

    def __init__(self, seen: int, limit: int = MAX_MESSAGE_BYTES):
        super().__init__(f"the server wrote a message (one line of its output) longer than {size_text(limit)} "
                         f"({seen:,} bytes without a newline); the rest of it was not read")
        self.seen = seen
        self.limit = limit


def size_text(limit: int) -> str:
    """`16 MiB` for a whole number of MiB, else `1,000 bytes`."""
    return f"{limit // MiB} MiB" if limit % MiB == 0 else f"{limit:,} bytes"


class LineSplitter:
    """Newline-delimited messages from chunks of bytes, in time linear in their length; a line over `limit`
    bytes raises `MessageTooLong` (no more of it is kept than `limit` plus one chunk)."""

    def __init__(self, limit: int = MAX_MESSAGE_BYTES):
        self.limit = limit
        self._partial = bytearray()

    def feed(self, chunk: bytes) -> list[bytes | bytearray]:
        """The lines `chunk` completes (without their `\\n`). Raises `MessageTooLong`."""
        lines: list[bytes | bytearray] = []
        start = 0
        end = chunk.find(b"\n")
        while end >= 0:
            if len(self._partial) + end - start > self.limit:
                raise MessageTooLong(len(self._partial) + end - start, self.limit)
            if self._partial:
                self._partial += chunk[start:end]
                lines.append(self._partial)  # handed over, not copied: a new one takes the next line
                self._partial = bytearray()
            else:
                lines.append(chunk[start:end])
            start = end + 1
            end = chunk.find(b"\n", start)
        self._partial += chunk[start:]
        if len(self._partial) > self.limit:
            raise MessageTooLong(len(self._partial), self.limit)
        return lines


def parse_line(line: bytes | bytearray) -> SessionMessage | Exception:
    """One stdout line as the SDK's stdio transport makes it: a `SessionMessage` holding the validated
    `JSONRPCMessage`, or the parse error (invalid UTF-8 and lone surrogates are replaced: `wire.validate_message`)."""
    from mcp.shared.message import SessionMessage

    text = line.decode("utf-8", "replace")
    try:
        return SessionMessage(validate_message(text))
    except ValueError as exc:  # pydantic's ValidationError, for JSON and for JSON-RPC shape alike
        return NotJsonRpc(text, exc)


@dataclass
class StdioServer:
    """A running stdio server: the session's streams and the process id (its process group's id too)."""

    read: MemoryObjectReceiveStream[SessionMessage | Exception]
    write: MemoryObjectSendStream[SessionMessage]
    pid: int


@contextlib.asynccontextmanager
async def open_stdio(command: str, args: Sequence[str], env: Mapping[str, str], cwd: str | None,
                     stderr: IO[bytes] | None) -> AsyncIterator[StdioServer]:
    """Start `command` in a session of its own (its pid is its process group) with exactly `env`, and yield its
    streams; on exit, stop it (close stdin, 2 s, SIGTERM the group, 2 s, SIGKILL), shielded from cancellation.
    Raises `OSError` when it cannot be started."""
    import anyio

    process = await asyncio.create_subprocess_exec(
        command, *args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=stderr,
        env=dict(env), cwd=cwd, start_new_session=True, limit=CHUNK_BYTES)
    read_send: MemoryObjectSendStream[SessionMessage | Exception]
    read_send, read = anyio.create_memory_object_stream(0)
    write, write_receive = anyio.create_memory_object_stream(0)
    writer_done = anyio.Event()
    async with anyio.create_task_group() as group:
        group.start_soon(_read, process, read_send)
        group.start_soon(_write, process, write_receive, read_send, writer_done)
        try:
            yield StdioServer(read, write, process.pid)
        finally:
            with anyio.CancelScope(shield=True):
                await _shutdown(process, read, write, writer_done)
            group.cancel_scope.cancel()


async def _read(process: asyncio.subprocess.Process, send: MemoryObjectSendStream[SessionMessage | Exception]) \
        -> None:
    """Forward each line; stop at a line over the cap (the session gets `MessageTooLong`, then the end). When the
    session is gone, discard the rest, so a server flushing its output can still see stdin close and exit."""
    import anyio

    assert process.stdout is not None
    lines = LineSplitter()
    try:
        async with send:
            while chunk := await process.stdout.read(CHUNK_BYTES):
                try:
                    batch = lines.feed(chunk)
                except MessageTooLong as exc:
                    await send.send(exc)
                    return  # the connection kills the server: the rest of the line is never read
                for line in batch:
                    if line.strip() and not unshown_line(line):  # a blank line carries no message
                        await send.send(parse_line(line))
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        with contextlib.suppress(OSError, ValueError):
            while await process.stdout.read(CHUNK_BYTES):
                pass
    except (OSError, ValueError):
        pass  # the pipe was closed under the read (shutdown)


async def _write(process: asyncio.subprocess.Process, receive: MemoryObjectReceiveStream[SessionMessage],
                 read_send: MemoryObjectSendStream[SessionMessage | Exception], done: AnyioEvent) -> None:
    """Send each message as one line; a server whose stdin is gone ends the read stream too, so no request
    waits for ever for an answer that cannot come."""
    import anyio

    assert process.stdin is not None
    try:
        async with receive:
            async for item in receive:
                data = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                process.stdin.write(data.encode("utf-8", "replace") + b"\n")
                await process.stdin.drain()
    except (OSError, anyio.ClosedResourceError, anyio.BrokenResourceError):
        await read_send.aclose()
    finally:
        done.set()


async def _shutdown(process: asyncio.subprocess.Process, read: MemoryObjectReceiveStream[SessionMessage |
                    Exception], write: MemoryObjectSendStream[SessionMessage], writer_done: AnyioEvent) -> None:
    import anyio

    read.close()  # the reader's next delivery fails: it discards the rest of the output from then on
    write.close()
    with anyio.move_on_after(_WRITER_FLUSH_S):
        await writer_done.wait()
    assert process.stdin is not None
    with contextlib.suppress(OSError):
        process.stdin.close()
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if await _exited_within(process, GRACE_S):
            break
        with contextlib.suppress(OSError):
            os.killpg(process.pid, sig)
    else:
        await _exited_within(process, GRACE_S)
    transport = getattr(process, "_transport", None)  # asyncio's; it would stay open while a child holds a pipe
    if transport is not None:
        transport.close()


async def _exited_within(process: asyncio.subprocess.Process, seconds: float) -> bool:
    """Whether the server exited within `seconds`, by its return code (set when asyncio's child watcher reaps
    it): not `process.wait()`, which also waits for the pipes to close, which a child holding them never does."""
    deadline = time.monotonic() + seconds
    while process.returncode is None:
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(_EXIT_POLL_S)
    return True
