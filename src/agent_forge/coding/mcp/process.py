"""What a stdio MCP server process gets from the agent: a safe environment and a capped stderr (`docs/mcp.md`).

Environment: the SDK's safe set (`SAFE_INHERITED`, as `mcp.client.stdio.get_default_environment` has it), plus
`EXTRA_INHERITED`, plus the entry's `env`; nothing else (`stdio_transport` gives the server exactly this). The
agent's other variables (provider keys, tokens) are not passed: a server that needs one names it in `env`
(`"GITHUB_TOKEN": "${GITHUB_TOKEN}"`). Values that start with `()` (exported shell functions) are skipped, as
the SDK does.

Stderr: the server writes to a pipe the agent reads at once, keeping only the last `STDERR_KEEP_BYTES` (a chatty
server writing for days cannot fill the disk or the memory); the tail is quoted when the server fails.
"""

from __future__ import annotations

import asyncio
import os
import signal
from typing import IO, Mapping

SAFE_INHERITED = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
"""What the SDK's own stdio transport passes on (`mcp.client.stdio.DEFAULT_INHERITED_ENV_VARS`, POSIX)."""
EXTRA_INHERITED = ("LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ")
"""Passed on beyond the SDK's set: the locale (a server's text encoding), the temp dir and the time zone."""
STDERR_KEEP_BYTES = 64 * 1024


def server_environment(entry_env: Mapping[str, str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment of a stdio server: `SAFE_INHERITED` and `EXTRA_INHERITED` (those set), then the
    entry's `env` (which wins)."""
    environ = os.environ if environ is None else environ
    inherited = {key: environ[key] for key in (*SAFE_INHERITED, *EXTRA_INHERITED)
                 if key in environ and not environ[key].startswith("()")}
    return {**inherited, **entry_env}


class StderrTail:
    """A pipe for a server's stderr, read in the loop; `text()` is what was kept (the last `keep` bytes)."""

    def __init__(self, keep: int = STDERR_KEEP_BYTES):
        self.keep = keep
        self._data = bytearray()
        self._read_fd, write_fd = os.pipe()
        os.set_blocking(self._read_fd, False)
        self.writer: IO[bytes] | None = os.fdopen(write_fd, "wb", buffering=0)  # the server's stderr
        self._transport: asyncio.ReadTransport | None = None
        self._reader: IO[bytes] | None = None
        self.ended = asyncio.Event()  # set at end of file: every writer closed the pipe

    async def start(self) -> None:
        """Begin reading (in the running loop)."""
        self._reader = os.fdopen(self._read_fd, "rb", buffering=0)
        self._transport, _ = await asyncio.get_running_loop().connect_read_pipe(lambda: _Keep(self), self._reader)

    def spawned(self) -> None:
        """The server has the pipe now: the agent's copy of the write end is closed, so reading ends when the
        server (and whatever it started holding it) is gone."""
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def add(self, data: bytes) -> None:
        self._data.extend(data)
        if len(self._data) > self.keep:
            del self._data[:len(self._data) - self.keep]

    def text(self) -> str:
        return self._data.decode("utf-8", "replace")

    def close(self) -> None:
        """Stop reading and release both ends (idempotent)."""
        self.spawned()
        if self._read_fd < 0:
            return
        if self._transport is not None:
            self._transport.close()  # closes the reader too
        elif self._reader is not None:
            self._reader.close()
        else:
            os.close(self._read_fd)
        self._transport, self._reader, self._read_fd = None, None, -1


class _Keep(asyncio.Protocol):
    def __init__(self, tail: StderrTail):
        self.tail = tail

    def data_received(self, data: bytes) -> None:
        self.tail.add(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.tail.ended.set()


async def process_exit(pid: int) -> str:
    """Wait until process `pid` has exited (its pidfd becomes readable; the asyncio child watcher still reaps
    it) and say how: `exit status 3`, `killed by signal 9`, or "" when that is unknown (already reaped).
    Waits for ever where pidfds do not exist (not Linux 5.3+)."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        await asyncio.Event().wait()
        raise AssertionError("unreachable")
    loop = asyncio.get_running_loop()
    ended = loop.create_future()
    loop.add_reader(fd, lambda: ended.done() or ended.set_result(None))
    try:
        await ended
        return _how(fd)
    finally:
        loop.remove_reader(fd)
        os.close(fd)


def _how(pidfd: int) -> str:
    try:  # WNOWAIT: leave the zombie for the child watcher, whose returncode the SDK reads
        info = os.waitid(os.P_PIDFD, pidfd, os.WEXITED | os.WNOWAIT)  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return ""
    if info is None:
        return ""
    if info.si_code == os.CLD_EXITED:
        return f"exit status {info.si_status}"
    return f"killed by signal {info.si_status}"


def kill_group(pid: int) -> None:
    """SIGKILL the process group a stdio server led (it was started in a new session, so its pid is the group's
    id, which stays taken while a member lives; as in the SDK, not `getpgid`, which fails once it is reaped)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass  # the group is gone


async def kill_leftovers(watch: str | None) -> None:
    """SIGKILL what still carries a stdio server's lifeline token, and its groups, then release the token: the
    SDK kills the server's group only when the server outlives its grace period, so what a server that exited
    (by itself, or when its stdin closed) started in its group, or left behind re-parented, would live on."""
    import anyio

    from ..tools import lifeline

    try:
        if watch:
            with anyio.CancelScope(shield=True):  # the connection task may be cancelled (stop): kill them anyway
                await anyio.to_thread.run_sync(lifeline.sweep, [watch], 5)
    finally:
        lifeline.release(watch)
