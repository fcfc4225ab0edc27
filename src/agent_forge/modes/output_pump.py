"""Protocol output that never holds up a stop: the claimed stdout, when it is a pipe or a socket, is written
without blocking, and what the client has not taken yet waits in memory (`OutputPump`).

A client that stops reading stdout fills the pipe. A blocking write then holds the event loop, and with it the
signal handlers and the end of stdin, for as long as the client does not read (a SIGTERM did nothing until the
client read on). Here the producer waits only while more than `HIGH_BYTES` wait: memory stays bounded and the
agent goes no faster than the client reads, as with a blocking write, but that wait ends as soon as a stop
signal arrives (`note_signal`), so the stop runs at once. Once the agent is stopping (a stop signal came, or
stdin ended: `note_input_closed`), output the client takes none of for `STALL_SECONDS` is dropped, with the rest
of the process's output; `dropped_message` gives the one stderr line that says so. An agent that is not stopping
(print or JSON mode at the end of its run) waits at exit for as long as the client takes its output, as a
blocking write did.
"""

from __future__ import annotations

import os
import select
import stat
import sys
import _thread  # threading's own lock type, without threading's import cost on the first-answer path
import time
from collections import deque
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    import asyncio

HIGH_BYTES = 4 << 20
"""What may wait for the client (4 MiB, beyond the pipe's own buffer) before the producer waits for it."""
STALL_SECONDS = 2.0
"""How long a stopping agent waits for a client that takes none of its output before dropping that output."""
WAKE_SECONDS = 0.1
"""How often a wait looks at the stop flags: a signal caught by another thread interrupts no wait here."""

stop_signal: int | None = None
"""The stop signal that came (set by `note_signal` from the signal handler), or None."""
input_closed = False
"""Whether the protocol's stdin has ended (set by the thread reading it)."""
stopped_at: float | None = None
"""When (`time.monotonic()`) the first stop signal or the end of input came: a client's `STALL_SECONDS` count
from then at the earliest, so one that paused before the stop still has them to read again."""


def serving() -> None:
    """A mode starts to serve (`termination.run_until_terminated`): no stop signal and no end of input yet."""
    global stop_signal, input_closed, stopped_at
    stop_signal, input_closed, stopped_at = None, False, None


def note_signal(signum: int, frame: object = None) -> None:
    """The Python-level handler of the stop signals while a mode serves (`termination.py`): asyncio's own
    handling runs on the event loop, which a wait for the client holds; this runs in the main thread anywhere."""
    global stop_signal
    stop_signal = signum
    _note_stop()


def note_input_closed() -> None:
    """The protocol's stdin ended: from now on a client that reads nothing loses its output after
    `STALL_SECONDS`. Called from any thread."""
    global input_closed
    input_closed = True
    _note_stop()


def _note_stop() -> None:
    global stopped_at
    if stopped_at is None:
        stopped_at = time.monotonic()


def stopping() -> bool:
    """Whether a stop signal came or the protocol's stdin ended: output the client does not take may go."""
    return stop_signal is not None or input_closed


