"""A JSON-RPC 2.0 loop on stdin/stdout for the test MCP servers that need no SDK (`mcp_server.py`,
`mcp_hostile_server.py`): it starts in about 30 ms, where importing the SDK's server costs about 1.3 s of CPU
per process (its `mcp_types` models), and the MCP tests start dozens of servers.

It behaves as the SDK's server does on the wire (`tests/support/test_mcp_lite.py` compares them):

- one JSON message per line in, one per line out (compact UTF-8 JSON);
- `initialize` answers the client's protocol version when it is one of `VERSIONS`, else the newest;
- a method without a handler answers `-32601 Method not found` (data: the method); notifications are ignored
  except `notifications/cancelled`;
- a handler returns the result (a dict), or raises `RpcError`; a handler that calls `request.background(fn)`
  answers later with `fn()`'s result, from a thread of its own, unless the request is cancelled first;
- a cancelled request (`notifications/cancelled`) is never answered: its `on_cancel` runs at once, before the
  next message is read (as the SDK runs a cancelled handler's `except` block), and its `cancelled` event is set;
- at stdin EOF every pending request is cancelled so, its thread waited for, and answered `-32000 Connection
  closed`; then `run` returns.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable

VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""Protocol versions the SDK's server (mcp 2.3) accepts; the last is its newest."""

Result = dict
Handler = Callable[["Request"], Result | None]


class RpcError(Exception):
    """A JSON-RPC error answer: `code`, `message` and optional `data`."""

    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


class Request:
    """One request: `id`, `method`, `params` (a dict), and what its handler may use."""

    def __init__(self, server: "Server", message: dict) -> None:
        self.server, self.id, self.method = server, message["id"], message["method"]
        self.params: dict = message.get("params") or {}
        self.cancelled = threading.Event()
        self.thread: threading.Thread | None = None
        self.on_cancel: Callable[[], None] | None = None

    def cancel(self) -> None:
        """The request is cancelled: `on_cancel()`, then the `cancelled` event."""
        if self.on_cancel is not None:
            self.on_cancel()
        self.cancelled.set()

    def progress(self, progress: float, total: float, message: str) -> None:
        """Send `notifications/progress` when the request asked for progress (a `_meta.progressToken`)."""
        token = (self.params.get("_meta") or {}).get("progressToken")
        if token is not None:
            self.server.notify("notifications/progress",
                               {"progressToken": token, "progress": progress, "total": total, "message": message})

    def background(self, work: Callable[[], Result | None], on_cancel: Callable[[], None] | None = None) -> None:
        """Answer with `work()` from a thread of its own (`work` waits on `self.cancelled`; a result of None,
        or a cancelled request, is not answered). `on_cancel()` runs in the reading thread when the request is
        cancelled."""
        self.on_cancel = on_cancel
        def run() -> None:
            try:
                result = work()
            except RpcError as error:
                if not self.cancelled.is_set():
                    self.server.error(self.id, error)
            else:
                if result is not None and not self.cancelled.is_set():
                    self.server.answer(self.id, result)
            finally:
                self.server.pending.pop(self.id, None)

        self.server.pending[self.id] = self
        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()


class Server:
    """The loop: `Server(handlers, initialize=...)`, then `run()`. `initialize` is the `initialize` result
    without `protocolVersion` (added from the request)."""

    def __init__(self, handlers: dict[str, Handler], *, initialize: Result) -> None:
        self.handlers = {"initialize": self._initialize, "ping": lambda request: {}, **handlers}
        self.init = initialize
        self.pending: dict[object, Request] = {}
        self._out = threading.Lock()

    def run(self) -> None:
        """Serve stdin until it ends (module docstring)."""
        for raw in sys.stdin.buffer:
            message = json.loads(raw)
            if "id" not in message:
                self._on_notification(message)
            elif "method" in message:
                self._dispatch(Request(self, message))
        self._closed()

    def notify(self, method: str, params: dict | None = None) -> None:
        self.write({"jsonrpc": "2.0", "method": method, **({"params": params} if params is not None else {})})

    def answer(self, request_id: object, result: Result) -> None:
        self.write({"jsonrpc": "2.0", "id": request_id, "result": result})

    def error(self, request_id: object, error: RpcError) -> None:
        body = {"code": error.code, "message": error.message}
        if error.data is not None:
            body["data"] = error.data
        self.write({"jsonrpc": "2.0", "id": request_id, "error": body})

    def write(self, message: dict) -> None:
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        with self._out:
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()

    def _dispatch(self, request: Request) -> None:
        handler = self.handlers.get(request.method)
        try:
            if handler is None:
                raise RpcError(-32601, "Method not found", request.method)
            result = handler(request)
        except RpcError as error:
            self.error(request.id, error)
            return
        if result is not None:
            self.answer(request.id, result)

    def _on_notification(self, message: dict) -> None:
        if message.get("method") == "notifications/cancelled":
            request = self.pending.pop((message.get("params") or {}).get("requestId"), None)
            if request is not None:
                request.cancel()

    def _initialize(self, request: Request) -> Result:
        asked = request.params.get("protocolVersion")
        return {**self.init, "protocolVersion": asked if asked in VERSIONS else VERSIONS[-1]}

    def _closed(self) -> None:
        for request in list(self.pending.values()):
            request.cancel()
            if request.thread is not None:
                request.thread.join()
            self.error(request.id, RpcError(-32000, "Connection closed"))


def log(text: str) -> None:
    """Append a line to the file named by `$MCP_TEST_LOG`, if set (the tests read it)."""
    path = os.environ.get("MCP_TEST_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(text + "\n")
