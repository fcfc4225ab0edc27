"""An MCP HTTP server's error statuses, named: the SDK's HTTP client answers a request whose response is an HTTP
error without a JSON-RPC error in its body with a stand-in (`Server returned an error response`, `Not Found`,
`Session terminated`) that names no status. `StatusNotes` keeps the status of each such response (by the id of
the request it answers, from a response hook) and `NamedStatusStream` puts it into the stand-in as the answer
passes to the session: `HTTP 401 Unauthorized: ...` with what to configure (`docs/mcp.md`, "Connections")."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .limits import one_line

if TYPE_CHECKING:
    import httpx2
    from mcp.client._transport import ReadStream
    from mcp.shared.message import SessionMessage

STAND_INS = ("Server returned an error response", "Not Found", "Session terminated")
"""The SDK's words for an HTTP error status (`mcp.client.streamable_http`): replaced by `status_text`."""
MAX_NOTES = 100
"""Statuses kept at most (a request is answered once: its note is taken then; this bounds the rest)."""
HEADERS_HINT = 'the entry\'s "headers" in mcp.json, e.g. "headers": {"Authorization": "Bearer ${TOKEN}"}'
LASTING = frozenset({401, 403, 404, 405})
"""Statuses the same server answers every time until its entry changes (credentials, the URL): a connection
attempt failing with one is not made again (`lasting`); 5xx, 429, a refused connection are retried."""


@dataclass(frozen=True)
class HttpStatus:
    """One error response: its status `code`, the standard `reason` phrase, and its `WWW-Authenticate` header."""

    code: int
    reason: str
    authenticate: str | None


def status_text(status: HttpStatus, stand_in: str) -> str:
    """`HTTP 401 Unauthorized: the server needs authentication (WWW-Authenticate: ...); set ...`; for other
    statuses `HTTP 500 Internal Server Error` (with the SDK's own words when they say more: `Session terminated`)."""
    head = f"HTTP {status.code} {status.reason}".rstrip()
    if status.code == 401:
        asked = f" (WWW-Authenticate: {one_line(status.authenticate, 200)})" if status.authenticate else ""
        return f"{head}: the server needs authentication{asked}; give its credentials in {HEADERS_HINT} " \
               "(OAuth is not supported)"
    if status.code == 403:
        return f"{head}: the server refused the credentials sent, or needs others; check {HEADERS_HINT}"
    return head if stand_in in (STAND_INS[0], status.reason) else f"{head}: {stand_in}"


class StatusNotes:
    """The status of each HTTP error response, by the JSON-RPC id of the request it answers."""

    def __init__(self) -> None:
        self._by_id: dict[object, HttpStatus] = {}

    async def on_response(self, response: httpx2.Response) -> None:
        """An httpx response hook: note an error status (400 and above) of a JSON-RPC request's response."""
        if response.status_code < 400:
            return
        request_id = _request_id(response.request)
        if request_id is None:
            return
        if len(self._by_id) >= MAX_NOTES:
            self._by_id.pop(next(iter(self._by_id)))
        self._by_id[request_id] = HttpStatus(response.status_code, response.reason_phrase,
                                             response.headers.get("www-authenticate"))

    def named(self, item: SessionMessage | Exception) -> SessionMessage | Exception:
        """`item`, with the SDK's stand-in for an HTTP error replaced by the status noted for its id."""
        message = getattr(item, "message", None)
        status = self._by_id.pop(getattr(message, "id", None), None) if self._by_id else None
        error = getattr(message, "error", None)
        if status is not None and error is not None and error.message in STAND_INS:
            error.message = status_text(status, error.message)
            error.data = {"httpStatus": status.code}  # (the stand-ins carry none) what `lasting` reads
        return item


def lasting(exc: BaseException) -> bool:
    """Whether `exc` is the error of a request answered with a `LASTING` HTTP status (`StatusNotes.named`)."""
    data = getattr(getattr(exc, "error", None), "data", None)
    return isinstance(data, dict) and data.get("httpStatus") in LASTING


def _request_id(request: httpx2.Request) -> object:
    """The `id` of the JSON-RPC request in `request`'s body (the SDK sends it whole, not streamed), else None."""
    try:
        body = json.loads(request.content)
    except (ValueError, RuntimeError):  # not JSON; or a streamed body (httpx's RequestNotRead)
        return None
    request_id = body.get("id") if isinstance(body, dict) and "method" in body else None
    return request_id if isinstance(request_id, (int, str)) and not isinstance(request_id, bool) else None


class NamedStatusStream:
    """The SDK's HTTP read stream as the connection reads it (`receive`, `aclose`), stand-ins named
    (`StatusNotes.named`)."""

    def __init__(self, read: ReadStream[SessionMessage | Exception], notes: StatusNotes):
        self._read, self._notes = read, notes

    async def receive(self) -> SessionMessage | Exception:
        """The next item. Raises what the SDK's stream raises (anyio's `EndOfStream` at its end)."""
        return self._notes.named(await self._read.receive())

    async def aclose(self) -> None:
        await self._read.aclose()