def usable_on(fd: int) -> bool:
    """Whether `fd` is a pipe or a socket: what a client can leave full. Files and terminals are written as
    before (a terminal's file description is shared with the shell: it must stay blocking)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class OutputPump:
    """Non-blocking writes of records to `fd` (a pipe or socket). `on_error(exc)` gets the first write error
    (BrokenPipeError when the client has gone) and nothing is written after it. Thread-safe: a record written
    from a worker thread (no running loop there) is written before that call returns."""

    def __init__(self, fd: int, on_error: Callable[[OSError], None]) -> None:
        self.fd = fd
        self.dropped = 0
        """Bytes dropped because the client did not take them while the agent stopped."""
        self._on_error = on_error
        self._chunks: deque[memoryview] = deque()
        self._pending = 0
        self._lock = _thread.RLock()
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop watching `fd` for room, if any
        self._done = False  # after an error or the drop: nothing more is written
        self._dropping = False  # after the drop: what is written is counted in `dropped`
        self._last_progress = time.monotonic()
        self._was_blocking = os.get_blocking(fd)
        os.set_blocking(fd, False)

    def write(self, data: bytes) -> None:
        """Queue `data` and write what `fd` takes now. In the event loop's thread the rest is written as the
        client reads (the loop watches `fd`), waiting here only while more than `HIGH_BYTES` wait; elsewhere
        this returns once everything is written (or dropped)."""
        with self._lock:
            if self._dropping:
                self.dropped += len(data)
                return
            if self._done:
                return
            if not self._pending:  # the client's time to take this starts now
                self._last_progress = time.monotonic()
            self._chunks.append(memoryview(data))
            self._pending += len(data)
            self._push()
            loop = _running_loop()
            self._wait(HIGH_BYTES if loop is not None else 0)
            if loop is not None and self._pending:
                self._watch(loop)

    def finish(self) -> None:
        """At exit: write what waits while the client takes it (a stopping agent drops it after
        `STALL_SECONDS` without progress), stop watching `fd` and give it its blocking mode back (its file
        description may be shared with the processes around this one)."""
        with self._lock:
            try:
                self._wait(0)
            finally:
                self._unwatch()
                try:
                    os.set_blocking(self.fd, self._was_blocking)
                except OSError:
                    pass

    def _wait(self, limit: int) -> None:
        """Write until at most `limit` bytes wait. A stop signal ends a producer's wait (`limit` > 0) at once:
        the loop has the stop to run, which writes little. A stopping agent drops what the client did not take
        for `STALL_SECONDS`, counted from the stop at the earliest."""
        poller = None
        while self._pending > limit and not self._done:
            if limit and stop_signal is not None:
                return
            if stopping() and time.monotonic() - max(self._last_progress, stopped_at or 0.0) >= STALL_SECONDS:
                self._drop()
                return
            if poller is None:
                poller = select.poll()
                poller.register(self.fd, select.POLLOUT)
            if poller.poll(WAKE_SECONDS * 1000):
                self._push()

    def _push(self) -> None:
        """Write queued bytes until `fd` is full."""
        while self._chunks and not self._done:
            head = self._chunks[0]
            try:
                written = os.write(self.fd, head)
            except BlockingIOError:
                return
            except OSError as exc:
                self._fail(exc)
                return
            self._pending -= written
            self._last_progress = time.monotonic()
            if written == len(head):
                self._chunks.popleft()
            else:
                self._chunks[0] = head[written:]

    def _writable(self) -> None:
        """The loop's callback when `fd` has room; a thread that holds the lock is writing already."""
        if not self._lock.acquire(blocking=False):
            return
        try:
            self._push()
            if not self._pending or self._done:
                self._unwatch()
        finally:
            self._lock.release()

    def _watch(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._loop is loop:
            return
        self._unwatch()
        loop.add_writer(self.fd, self._writable)
        self._loop = loop

    def _unwatch(self) -> None:
        loop, self._loop = self._loop, None
        if loop is not None and not loop.is_closed():
            loop.remove_writer(self.fd)

    def _drop(self) -> None:
        """Give up on the client: what waits is dropped, and so is everything written after."""
        self.dropped += self._pending
        self._chunks.clear()
        self._pending = 0
        self._done = self._dropping = True
        self._unwatch()

    def _fail(self, exc: OSError) -> None:
        self._chunks.clear()
        self._pending = 0
        self._done = True
        self._unwatch()
        self._on_error(exc)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    asyncio = sys.modules.get("asyncio")  # the claim comes before it is imported (the early answers need none)
    if asyncio is None:
        return None
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def dropped_message(pump: OutputPump | None) -> str | None:
    """The one stderr line for output dropped because the client did not read it, or None."""
    if pump is None or not pump.dropped:
        return None
    return (f"agent-forge: {pump.dropped} bytes of output were dropped: the client read none of it for "
            f"{STALL_SECONDS:g} s while agent-forge was stopping")
