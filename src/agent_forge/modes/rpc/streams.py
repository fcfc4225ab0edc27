"""The byte streams an `RpcServer` talks over: anything with `async read(n) -> bytes` for commands and
`write(bytes)` + `flush()` for records. RPC mode uses stdin (`FdReader`) and stdout; tests and embedders pass
asyncio streams or in-memory pipes, so the whole protocol runs in one process.
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Callable, Protocol


class ByteReader(Protocol):
    """A command source: `read(n)` returns up to `n` bytes, b"" at end of input (an asyncio.StreamReader)."""

    async def read(self, n: int = -1) -> bytes: ...


class ByteWriter(Protocol):
    """A record sink: written bytes are flushed per record; OSError means output is lost (`stdout_guard`)."""

    def write(self, data: bytes) -> object: ...

    def flush(self) -> None: ...


class FdReader:
    """A `ByteReader` on a file descriptor, read in a daemon thread: works for pipes, files and terminals alike
    (a blocking read never holds up the event loop). Read errors count as end of input. `on_end()` is called
    from the reading thread at the end: the event loop may be waiting for the client to read its output."""

    def __init__(self, fd: int, on_end: Callable[[], None] | None = None):
        self._fd = fd
        self._on_end = on_end
        self._chunks: asyncio.Queue[bytes] | None = None

    async def read(self, n: int = -1) -> bytes:
        if self._chunks is None:
            self._chunks = asyncio.Queue()
            self._start(asyncio.get_running_loop(), self._chunks)
        return await self._chunks.get()

    def _start(self, loop: asyncio.AbstractEventLoop, chunks: asyncio.Queue[bytes]) -> None:
        def run() -> None:
            while True:
                try:
                    chunk = os.read(self._fd, 1 << 16)
                except OSError:
                    chunk = b""
                if not chunk and self._on_end is not None:
                    self._on_end()
                loop.call_soon_threadsafe(chunks.put_nowait, chunk)
                if not chunk:
                    return

        threading.Thread(target=run, name="rpc-stdin", daemon=True).start()
