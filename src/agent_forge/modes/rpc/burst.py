"""Records written in one turn of the event loop leave in one `write` and one `flush` at its end.

A provider's network read often holds dozens of deltas; each becomes a `message_update` record. Writing and
flushing each one costs a system call per record (and a wake-up of the client per record); joining what one
turn of the loop produced costs one, and the client sees the records no later than the loop could have
written them. Order is kept: every record goes through the same buffer, flushed before any later one.
"""

from __future__ import annotations

import asyncio

from ..stdout_guard import write_out
from .streams import ByteWriter


class BurstWriter:
    """Collects encoded records and writes them to `out` (through `write_out`: a client gone away, a full
    disk) when the current loop turn ends, or at once when no loop is running. `flush()` writes what waits."""

    def __init__(self, out: ByteWriter) -> None:
        self._out = out
        self._parts: list[bytes] = []
        self._scheduled = False

    def write(self, data: bytes) -> None:
        self._parts.append(data)
        if self._scheduled:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a record written at start-up or after the mode): nothing to batch with
            self.flush()
            return
        self._scheduled = True
        loop.call_soon(self.flush)

    def flush(self) -> None:
        self._scheduled = False
        if self._parts:
            data = b"".join(self._parts) if len(self._parts) > 1 else self._parts[0]
            self._parts = []
            write_out(self._out, data)
