"""Test doubles shared by the suites (one home: tests import them from here, fixtures in tests/conftest.py).

- `FifoGate`: a shell command blocks on it (`gate.wait`) until the test calls `open()`.
- `PidFifo`: a shell command writes a process id to it (`echo $! > PATH`); `await pid()` gives it.
- `ProcessWatch`: a process the test did not start (its pidfd); `exited()` waits for its exit.
- `Recorder`: a session listener collecting events; `reached(type)` awaits one, `next()` the next one.
- `session_factory`: real `AgentSession`s in a tmp dir, driven by a `FauxProvider` passed in.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

from agent_forge.ai.providers.faux import FauxProvider
from agent_forge.coding.agent_session import AgentSession
from agent_forge.coding.factory import SessionOptions, create_session


class FifoGate:
    """A FIFO a command blocks on (`read _ < PATH`) until the test calls `open()` (once per waiting reader).
    The test holds it open read-write, so neither side blocks on opening it and written data waits in it."""

    def __init__(self, path: Path):
        os.mkfifo(path)
        self.path = path
        self._fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)

    @property
    def wait(self) -> str:
        """The shell command that blocks until `open()`."""
        return f"read _ < '{self.path}'"

    def open(self) -> None:
        os.write(self._fd, b"go\n")

    def close(self) -> None:
        os.close(self._fd)


class PidFifo:
    """A FIFO a shell command writes a process id to (`echo $! > PATH`, at the moment it has forked that
    process); `await pid()` gives the first one written (TimeoutError after `timeout` s). Held open read-write
    like `FifoGate`, so the writer never blocks, even when the test has stopped reading."""

    def __init__(self, path: Path):
        os.mkfifo(path)
        self.path = path
        self._fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)

    async def pid(self, timeout: float = 30) -> int:
        loop = asyncio.get_running_loop()
        readable: asyncio.Future[None] = loop.create_future()
        loop.add_reader(self._fd, lambda: readable.done() or readable.set_result(None))
        try:
            await asyncio.wait_for(readable, timeout)
        finally:
            loop.remove_reader(self._fd)
        return int(os.read(self._fd, 64).split()[0])

    def close(self) -> None:
        os.close(self._fd)


def running(pid: int) -> bool:
    """Whether process `pid` exists and has not exited (a /proc census independent of the code under test): a
    zombie, dead but not reaped yet, does not run (pid 1 reaps an orphan here a second or two after it dies)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def group_alive(pgid: int) -> bool:
    """Whether a live (not zombie) process of process group `pgid` exists: a /proc census independent of the
    code under test."""
    for status in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = status.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            return True
    return False


class ProcessWatch:
    """A process the test did not start (Linux: a pidfd, so a reused pid is never confused with it).
    `exited(within)`: True as soon as it has exited (or was gone already), False if it still runs after
    `within` s; `close()` kills it if it still runs (teardown: a test that failed leaves nothing behind)."""

    def __init__(self, pid: int):
        self.pid = pid
        try:
            self._fd: int | None = os.pidfd_open(pid)
        except ProcessLookupError:
            self._fd = None

    def exited(self, within: float = 10) -> bool:
        return self._fd is None or bool(select.select([self._fd], [], [], within)[0])

    def close(self) -> None:
        if self._fd is None:
            return
        if not self.exited(within=0):
            signal.pidfd_send_signal(self._fd, signal.SIGKILL)
        os.close(self._fd)
        self._fd = None


class Recorder:
    """Collects the events passed to it (`skip`: types left out, e.g. `message_update`); `reached(kind)`
    resolves with the latest event of that type once one was seen (TimeoutError after `timeout` s),
    `next()` with the next event recorded after the call."""

    def __init__(self, skip: tuple[str, ...] = ()) -> None:
        self.events: list[dict[str, Any]] = []
        self._skip = skip
        self._waiters: list[tuple[str | None, asyncio.Future[dict[str, Any]]]] = []

    def __call__(self, event: dict[str, Any]) -> None:
        if event["type"] in self._skip:
            return
        self.events.append(event)
        for kind, future in list(self._waiters):
            if kind in (None, event["type"]) and not future.done():
                future.set_result(event)

    def types(self) -> list[str]:
        return [e["type"] for e in self.events]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]

    async def reached(self, kind: str, timeout: float = 10) -> dict[str, Any]:
        if self.of(kind):
            return self.of(kind)[-1]
        return await self._wait(kind, timeout)

    async def next(self, timeout: float = 10) -> dict[str, Any]:
        return await self._wait(None, timeout)

    async def _wait(self, kind: str | None, timeout: float) -> dict[str, Any]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiters.append((kind, future))
        try:
            return await asyncio.wait_for(future, timeout)
        finally:
            self._waiters.remove((kind, future))


SessionFactory = Callable[..., tuple[AgentSession, Recorder]]


def session_factory(tmp_path: Path, faux: FauxProvider, made: list[AgentSession],
                    skip: tuple[str, ...] = ("message_update",)) -> SessionFactory:
    """`make(settings=None, *, context_window=128000, tools=None, session_file=None)` → `(session, recorder)`:
    an AgentSession with its file in `<tmp_path>/sessions`, settings.json in `<tmp_path>/agent` (retries without
    delay unless `settings` say otherwise), the model and stream of `faux`; each session is appended to `made`
    (the caller closes their stores). The recorder leaves the `skip` event types out."""

    def make(settings: dict[str, Any] | None = None, *, context_window: int = 128000, tools: Any = None,
             session_file: str | None = None) -> tuple[AgentSession, Recorder]:
        agent_dir = tmp_path / "agent"
        agent_dir.mkdir(exist_ok=True)
        (agent_dir / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 0}, **(settings or {})}))
        options = SessionOptions(cwd=str(tmp_path), agent_dir=agent_dir, session_dir=str(tmp_path / "sessions"),
                                 stream_fn=faux.stream, session_file=session_file,
                                 system_prompt="You are a test agent.", tools=tools if tools is not None else [])
        session = create_session(options)
        session.agent.model = faux.model(context_window=context_window)
        recorder = Recorder(skip=skip)
        session.subscribe(recorder)
        made.append(session)
        return session, recorder

    return make


def roles_and_texts(messages: list[dict]) -> list[tuple[str, str]]:
    """(role, text) of each message of a request body's `messages`, the system prompt left out."""
    out = []
    for message in messages:
        content = message.get("content")
        text = content if isinstance(content, str) else "".join(
            b.get("text", "") for b in content or [] if isinstance(b, dict))
        if message["role"] != "system":
            out.append((message["role"], text))
    return out


NOBODY = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
"""Prefix of a command run as user and group 65534 (nobody): tests run as root here, for whom no permission bit
bites, and EACCES is only seen by another user (the `nobody_dir` fixture gives a directory it can enter)."""


def run_as_nobody(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The CLI (`python -m agent_forge`) with `args`, run as nobody (`NOBODY`) in `cwd` with exactly `env` (the
    test's agent env: the `nobody_env` fixture; nothing is taken from this process's environment), to its end
    (60 s at most): its exit code and text output."""
    return subprocess.run([*NOBODY, sys.executable, "-m", "agent_forge", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)
