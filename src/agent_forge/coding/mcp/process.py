"""What a stdio MCP server process gets from the agent: a safe environment and a capped stderr (`docs/mcp.md`).

Environment: the SDK's safe set (`HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER`; `mcp.client.stdio.
get_default_environment`, which the SDK adds itself), plus `EXTRA_INHERITED` here, plus the entry's `env`. The
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

EXTRA_INHERITED = ("LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ")
"""Passed on beyond the SDK's set: the locale (a server's text encoding), the temp dir and the time zone."""
STDERR_KEEP_BYTES = 64 * 1024


def server_environment(entry_env: Mapping[str, str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables given to the SDK for a stdio server on top of its safe set: `EXTRA_INHERITED` (when set)
    and then the entry's `env` (which wins)."""
    environ = os.environ if environ is None else environ
    inherited = {key: environ[key] for key in EXTRA_INHERITED
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


def server_pid(env_var: str, token: str) -> int | None:
    """The pid of the agent's own child whose environment holds `env_var=token` (the stdio server the SDK has
    just started: each attempt has its own lifeline token), or None (no `/proc`, or it is gone already)."""
    needle, parent = f"\0{env_var}={token}\0".encode(), os.getpid()
    try:
        names = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return None
    for name in names:
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                if int(stat.read().rsplit(b")", 1)[1].split()[1]) != parent:
                    continue
            with open(f"/proc/{name}/environ", "rb") as environ:
                if needle in b"\0" + environ.read():
                    return int(name)
        except (OSError, ValueError, IndexError):
            continue
    return None


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
