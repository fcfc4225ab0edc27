"""Reading an HTTP answer for what goes wrong: the head of a body that is not an event stream, an error answer's
body, and the server's `retry-after` hint. Every text shown in an `errorMessage` is put on one line and cut."""

from __future__ import annotations

import math
import re
import time
from typing import TYPE_CHECKING, AsyncIterator, Callable, Mapping

from ..visible_text import escape_invisible
from ._chunked import raw_chunked_body

if TYPE_CHECKING:
    import httpx2

_BODY_LIMIT = 500  # characters of an error body (or of the API's message in it) quoted in errorMessage
_BODY_READ = 64_000  # bytes of an error body read: enough for the API's error JSON around a long message
_HEAD_BYTES = 512  # bytes of a body kept to describe an unexpected answer
_SNIFF_BYTES = 7  # enough of a body, after leading whitespace, to tell "retry:" or "data:" from anything else
_SHOWN_CHARS = 200  # characters of that head shown in errorMessage
_SSE_START = re.compile(rb"^\s*(?:data|event|id|retry)?:")


def body_bytes(response: httpx2.Response) -> AsyncIterator[bytes]:
    """The bytes of a streamed `response`'s body as they arrive: a network read's chunks at once in the plain
    chunked case (`_chunked.raw_chunked_body`). Otherwise, without a content coding they come straight
    from the response's stream: `aiter_bytes` adds two generator layers and two chunkers per HTTP chunk (~1 us
    of the ~23 us httpx2 spends on one, under load), and a model server sends every event in a chunk of its
    own. Transport errors are mapped to `httpx2` ones in that stream too."""
    raw = raw_chunked_body(response)
    if raw is not None:
        return raw
    if response.headers.get("content-encoding", "identity").strip().lower() != "identity":
        return response.aiter_bytes()  # gzip and the others need the decoder
    return response.stream.__aiter__()  # type: ignore[union-attr]


class BodyHead:
    """A response body read once, keeping its first `_HEAD_BYTES` to describe it in errors."""

    def __init__(self, chunks: AsyncIterator[bytes]):
        self._source = chunks
        self._buffered: list[bytes] = []
        self.head = b""

    async def looks_like_sse(self) -> bool:
        """True when the body starts like an event stream; reads ahead only until that can be told (a field
        name's worth of bytes), so a slow but mislabelled stream is not held back."""
        await self._read_ahead(lambda: len(self.head.lstrip()) >= _SNIFF_BYTES)
        return bool(_SSE_START.match(self.head.removeprefix(b"\xef\xbb\xbf")))

    async def fill_head(self) -> bytes:
        """Read ahead until `head` holds `_HEAD_BYTES` (or the body ended); returns it."""
        await self._read_ahead(lambda: False)
        return self.head

    async def _read_ahead(self, enough: Callable[[], bool]) -> None:
        while not enough() and len(self.head) < _HEAD_BYTES:
            chunk = await anext(self._source, None)
            if chunk is None:
                return
            self._note(chunk)
            self._buffered.append(chunk)

    async def chunks(self) -> AsyncIterator[bytes]:
        for chunk in self._buffered:
            yield chunk
        self._buffered.clear()
        async for chunk in self._source:
            self._note(chunk)
            yield chunk

    def _note(self, chunk: bytes) -> None:
        if len(self.head) < _HEAD_BYTES:
            self.head += chunk[: _HEAD_BYTES - len(self.head)]


def describe_answer(response: httpx2.Response, head: bytes, problem: str) -> str:
    """`"<status> <reason>: the answer <problem> (content-type: ...); body starts: \"...\""`, sanitized."""
    kind = response.headers.get("content-type") or "none"
    reason = f" {response.reason_phrase}" if getattr(response, "reason_phrase", "") else ""
    shown = sanitize_snippet(head.decode("utf-8", errors="replace"), _SHOWN_CHARS)
    body = f'body starts: "{shown}"' if shown else "empty body"
    return f"{response.status_code}{reason}: the answer {problem} (content-type: {sanitize_snippet(kind, 100)}); {body}"


def sanitize_snippet(text: str, limit: int) -> str:
    """`text` on one line for an error message: whitespace runs (line breaks included) become one space; other
    control, zero-width and bidi characters are shown as escapes (`\\x1b`, `\\u202e`, `ai/visible_text.py`, as the
    terminal output shows them); cut to `limit` characters with "…"."""
    text = escape_invisible(" ".join(text.split()))
    return text if len(text) <= limit else text[:limit] + "…"


MAX_RETRY_AFTER_MS = 86_400_000
"""The longest wait hint kept (a day): a larger `retry-after` is read as this, so `retryAfterMs` stays a sane
number (JSON clients lose precision past 2^53) and a far-future date cannot overflow a timer."""


