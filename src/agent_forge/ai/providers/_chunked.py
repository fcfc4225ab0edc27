"""A chunked HTTP/1.1 response body read straight from its connection, every chunk of a network read at once.

A model server sends each event in an HTTP chunk of its own. Read through httpx2, every chunk is one h11 event
and one trip through five async generators (~11 us of CPU an event, most of a delta's cost); a network read
holds hundreds of them. `raw_chunked_body` takes the connection's stream over once the headers are in (the
bytes h11 already holds first) and gives the payload of every read in one piece, decoded by `ChunkedBody`
(RFC 9112 §7.1). It serves only the plain case it can be sure of (HTTP/1.1, `Transfer-Encoding: chunked`, no
content coding, no body byte read yet); anything else reads as before. Errors are httpx2's, worded as h11's,
so `transport_errors` names them as it did. The connection is not reused afterwards (h11 never saw the body
end): each request has a client of its own anyway.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, AsyncIterator

if TYPE_CHECKING:
    import httpx2

READ_BYTES = 64 * 1024  # what httpcore2 reads at a time
MAX_PENDING = 100 * 1024  # most bytes held for an incomplete size line or trailer (httpcore2's h11 limit)
_SIZE_LINE = re.compile(rb"([0-9A-Fa-f]{1,20})(?:;[^\n]*)?[ \t]*")  # extensions are ignored, as h11 does
_TRAILER_END = re.compile(rb"\n\r?\n")
_INCOMPLETE = "peer closed connection without sending complete message body (incomplete chunked read)"


class ChunkedBody:
    """Decodes a chunked body fed in pieces of any size. `feed(data)` returns the payload bytes `data`
    completes (b"" when none); `done` once the last chunk and its trailer arrived (bytes after them are
    ignored); `problem`, h11's words for what is wrong, once a size line or a chunk end is malformed or an
    unfinished size line or trailer holds more than `MAX_PENDING` bytes (the payload before it is returned
    first, as h11 gives it; nothing more is read)."""

    def __init__(self) -> None:
        self._pending = b""  # bytes of an unfinished size line, chunk end or trailer
        self._left = 0  # payload bytes of the current chunk still to come
        self._footer = b""  # the part of the CRLF ending the current chunk still to come
        self._trailer = False  # the last (empty) chunk came: its trailer fields and blank line follow
        self.done = False
        self.problem: str | None = None

    def feed(self, data: bytes) -> bytes:
        buf = self._pending + data if self._pending else data
        parts: list[bytes] = []
        try:
            pos = self._parse(buf, parts)
            rest = b"" if self.done else buf[pos:]
            if len(rest) > MAX_PENDING:
                raise _Malformed("Receive buffer too long")
            self._pending = rest
        except _Malformed as exc:
            self.problem, self.done = str(exc), True
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def _parse(self, buf: bytes, parts: list[bytes]) -> int:
        """Payload of `buf` appended to `parts`; returns where its unfinished rest starts."""
        pos, end = 0, len(buf)
        while pos < end and not self.done:
            if self._left:
                pos = self._payload(buf, pos, parts)
            elif self._footer:
                pos = self._chunk_end(buf, pos)
            elif self._trailer:
                pos = self._trailer_end(buf, pos)
                if not self.done:
                    break
            else:
                line_end = buf.find(b"\r\n", pos)
                if line_end < 0:
                    break
                pos = self._size_line(buf, pos, line_end)
                stop = pos + self._left
                if self._left and buf.startswith(b"\r\n", stop):  # the whole chunk is here: one slice
                    parts.append(buf[pos:stop])
                    pos, self._left = stop + 2, 0
        return pos

    def _payload(self, buf: bytes, pos: int, parts: list[bytes]) -> int:
        take = min(self._left, len(buf) - pos)
        parts.append(buf[pos:pos + take])
        self._left -= take
        if not self._left:
            self._footer = b"\r\n"
        return pos + take

    def _chunk_end(self, buf: bytes, pos: int) -> int:
        got = buf[pos:pos + len(self._footer)]
        if got != self._footer[:len(got)]:
            raise _Malformed(f"malformed chunk footer: {got!r} (expected {self._footer!r})")
        self._footer = self._footer[len(got):]
        return pos + len(got)

    def _size_line(self, buf: bytes, pos: int, line_end: int) -> int:
        match = _SIZE_LINE.fullmatch(buf, pos, line_end)
        if match is None:
            raise _Malformed(f"illegal chunk header: {buf[pos:line_end + 2]!r}")
        self._left = int(match[1], 16)
        self._trailer = not self._left
        return line_end + 2

    def _trailer_end(self, buf: bytes, pos: int) -> int:
        """Past the blank line ending the trailer (its fields are not read: nothing uses them), else `pos`."""
        if buf.startswith(b"\r\n", pos) or buf.startswith(b"\n", pos):
            self.done = True
            return pos + (2 if buf[pos] == 13 else 1)
        found = _TRAILER_END.search(buf, pos)
        if found is None:
            return pos
        self.done = True
        return found.end()


class _Malformed(Exception):
    """A chunked body broke its framing; `str()` says how, in h11's words."""


def raw_chunked_body(response: httpx2.Response) -> AsyncIterator[bytes] | None:
    """The payload of a streamed `response`'s chunked body a network read at a time, or None when it is not
    the plain case (see the module docstring) or httpx2's insides are not the ones this was written for.
    The read timeout is the request's (`read` of its `timeout` extension); the stream's errors are httpx2's
    (`ReadTimeout`, `ReadError`, `RemoteProtocolError`)."""
    headers = response.headers
    if response.http_version != "HTTP/1.1" or headers.get("transfer-encoding", "").strip().lower() != "chunked":
        return None
    if headers.get("content-encoding", "identity").strip().lower() != "identity":
        return None
    taken = _connection_of(response)
    if taken is None:
        return None
    network, held = taken
    timeout = (response.request.extensions.get("timeout") or {}).get("read")
    return _payloads(network, held, timeout)


def _connection_of(response: httpx2.Response) -> tuple[Any, bytes] | None:
    """The response's network stream and the bytes h11 received past the headers, when the response is
    httpx2 -> httpcore2 -> an HTTP/1.1 connection whose h11 state is at the body's start."""
    import h11

    stream = getattr(getattr(getattr(response.stream, "_stream", None), "_httpcore_stream", None), "_stream", None)
    connection = getattr(stream, "_connection", None)
    state = getattr(connection, "_h11_state", None)
    network = response.extensions.get("network_stream")
    if not isinstance(state, h11.Connection) or network is None or getattr(connection, "_network_stream",
                                                                           None) is not network:
        return None
    if state.their_state is not h11.SEND_BODY or getattr(stream, "_closed", True):
        return None
    held, closed = state.trailing_data
    return (network, held) if not closed else None


async def _payloads(network: Any, held: bytes, timeout: float | None) -> AsyncIterator[bytes]:
    import httpcore2
    import httpx2

    body, data = ChunkedBody(), held
    while True:
        payload = body.feed(data) if data else b""
        if payload:
            yield payload
        if body.problem is not None:
            raise httpx2.RemoteProtocolError(body.problem)
        if body.done:
            return
        try:
            data = await network.read(READ_BYTES, timeout=timeout)
        except httpcore2.TimeoutException as exc:
            raise httpx2.ReadTimeout(str(exc)) from exc
        except httpcore2.NetworkError as exc:
            raise httpx2.ReadError(str(exc)) from exc
        if not data:
            raise httpx2.RemoteProtocolError(_INCOMPLETE)
