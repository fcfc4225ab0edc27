"""A raw ACP client for tests: spawns `agent-forge --mode acp`, sends JSON-RPC, records every message both ways
and checks each against the official schema (`acp_schema.py`); `close()` fails the test on any problem.

Client-side requests from the agent (`fs/*`, `terminal/*`, ...) are answered by the handlers in `on_request`
(method -> function of params returning the result or an awaitable of it), else with -32601; permission
requests are approved once by default. A handler returning `Unchecked(result)` sends a result the schema does
not allow (a malformed answer on purpose).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
from typing import Any, Callable

POLL_S = 0.05
"""The longest `wait_for` goes without checking its condition."""

try:
    from support.acp_schema import check
except ImportError:  # run from tests/support itself
    from acp_schema import check  # type: ignore[no-redef]


class AcpReplyError(Exception):
    """The agent answered a request with a JSON-RPC error."""

    def __init__(self, error: dict[str, Any]):
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code, self.message, self.data = error.get("code"), error.get("message"), error.get("data")


class Unchecked:
    """A handler's result sent as it is, not checked against the schema: a malformed answer on purpose."""

    def __init__(self, result: Any):
        self.result = result


def allow_once(params: dict[str, Any]) -> dict[str, Any]:
    """A `session/request_permission` answer choosing the `allow_once` option."""
    return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}


class AcpClient:
    def __init__(self, process: asyncio.subprocess.Process):
        self.process = process
        self.messages: list[tuple[str, dict[str, Any]]] = []  # ("in" | "out", message), in order
        self.problems: list[str] = []
        # an editor whose user approves every call (ask mode is the default); tests replace it to reject or hang
        self.on_request: dict[str, Callable[[dict[str, Any]], Any]] = {"session/request_permission": allow_once}
        self.raw_lines: list[bytes] = []
        self._later: set[asyncio.Future[None]] = set()
        self._pending: dict[Any, tuple[str, asyncio.Future[Any]]] = {}
        self._ids = 0
        self._changed = asyncio.Event()
        self._reader = asyncio.ensure_future(self._read())
        self._stderr: list[bytes] = []
        self._stderr_reader = asyncio.ensure_future(self._read_stderr())

    @classmethod
    async def start(cls, args: list[str] = (), *, cwd: str, env: dict[str, str]) -> "AcpClient":
        """`agent-forge --mode acp <args>` as a process (tests/e2e/conftest.py makes it `start_in_process`)."""
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "agent_forge", "--mode", "acp", *args, cwd=cwd, env=env,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            limit=1 << 24)
        return cls(process)

    @classmethod
    async def start_in_process(cls, args: list[str] = (), *, cwd: str, env: dict[str, str]) -> "AcpClient":
        """The same agent run in this process on in-memory pipes (`agent_forge.testing.rpc.open_channel`);
        RuntimeError while another in-process agent runs."""
        from agent_forge.testing.rpc import open_channel

        return cls(InProcessAgent(open_channel(args, cwd=cwd, env=env, mode="acp")))

    # -- sending ------------------------------------------------------------------------------------
    def send(self, message: dict[str, Any], *, method: str | None = None, checked: bool = True) -> None:
        """Send one message; `checked=False` for the invalid ones a test sends on purpose."""
        message = {"jsonrpc": "2.0", **message}
        self.messages.append(("out", message))
        if checked:
            self.problems.extend(f"client sent {message!r:.200}: {p}" for p in check(message, method))
        self.send_raw(json.dumps(message).encode() + b"\n")

    def send_raw(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)

    def request_nowait(self, method: str, params: Any, *, checked: bool = True) -> asyncio.Future[Any]:
        self._ids += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[self._ids] = (method, future)
        self.send({"id": self._ids, "method": method, "params": params}, checked=checked)
        return future

    async def request(self, method: str, params: Any, timeout: float = 20, *, checked: bool = True) -> Any:
        """The result of a request; raises `AcpReplyError` for an error answer. `checked=False` sends params
        the schema does not allow (the answer is still checked)."""
        return await asyncio.wait_for(self.request_nowait(method, params, checked=checked), timeout)

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"method": method, "params": params})

    async def initialize(self, **capabilities: Any) -> dict[str, Any]:
        return await self.request("initialize", {"protocolVersion": 1, "clientCapabilities": capabilities,
                                                 "clientInfo": {"name": "test-client", "version": "1"}})

    async def new_session(self, cwd: str, mcp_servers: list[dict[str, Any]] | None = None) -> str:
        return (await self.request("session/new", {"cwd": cwd, "mcpServers": mcp_servers or []}))["sessionId"]

    async def prompt(self, session_id: str, *blocks: Any, timeout: float = 20) -> Any:
        content = [{"type": "text", "text": b} if isinstance(b, str) else b for b in blocks]
        return await self.request("session/prompt", {"sessionId": session_id, "prompt": content}, timeout)

    # -- receiving ----------------------------------------------------------------------------------
    def requests(self, method: str) -> list[dict[str, Any]]:
        """The params of the requests the agent sent with `method`."""
        return [m.get("params") for m in self.incoming() if m.get("method") == method and "id" in m]

    def incoming(self) -> list[dict[str, Any]]:
        return [m for direction, m in self.messages if direction == "in"]

    def updates(self, session_id: str | None = None, kind: str | None = None) -> list[dict[str, Any]]:
        """The `update` objects of `session/update` notifications so far."""
        return [m["params"]["update"] for m in self.incoming() if m.get("method") == "session/update"
                and (session_id is None or m["params"]["sessionId"] == session_id)
                and (kind is None or m["params"]["update"].get("sessionUpdate") == kind)]

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 20) -> Any:
        """Wait until `predicate()` is truthy (checked after every received message, and at the latest every
        `POLL_S`: a condition on the fake model or a file changes no message); its value."""
        async def loop() -> Any:
            while not (value := predicate()):
                self._changed.clear()
                if self._reader.done():
                    raise AssertionError("the agent closed its output")
                try:
                    await asyncio.wait_for(self._changed.wait(), POLL_S)
                except TimeoutError:
                    pass
            return value

        return await asyncio.wait_for(loop(), timeout)

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            self.raw_lines.append(line)
            try:
                message = json.loads(line)
            except ValueError:
                self.problems.append(f"agent wrote a line that is not JSON: {line[:200]!r}")
                continue
            self._receive(message)
            self._changed.set()
        for _, future in self._pending.values():
            if not future.done():
                future.set_exception(AssertionError("the agent exited before answering"))
        self._changed.set()

    def _receive(self, message: dict[str, Any]) -> None:
        self.messages.append(("in", message))
        method = None
        if "method" not in message and message.get("id") in self._pending:
            method, future = self._pending.pop(message["id"])
            if not future.done():
                if "error" in message:
                    future.set_exception(AcpReplyError(message["error"]))
                else:
                    future.set_result(message.get("result"))
        self.problems.extend(f"agent sent {message!r:.300}: {p}" for p in check(message, method))
        if "method" in message and "id" in message:
            self._answer(message)

    def _answer(self, request: dict[str, Any]) -> None:
        """Answer with the handler's result; a handler returning an awaitable is answered when it is done
        (one that never is: a client that never answers)."""
        handler = self.on_request.get(request["method"])
        if handler is None:
            self.send({"id": request["id"], "error": {"code": -32601, "message": "not offered by the test"}})
            return
        result = handler(request.get("params") or {})
        if inspect.isawaitable(result):
            async def later() -> None:
                self._reply(request, await result)

            self._later.add(asyncio.ensure_future(later()))
        else:
            self._reply(request, result)

    def _reply(self, request: dict[str, Any], result: Any) -> None:
        if self.process.stdin is not None and not self.process.stdin.is_closing():
            if isinstance(result, Unchecked):
                self.send({"id": request["id"], "result": result.result}, checked=False)
            else:
                self.send({"id": request["id"], "result": result}, method=request["method"])

    # -- the end ------------------------------------------------------------------------------------
    async def close(self, timeout: float = 20) -> int:
        """Close stdin, wait for the exit; the exit code. Fails on schema problems seen on the way."""
        if self.process.stdin is not None and not self.process.stdin.is_closing():
            self.process.stdin.close()
        for answer in self._later:
            answer.cancel()
        try:
            code = await asyncio.wait_for(self.process.wait(), timeout)
        finally:
            if self.process.returncode is None:
                self.process.kill()
                await self.process.wait()
            await asyncio.wait_for(asyncio.gather(self._reader, self._stderr_reader), 5)
        assert not self.problems, "\n".join(self.problems)
        return code

    async def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        while chunk := await self.process.stderr.read(1 << 16):
            self._stderr.append(chunk)

    def stderr(self) -> str:
        """What the agent wrote on stderr so far (all of it once `close` returned)."""
        return b"".join(self._stderr).decode("utf-8", "replace")

    async def __aenter__(self) -> "AcpClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self.process.returncode is None:
            await self.close()


