"""HTTP answers that are not the stream a provider asked for: the head of a body kept to describe it, error
bodies (`HttpStatusError` text) and the server's `retry-after` wait hint."""

from __future__ import annotations

import re
import time
from typing import Any, AsyncIterator, Callable

_BODY_LIMIT = 16_000  # characters of an error body kept in errorMessage
_BODY_READ = 4 * _BODY_LIMIT  # bytes of an error body read (UTF-8 takes at most 4 bytes a character)
_HEAD_BYTES = 512  # bytes of a body kept to describe an unexpected answer
_SNIFF_BYTES = 7  # enough of a body, after leading whitespace, to tell "retry:" or "data:" from anything else
_SHOWN_CHARS = 200  # characters of that head shown in errorMessage
_SSE_START = re.compile(rb"^\s*(?:data|event|id|retry)?:")
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]+")


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


def describe_answer(response: Any, head: bytes, problem: str) -> str:
    """`"<status> <reason>: the answer <problem> (content-type: ...); body starts: \"...\""`, sanitized."""
    kind = response.headers.get("content-type") or "none"
    reason = f" {response.reason_phrase}" if getattr(response, "reason_phrase", "") else ""
    shown = sanitize_snippet(head.decode("utf-8", errors="replace"), _SHOWN_CHARS)
    body = f'body starts: "{shown}"' if shown else "empty body"
    return f"{response.status_code}{reason}: the answer {problem} (content-type: {sanitize_snippet(kind, 100)}); {body}"


def sanitize_snippet(text: str, limit: int) -> str:
    """`text` on one line for an error message: control, zero-width and bidi characters and whitespace runs
    become one space; cut to `limit` characters with "…"."""
    text = " ".join(_UNPRINTABLE.sub(" ", text).split())
    return text if len(text) <= limit else text[:limit] + "…"


def retry_after_ms(headers: Any) -> int | None:
    """The server's wait hint in milliseconds: `retry-after-ms` (OpenAI, Anthropic), else `retry-after` as
    seconds or an HTTP date (RFC 9110 §10.2.3); None when absent or unreadable."""
    try:
        if headers.get("retry-after-ms"):
            return max(0, int(float(headers["retry-after-ms"])))
        value = headers.get("retry-after")
        if not value:
            return None
        if value.strip().replace(".", "", 1).isdigit():
            return int(float(value) * 1000)
        from email.utils import parsedate_to_datetime

        return max(0, int((parsedate_to_datetime(value).timestamp() - time.time()) * 1000))
    except (TypeError, ValueError, OverflowError):
        return None


async def error_body(response: Any) -> str:
    """An error answer's body for `HttpStatusError`: as sent (APIs' JSON errors carry what overflow and retry
    checks read), except a web page, which is shown like `describe_answer` does: its type and start on one line."""
    text = await _body_text(response)
    kind = response.headers.get("content-type", "").lower()
    if "html" not in kind:
        return text
    return f'(content-type: {sanitize_snippet(kind, 100)}) "{sanitize_snippet(text, _SHOWN_CHARS)}"'


async def _body_text(response: Any) -> str:
    """The start of an error body: at most `_BODY_READ` bytes are read (the rest is never buffered)."""
    data = bytearray()
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) >= _BODY_READ:
            break
    body = data.decode("utf-8", errors="replace")
    return body if len(body) <= _BODY_LIMIT else body[:_BODY_LIMIT] + "…"
