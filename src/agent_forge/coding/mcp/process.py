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