class _ChannelInput:
    """The agent's stdin as `asyncio.subprocess.Process.stdin` offers it (write, drain, close, is_closing)."""

    def __init__(self, channel: Any):
        self._channel, self._closed = channel, False

    def write(self, data: bytes) -> None:
        self._channel.write(data)

    async def drain(self) -> None:
        pass  # the in-memory pipe never fills

    def close(self) -> None:
        self._closed = True
        self._channel.close_input()

    def is_closing(self) -> bool:
        return self._closed or self._channel.returncode is not None


class InProcessAgent:
    """An in-process agent (`InProcessChannel`) looking like the `asyncio.subprocess.Process` `AcpClient` drives:
    `stdin`, `stdout`, `stderr`, `returncode`, `wait()`, `kill()`. It has no pid: a test needing one is a real
    process (`real_process` mark)."""

    def __init__(self, channel: Any):
        self._channel = channel
        self._killed: asyncio.Future[None] | None = None
        self.stdin = _ChannelInput(channel)
        self.stdout, self.stderr = channel.stdout, channel.stderr

    @property
    def returncode(self) -> int | None:
        return self._channel.returncode

    async def wait(self) -> int:
        if self._killed is None:
            return await self._channel.wait()
        await self._killed
        return self._channel.returncode

    def kill(self) -> None:
        """Cancel the agent's task: `wait` then gives its code (-9 unless it had ended)."""
        if self._killed is None:
            self._killed = asyncio.ensure_future(self._channel.kill())

