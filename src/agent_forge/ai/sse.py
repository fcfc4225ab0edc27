"""Incremental decoder of `text/event-stream` bodies (server-sent events) from a stream of byte chunks.

Follows the WHATWG HTML "event stream interpretation" rules
(https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import AsyncIterable, AsyncIterator, Iterator

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event: `event` defaults to "message"; `data` lines joined with "\\n"; `id` is the last
    event id seen so far in the stream (it persists across events, per the spec), None if none was set."""

    event: str
    data: str
    id: str | None = None


class _LineSplitter:
    """Splits decoded text into lines ending in CRLF, LF or CR, across chunk boundaries."""

    def __init__(self) -> None:
        self._partial: list[str] = []
        self._skip_lf = False  # a chunk ended in CR: an LF starting the next chunk ends the same line

    def feed(self, text: str) -> Iterator[str]:
        if not text:
            return
        if self._skip_lf and text[0] == "\n":
            text = text[1:]
        self._skip_lf = text.endswith("\r")
        pieces = _LINE_END.split(text)
        for piece in pieces[:-1]:
            self._partial.append(piece)
            yield "".join(self._partial)
            self._partial.clear()
        if pieces[-1]:
            self._partial.append(pieces[-1])


class _EventBuilder:
    """Applies field lines to the pending event; `line()` returns an event when a blank line dispatches one."""

    def __init__(self) -> None:
        self._event = ""
        self._data: list[str] = []
        self._last_id: str | None = None

    def line(self, line: str) -> SSEEvent | None:
        if not line:
            return self._dispatch()
        if line[0] == ":":
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._last_id = value
        return None  # "retry" and unknown fields are ignored

    def _dispatch(self) -> SSEEvent | None:
        data, event = self._data, self._event
        self._data, self._event = [], ""
        if not data:
            return None
        return SSEEvent(event or "message", "\n".join(data), self._last_id)


async def iter_sse(chunks: AsyncIterable[bytes]) -> AsyncIterator[SSEEvent]:
    """Yield the events of an event stream given as arbitrary byte chunks.

    UTF-8 is decoded incrementally (invalid bytes become U+FFFD); a leading BOM is dropped; an event not
    terminated by a blank line before EOF is discarded, as the spec requires.
    Example: `async for ev in iter_sse(response.aiter_bytes()): print(ev.event, ev.data)`.
    """
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    lines, builder = _LineSplitter(), _EventBuilder()
    at_start = True
    async for chunk in chunks:
        text = decoder.decode(chunk)
        if at_start and text:
            at_start = False
            text = text.removeprefix("\ufeff")
        for line in lines.feed(text):
            event = builder.line(line)
            if event is not None:
                yield event
