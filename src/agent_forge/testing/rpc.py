"""RPC mode in this process, for tests: `start_in_process` runs `agent-forge --mode rpc <args>` on in-memory
pipes and returns an `RpcClient` for it, as `RpcClient.start` does for a process, in a fraction of the time.
`open_channel` does the same for ACP mode (`mode="acp"`), for a client of the caller's own.

The agent's cwd and environment are the process's, so they are swapped in for the client's lifetime (and
restored by `close`), with the per-process state that would otherwise leak from one run to the next (the
temp dir, the stdout failure, the process output dir). One in-process agent at a time: `busy()` says whether
one runs (start a second agent as a process). What needs a process of its own stays a process: signals,
stdout and stdin claiming, start-up imports, exit on a full disk, kill -9.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
from typing import Mapping, Sequence

from ..modes.rpc.client import RpcClient
from .isolation import isolated

_running: "InProcessChannel | None" = None


def busy() -> bool:
    """Whether an in-process agent is running (its environment is the process's)."""
    return _running is not None


async def start_in_process(args: Sequence[str] = (), *, cwd: str | None = None,
                           env: Mapping[str, str] | None = None) -> RpcClient:
    """An `RpcClient` of `agent-forge --mode rpc <args>` run in this process with `cwd` and `env` (default: the
    current ones). Raises RuntimeError while another in-process agent runs."""
    return RpcClient.connect(open_channel(args, cwd=cwd, env=env))


def open_channel(args: Sequence[str] = (), *, cwd: str | None = None, env: Mapping[str, str] | None = None,
                 mode: str = "rpc") -> "InProcessChannel":
    """`agent-forge --mode <mode> <args>` ("rpc" or "acp") started in this process; its `InProcessChannel`
    (write the client's bytes, read `stdout`/`stderr`). Raises RuntimeError while another in-process agent
    runs."""
    global _running
    if _running is not None:
        raise RuntimeError("an in-process agent is already running")
    channel = InProcessChannel(list(args), cwd, env, mode)
    _running = channel
    channel.begin()
    return channel


class _Sink:
    """The server's writer: records go straight to the client's reader."""

    def __init__(self, stream: asyncio.StreamReader):
        self._stream = stream

    def write(self, data: bytes) -> int:
        if not self._stream.at_eof():
            self._stream.feed_data(data)
        return len(data)

    def flush(self) -> None:
        pass


class _Stderr(io.TextIOBase):
    """`sys.stderr` while the agent runs: text goes to the client's stderr reader."""

    def __init__(self, stream: asyncio.StreamReader):
        self._stream = stream

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not self._stream.at_eof():
            self._stream.feed_data(text.encode("utf-8", "replace"))
        return len(text)


class InProcessChannel:
    """The `Channel` of an in-process agent (`modes/rpc/client.py`)."""

    def __init__(self, args: list[str], cwd: str | None, env: Mapping[str, str] | None, mode: str = "rpc"):
        self._args, self._cwd, self._env, self._mode = args, cwd, env, mode
        self.stdin = asyncio.StreamReader()
        self.stdout = asyncio.StreamReader(limit=1 << 24)  # a client's `readline` takes lines up to 16 MiB
        self.stderr = asyncio.StreamReader()
        self._code: int | None = None
        self._task: asyncio.Task[int] | None = None
        self._restore: contextlib.ExitStack | None = None

    @property
    def returncode(self) -> int | None:
        return self._code

    def begin(self) -> None:
        self._restore = contextlib.ExitStack()
        self._restore.enter_context(isolated(self._cwd, self._env, _Stderr(self.stderr)))
        self._task = asyncio.ensure_future(self._serve())

    async def _serve(self) -> int:
        from ..cli import serve_rpc

        try:
            self._code = await serve_rpc(self._args, self.stdin, _Sink(self.stdout), mode=self._mode)
        except BaseException as exc:  # a crash is the test's failure: reported on stderr, code 1
            _Stderr(self.stderr).write(f"in-process agent crashed: {type(exc).__name__}: {exc}\n")
            self._code = 1
            if not isinstance(exc, Exception):
                raise
        finally:
            self._end()
        return self._code

    def _end(self) -> None:
        global _running
        self.stdout.feed_eof()
        self.stderr.feed_eof()
        if self._restore is not None:
            self._restore.close()
            self._restore = None
        if _running is self:
            _running = None

    def write(self, data: bytes) -> None:
        if not self.stdin.at_eof():
            self.stdin.feed_data(data)

    def close_input(self) -> None:
        if not self.stdin.at_eof():
            self.stdin.feed_eof()

    async def wait(self) -> int:
        assert self._task is not None
        return await asyncio.shield(self._task)

    async def kill(self) -> None:
        """Cancel the agent (what a kill would leave behind stays, as for a process)."""
        assert self._task is not None
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        if self._code is None:
            self._code = -9