def retry_after_ms(headers: Mapping[str, str]) -> int | None:
    """The server's wait hint in milliseconds, 0 to `MAX_RETRY_AFTER_MS`: `retry-after-ms` (OpenAI, Anthropic),
    else `retry-after` as seconds or an HTTP date (RFC 9110 §10.2.3); None when absent or unreadable."""
    try:
        wait = _hinted_ms(headers)
    except (TypeError, ValueError, OverflowError):
        return None
    if wait is None or math.isnan(wait):
        return None
    return int(min(max(0.0, wait), MAX_RETRY_AFTER_MS))  # clamped as a float: 400 digits read as inf


def _hinted_ms(headers: Mapping[str, str]) -> float | None:
    if headers.get("retry-after-ms"):
        return float(headers["retry-after-ms"])
    value = headers.get("retry-after")
    if not value:
        return None
    if value.strip().replace(".", "", 1).isdigit():
        return float(value) * 1000
    from email.utils import parsedate_to_datetime

    return (parsedate_to_datetime(value).timestamp() - time.time()) * 1000


async def error_body(response: httpx2.Response, url: str) -> str:
    """An error answer's body for `HttpStatusError`: the API's own error message when the body is its
    documented error JSON (`provider_error`), else as sent, except a web page, which is shown like
    `describe_answer` does: its type and start on one line.
    A redirect (3xx) says where to (`url`: the request's, to resolve a relative `Location`; redirects are not
    followed: a key must not travel to another host); a status outside 100-599 says it is none; a body that
    breaks off is replaced by why (the status alone then decides about retrying)."""
    status = response.status_code
    prefix = "" if 100 <= status <= 599 else "(not a valid HTTP status) "
    if 300 <= status < 400:
        return prefix + _redirect_text(response, url)
    try:
        text = await _body_text(response)
    except Exception as exc:  # noqa: BLE001 - the status is the answer; its body is a detail
        return f"{prefix}(the body could not be read: {type(exc).__name__}: {sanitize_snippet(str(exc), 200)})"
    kind = response.headers.get("content-type", "").lower()
    if "html" not in kind:
        return prefix + (provider_error(text) or sanitize_snippet(text, _BODY_LIMIT))
    return f'{prefix}(content-type: {sanitize_snippet(kind, 100)}) "{sanitize_snippet(text, _SHOWN_CHARS)}"'


def stream_error_text(value: object) -> str:
    """The `ApiStreamError` text of an error object sent inside a stream (Anthropic's `error` event, an OpenAI
    chunk's `error`, a Responses `error` event or failed response's `error`, a Gemini chunk's `error`): the
    `provider_error` form `<message> (<type>, <code>)` when it carries a message, as an HTTP error body's is,
    else its JSON (escaped and cut the same way)."""
    from .. import json_wire

    shaped = value if isinstance(value, dict) and isinstance(value.get("error"), dict) else {"error": value}
    return provider_error(json_wire.dumps(shaped)) or sanitize_snippet(json_wire.dumps(value), _BODY_LIMIT)


def provider_error(text: str) -> str | None:
    """`<message> (<type>, <code>)` from the documented error JSON of the four wire APIs, escaped and cut like
    any error text; None when `text` is something else (its raw start is shown then). The shapes:
    Anthropic `{"type": "error", "error": {"type": "overloaded_error", "message": ...}}`, OpenAI chat and
    responses `{"error": {"message": ..., "type": ..., "code": "context_length_exceeded"}}`, Gemini
    `{"error": {"code": 400, "message": ..., "status": "INVALID_ARGUMENT"}}` (as a one-item list from its
    streaming endpoint). Only text tags are kept (Gemini's numeric `code` repeats the status); they are what
    the overflow and retry checks read besides the message."""
    import json

    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    error = value.get("error") if isinstance(value, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("message"), str) or not error["message"].strip():
        return None
    message: str = error["message"]
    tags: list[str] = []
    for key in ("type", "code", "status"):
        tag = error.get(key)
        if isinstance(tag, str) and tag.strip() and tag not in tags and tag != "error":  # Responses' event type
            tags.append(tag)
    shown = sanitize_snippet(message, _BODY_LIMIT)
    return shown + (f" ({sanitize_snippet(', '.join(tags), 200)})" if tags else "")


def _redirect_text(response: httpx2.Response, url: str) -> str:
    from urllib.parse import urljoin

    from ..transport_errors import shown_url

    location = response.headers.get("location")
    if not location:
        return "redirect without a Location header (redirects are not followed)"
    target = shown_url(urljoin(url, sanitize_snippet(location, 500)))
    same = " (the same address: a redirect loop)" if target == shown_url(url) else ""
    return (f"redirect to {target}{same}: redirects are not followed (the request carries the key); set the "
            "provider's baseUrl to the address that answers")


async def _body_text(response: httpx2.Response) -> str:
    """The start of an error body: at most `_BODY_READ` bytes are read (the rest is never buffered); what is
    shown of it is cut later (`_BODY_LIMIT`)."""
    data = bytearray()
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) >= _BODY_READ:
            break
    return data[:_BODY_READ].decode("utf-8", errors="replace")
