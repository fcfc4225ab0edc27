"""A Python client for RPC mode: spawns `agent-forge --mode rpc`, sends commands, awaits responses by id and
iterates events.

Example::

    async with await RpcClient.start(["--no-session"]) as client:
        await client.send({"type": "prompt", "message": "Hello"})
        async for event in client.events_until("agent_settled"):
            if event["type"] == "message_update":
                print(event["assistantMessageEvent"].get("delta", ""), end="")

Errors: `RpcError` when a wait times out, and at once, saying `agent exited (code N)`, when the agent has exited
(for `send`, a pending response, or `next_event` once every event before the exit was read); `send` returns
failed responses as they are (check `response["success"]`). A record the client cannot handle (a response
whose `id` is nested too deep to compare) goes to the events, never stopping the reader.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
import threading
from typing import Any, AsyncIterator, Awaitable, Mapping, NotRequired, Protocol, Sequence, TypedDict, TypeVar

from ...ai.types import JsonValue
from .framing import LineSplitter

Record = dict[str, JsonValue]
"""One stdout record of the agent as parsed: a response `{type: "response", id, command, success, ...}` or an
event `{type, ...}` (shapes in docs/rpc.md)."""
_T = TypeVar("_T")


class FlatTreeNode(TypedDict):
    """One entry of `get_tree` with `flat: true`: the session entry, its parent's and its children's ids."""

    entry: dict[str, JsonValue]
    parentId: str | None
    childIds: list[str]
    label: NotRequired[str]
    labelTimestamp: NotRequired[str]


class FlatTree(TypedDict):
    nodes: list[FlatTreeNode]
    leafId: str | None


class RpcError(Exception):
    """The agent process went away, or an expected response or event did not come in time."""


class RpcClient:
    """One agent, over a process's pipes (`start`) or over any pair of streams (`connect`)."""

    def __init__(self, process: asyncio.subprocess.Process | None = None, *, channel: "Channel | None" = None):
        self.process = process  # None for an agent that is no process of its own (`connect`)
        self._channel = channel or _ProcessChannel(process)  # type: ignore[arg-type]
        self.records: list[Record] = []  # every stdout record, in order
        self.invalid_lines: list[bytes] = []  # stdout lines that were not JSON objects
        self.stderr = b""
        self._pending: dict[str, asyncio.Future[Record]] = {}
        self._events: asyncio.Queue[Record | None] = asyncio.Queue()
        self._ids = itertools.count(1)
        self._exit_error: RpcError | None = None  # set once stdout ended: every later wait fails with it
        self._reader = asyncio.ensure_future(self._read_stdout())
        self._err_reader = asyncio.ensure_future(self._read_stderr())

    @classmethod
    async def start(cls, args: Sequence[str] = (), *, cwd: str | None = None, env: dict[str, str] | None = None,
                    command: Sequence[str] | None = None) -> "RpcClient":
        """Spawn the agent. `command` defaults to this interpreter running `-m agent_forge`."""
        argv = [*(command or (sys.executable, "-m", "agent_forge")), "--mode", "rpc", *args]
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            cwd=cwd, env=env, start_new_session=True)
        return cls(process)

    @classmethod
    def connect(cls, channel: "Channel") -> "RpcClient":
        """A client of an agent reached through `channel` (an in-process `RpcServer`, a socket, ...)."""
        return cls(channel=channel)

    @property
    def returncode(self) -> int | None:
        """The agent's exit code once it has exited, else None."""
        return self._channel.returncode

    async def __aenter__(self) -> "RpcClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- sending -------------------------------------------------------------------------------------

    async def send(self, command: Mapping[str, object], timeout: float = 30.0) -> Record:
        """Send a command (an `id` is added when missing) and wait for its response."""
        future = self.send_nowait(command)
        return await self._wait(future, timeout, f"response to {command.get('type')}")

    def send_nowait(self, command: Mapping[str, object]) -> asyncio.Future[Record]:
        """Send `command` (an `id` is added when it has none) and return the future of its response. Raises
        ValueError for an `id` whose response is still awaited: the two responses could not be told apart."""
        command = dict(command)
        command.setdefault("id", f"c{next(self._ids)}")
        key = _id_key(command["id"])
        if key is not None and key in self._pending:
            raise ValueError(f"a command with id {command['id']!r} is still waiting for its response")
        future: asyncio.Future[Record] = asyncio.get_running_loop().create_future()
        if self._exit_error is not None:
            future.set_exception(self._exit_error)
            return future
        if key is not None:
            self._pending[key] = future
        self.write_raw(json.dumps(command, ensure_ascii=False).encode() + b"\n")
        return future

    def write_raw(self, data: bytes) -> None:
        """Write bytes to the agent's stdin as they are (for framing tests)."""
        self._channel.write(data)

    # -- receiving -----------------------------------------------------------------------------------

    async def next_event(self, timeout: float = 30.0) -> Record:
        event = await self._wait(self._events.get(), timeout, "next event")
        if event is None:
            self._events.put_nowait(None)  # every later call fails at once too
            raise self._exit_error or RpcError("agent exited")
        return event

    async def events_until(self, event_type: str, timeout: float = 30.0) -> AsyncIterator[Record]:
        """Yield events up to and including the first of `event_type`."""
        while True:
            event = await self.next_event(timeout)
            yield event
            if event.get("type") == event_type:
                return

    async def wait_for(self, event_type: str, timeout: float = 30.0) -> list[Record]:
        """Collect events up to and including the first of `event_type`."""
        return [event async for event in self.events_until(event_type, timeout)]

    async def prompt_and_wait(self, message: str, timeout: float = 30.0, **fields: object) -> list[Record]:
        """Send a prompt and collect events until `agent_settled`. Raises RpcError if the prompt is rejected."""
        reply = await self.send({"type": "prompt", "message": message, **fields}, timeout)
        if not reply.get("success"):
            raise RpcError(f"prompt rejected: {reply.get('error')}")
        return await self.wait_for("agent_settled", timeout)

    async def get_tree(self, timeout: float = 30.0) -> FlatTree:
        """The session tree in the flat form `{nodes: [{entry, parentId, childIds, label?, labelTimestamp?}],
        leafId}` (docs/rpc.md), which stays shallow JSON however long the session. Raises RpcError if refused."""
        reply = await self.send({"type": "get_tree", "flat": True}, timeout)
        if not reply.get("success"):
            raise RpcError(f"get_tree failed: {reply.get('error')}")
        return reply["data"]  # type: ignore[return-value]  # the agent sends this shape (docs/rpc.md)

    async def _wait(self, awaitable: Awaitable[_T], timeout: float, what: str) -> _T:
        try:
            return await asyncio.wait_for(awaitable, timeout)
        except asyncio.TimeoutError:
            raise RpcError(f"timed out after {timeout}s waiting for {what}") from None

    async def _read_stdout(self) -> None:
        splitter = LineSplitter()
        try:
            while chunk := await self._channel.stdout.read(1 << 16):
                for line in splitter.feed(chunk):
                    self._receive(line)
            for line in splitter.finish():
                self._receive(line)
            await asyncio.wait({self._err_reader}, timeout=5)
            await asyncio.wait({asyncio.ensure_future(self._channel.wait())}, timeout=5)
        finally:  # however the reader ends, no wait is left hanging
            self._ended()

    def _ended(self) -> None:
        code = self.returncode
        state = f"agent exited (code {code})" if code is not None else "agent closed its stdout"
        self._exit_error = RpcError(f"{state}; stderr: {self._stderr_tail()}")
        self._events.put_nowait(None)
        for future in self._pending.values():
            if not future.done():
                future.set_exception(RpcError(f"{state} before responding; stderr: {self._stderr_tail()}"))
        self._pending.clear()

    def _stderr_tail(self) -> str:
        return self.stderr.decode("utf-8", "replace")[-3000:]

    async def _read_stderr(self) -> None:
        if self._channel.stderr is None:
            return
        while chunk := await self._channel.stderr.read(1 << 16):
            self.stderr += chunk

    def _receive(self, line: bytes) -> None:
        """Anything on stdout that is not a JSON object is kept in `invalid_lines`, never fatal to the client."""
        try:
            record = json.loads(line)
        except RecursionError:  # e.g. get_tree of a long session nests two levels per entry
            record = _loads_deep(line)
        except ValueError:
            record = None
        if isinstance(record, dict):
            self._dispatch(record)
        else:
            self.invalid_lines.append(line)

    def _dispatch(self, record: Record) -> None:
        """A response to a pending `send` resolves it; anything else (an unmatchable id too) is an event."""
        self.records.append(record)
        key = _id_key(record.get("id")) if record.get("type") == "response" else None
        if key is not None and key in self._pending:
            future = self._pending.pop(key)
            if not future.done():
                future.set_result(record)
            return
        self._events.put_nowait(record)

    # -- shutdown ------------------------------------------------------------------------------------

    def close_input(self) -> None:
        """Close the agent's stdin (end of commands) without waiting: it finishes its work and exits."""
        self._channel.close_input()

    async def close(self, timeout: float = 30.0) -> int:
        """Close stdin (the agent finishes its work and exits) and wait; kill it if it does not exit."""
        self._channel.close_input()
        try:
            await asyncio.wait_for(self._channel.wait(), timeout)
        except asyncio.TimeoutError:
            await self._channel.kill()
        await asyncio.gather(self._reader, self._err_reader, return_exceptions=True)
        return self.returncode  # type: ignore[return-value]


