"""JSON-RPC 2.0 framing of ACP over stdio: one JSON object per LF-terminated line each way.

`Connection.read_messages` turns input bytes into classified messages (`Incoming`); a line that is not JSON is
answered here with a parse error (-32700, `id: null`; so is a line longer than 64 MiB, which is not kept in memory
past that), a request whose params nest deeper than the parser goes with -32602, one that is JSON but no JSON-RPC
message with an invalid request error (-32600, its `id` when it had a usable one). Output goes through
`stdout_guard.write_out`, so a client that went away costs nothing and a full disk stops the mode. Requests this
agent sends the client (`request`) get their answers matched by id.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass
from typing import Any, AsyncIterator

from ..rpc import framing
from ..rpc.streams import ByteReader, ByteWriter
from ..stdout_guard import write_out
from .protocol import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR, AcpError, client_text, invalid_params


@dataclass
class Incoming:
    """One message from the client: a request (`id` and `method`), a notification (`method` only) or a
    response to one of our requests (`id` with `result` or `error`)."""

    kind: str  # "request", "notification" or "response"
    method: str | None
    params: Any
    id: Any
    message: dict[str, Any]


class Connection:
    """Both directions of one JSON-RPC stream (`out`: stdout in ACP mode, a pipe in tests)."""

    def __init__(self, out: ByteWriter):
        self.out = out
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._closed = False

    def send(self, message: dict[str, Any]) -> None:
        write_out(self.out, framing.encode({"jsonrpc": "2.0", **message}))

    def result(self, request_id: Any, result: Any) -> None:
        self.send({"id": request_id, "result": result})

    def error(self, request_id: Any, error: AcpError) -> None:
        self.send({"id": request_id, "error": error.to_wire()})

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: dict[str, Any]) -> asyncio.Future[Any]:
        """Send a request to the client; the future gets its `result`, or an `AcpError` for an error answer."""
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if self._closed:  # no answer can come: fail now rather than wait forever
            future.set_exception(AcpError(INVALID_REQUEST, "the client closed the connection"))
            return future
        self._pending[request_id] = future
        future.add_done_callback(lambda done: self._given_up(request_id, done))
        self.send({"id": request_id, "method": method, "params": params})
        return future

    def _given_up(self, request_id: int, future: asyncio.Future[Any]) -> None:
        """A request we stopped waiting for (an abort, a withdrawn permission question): the client is told
        with `$/cancel_request`, so it can close its dialog; its late answer is ignored."""
        if future.cancelled() and self._pending.pop(request_id, None) is not None and not self._closed:
            self.notify("$/cancel_request", {"requestId": request_id})

    def close(self) -> None:
        """The client has gone: requests still waiting for an answer fail, and later ones at once."""
        self._closed = True
        for future in self._pending.values():
            if not future.done():
                future.set_exception(AcpError(INVALID_REQUEST, "the client closed the connection"))
        self._pending.clear()

    async def read_messages(self, reader: ByteReader) -> AsyncIterator[Incoming]:
        """Every well-formed message until the input ends; bad lines are answered on the way."""
        splitter = framing.LineSplitter(framing.MAX_COMMAND_BYTES)  # a longer line is not kept in memory
        while chunk := await reader.read(1 << 16):
            for record in splitter.feed(chunk):
                if (message := self._classify(record)) is not None:
                    yield message
        for record in splitter.finish():
            if (message := self._classify(record)) is not None:
                yield message

    def _classify(self, record: bytes | framing.OversizedLine) -> Incoming | None:
        if isinstance(record, framing.OversizedLine):
            self.error(None, AcpError(PARSE_ERROR, f"Parse error: {record.error()}"))
            return None
        if not record.strip():
            return None
        try:
            message = framing.decode(record)
        except ValueError as exc:
            self.error(None, AcpError(PARSE_ERROR, f"Parse error: {exc}"))
            return None
        if isinstance(message, dict) and isinstance(message.get("params"), framing.BadValue):
            if "id" in message and _usable_id(message["id"]) and isinstance(message.get("method"), str):
                self.error(message["id"], invalid_params(f"params: {message['params'].reason} (JSON nested "
                                                         "deeper than the parser goes)"))
            return None  # a notification cannot be answered
        problem = _shape_problem(message)
        if problem is not None:
            request_id = message.get("id") if isinstance(message, dict) and _usable_id(message.get("id")) else None
            self.error(request_id, AcpError(INVALID_REQUEST, f"Invalid request: {problem}"))
            return None
        if "method" not in message:
            self._answered(message)
            return None
        kind = "request" if "id" in message else "notification"
        return Incoming(kind, message["method"], message.get("params"), message.get("id"), message)

    def _answered(self, message: dict[str, Any]) -> None:
        future = self._pending.pop(message["id"], None) if isinstance(message["id"], int) else None
        if future is None or future.done():
            return  # an answer to nothing we asked (or asked and gave up on): nothing to do
        if "error" in message:
            future.set_exception(_client_error(message["error"]))
        else:
            future.set_result(message.get("result"))


def _client_error(error: Any) -> AcpError:
    """The client's error answer as an `AcpError`: its message escaped and capped (`client_text`: it reaches the
    model and the editor's panel in tool errors), a code that is no integer as -32603."""
    error = error if isinstance(error, dict) else {}
    code = error.get("code")
    message = error.get("message")
    return AcpError(code if isinstance(code, int) and not isinstance(code, bool) else INTERNAL_ERROR,
                    client_text(message if isinstance(message, str) else "(no message)"))


def _usable_id(value: Any) -> bool:
    """JSON-RPC ids are strings, integers or null (a fraction or a bool is not echoed back)."""
    return value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _shape_problem(message: Any) -> str | None:
    """Why `message` is no JSON-RPC 2.0 request, notification or response, or None."""
    if not isinstance(message, dict):
        return "a JSON-RPC message is a JSON object (batches are not used by ACP)"
    if message.get("jsonrpc") != "2.0":
        return '"jsonrpc" must be "2.0"'
    if "id" in message and not _usable_id(message["id"]):
        return '"id" must be a string, an integer or null'
    if "method" in message:
        if not isinstance(message["method"], str):
            return '"method" must be a string'
        params = message.get("params")
        if params is not None and not isinstance(params, (dict, list)):
            return '"params" must be an object'
        return None
    if "id" in message and ("result" in message or "error" in message):
        return None
    return 'a message needs a "method" (request or notification) or an "id" with "result" or "error"'