class Channel(Protocol):
    """What the client needs of an agent: its input, its output streams and its end."""

    stdout: Any  # `async read(n) -> bytes`, b"" at the end
    stderr: Any  # the same, or None when there is no separate stream

    @property
    def returncode(self) -> int | None: ...

    def write(self, data: bytes) -> None: ...

    def close_input(self) -> None: ...

    async def wait(self) -> int: ...

    async def kill(self) -> None: ...


class _ProcessChannel:
    """The pipes of an agent process."""

    def __init__(self, process: asyncio.subprocess.Process):
        self.process = process
        self.stdout, self.stderr = process.stdout, process.stderr

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)

    def close_input(self) -> None:
        if self.process.stdin is not None and not self.process.stdin.is_closing():
            self.process.stdin.close()

    async def wait(self) -> int:
        return await self.process.wait()

    async def kill(self) -> None:
        self.process.kill()
        await self.process.wait()


def _id_key(request_id: JsonValue) -> str | None:
    """The key a response's `id` is matched by: its JSON text, so `1` and `"1"` stay apart (the agent echoes ids
    exactly), or None for one that cannot match a sent id (nested too deep to encode: a 100,000-level list)."""
    try:
        key = json.dumps(request_id, ensure_ascii=False, sort_keys=True)
    except (RecursionError, TypeError, ValueError):
        return None
    return key if len(key) < 10_000 else None


def _loads_deep(line: bytes) -> JsonValue:
    """Parse JSON nested deeper than the interpreter's recursion limit: in a thread with a large stack and a
    raised limit (the C decoder recurses once per level). None when it still cannot be parsed."""
    result: list[JsonValue] = [None]

    def parse() -> None:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 1_000_000))
        try:
            result[0] = json.loads(line)
        except (ValueError, RecursionError):
            pass
        finally:
            sys.setrecursionlimit(limit)

    previous = threading.stack_size(512 * 1024 * 1024)
    try:
        worker = threading.Thread(target=parse, name="rpc-deep-json")
        worker.start()
    finally:
        threading.stack_size(previous)
    worker.join()
    return result[0]
