"""Incremental decoder of `text/event-stream` bodies (server-sent events) from a stream of byte chunks.

Follows the WHATWG HTML "event stream interpretation" rules
(https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation), with two limits
the spec leaves open, so a misbehaving server cannot make us buffer without bound: one line may hold at most
`MAX_LINE_CHARS` (16 MiB) and one event's data at most `MAX_EVENT_CHARS` (32 MiB), counted in decoded
characters (never more than the UTF-8 bytes they came from). Going over either raises `StreamLimitError`.

A third limit, `MAX_MESSAGE_CHARS` (8 MiB), is on one streamed assistant message as a whole: its text, thinking
and tool-call arguments together, counted by `providers._common.MessageBuilder` (`check_message_size`).
"""

from __future__ import annotations

import codecs
import re
from typing import AsyncIterable, AsyncIterator, Iterator, NamedTuple

from .errors import StreamLimitError

_LINE_END = re.compile(r"\r\n|\r|\n")
MiB = 1024 * 1024
MAX_LINE_CHARS = 16 * MiB
"""Longest line accepted: far above any real chunk (a whole tool call's arguments travel in one line at most)."""
MAX_EVENT_CHARS = 32 * MiB
"""Most data one event may carry, summed over its `data:` lines."""
MAX_MESSAGE_CHARS = 8 * MiB
"""Most characters one streamed message may hold: text, thinking, tool-call ids, names and argument JSON (as
streamed), and thinking signatures, summed over the whole answer. JSON escaping grows a character to 6 bytes at
most, so the message's session line stays under the 64 MiB a session line may hold (`coding.session.file_lines`);
a real answer is far smaller (128k output tokens are about 0.5 MiB)."""


def check_message_size(chars: int) -> int:
    """`chars`, a streamed message's size so far; raises `StreamLimitError` when it is over `MAX_MESSAGE_CHARS`."""
    if chars > MAX_MESSAGE_CHARS:
        raise StreamLimitError(f"The server sent a message larger than {_size(MAX_MESSAGE_CHARS)} (the limit for "
                               "one answer's text, thinking and tool calls together); the response was abandoned")
    return chars


class SSEEvent(NamedTuple):
    """One dispatched event: `event` defaults to "message"; `data` lines joined with "\\n"; `id` is the last
    event id seen so far in the stream (it persists across events, per the spec), None if none was set. A named
    tuple: immutable, and built at a third of a frozen dataclass's cost (one per event of a stream)."""

    event: str
    data: str
    id: str | None = None


class _LineSplitter:
    """Splits decoded text into lines ending in CRLF, LF or CR, across chunk boundaries."""

    def __init__(self, max_line: int = MAX_LINE_CHARS) -> None:
        self._partial: list[str] = []
        self._partial_len = 0
        self._max_line = max_line
        self._skip_lf = False  # a chunk ended in CR: an LF starting the next chunk ends the same line

    @property
    def clean(self) -> bool:
        """Nothing left open by earlier chunks: the next chunk starts on a line of its own."""
        return not self._partial and not self._skip_lf

    def feed(self, text: str) -> Iterator[str]:
        """Complete lines of `text` (after what earlier calls left open); raises `StreamLimitError` for a
        line over the limit, as soon as its first part over the limit arrives."""
        if not text:
            return
        if self._skip_lf and text[0] == "\n":
            text = text[1:]
        self._skip_lf = text.endswith("\r")
        # Without a CR the regex splits where str.split does, at a fifth of its cost (an event a chunk).
        pieces = _LINE_END.split(text) if "\r" in text else text.split("\n")
        rest = pieces.pop()
        for piece in pieces:
            if self._partial or len(piece) > self._max_line:  # a line begun in an earlier chunk, or too long
                self._keep(piece)
                piece = "".join(self._partial)
                self._partial.clear()
                self._partial_len = 0
            yield piece
        if rest:
            self._keep(rest)

    def _keep(self, piece: str) -> None:
        self._partial_len += len(piece)
        if self._partial_len > self._max_line:
            raise StreamLimitError(f"The server sent an event-stream line longer than {_size(self._max_line)} "
                                   "(the limit for one line); the response was abandoned")
        self._partial.append(piece)


class _EventBuilder:
    """Applies field lines to the pending event; `line()` returns an event when a blank line dispatches one."""

    def __init__(self, max_event: int = MAX_EVENT_CHARS) -> None:
        self._event = ""
        self._data: list[str] = []
        self._data_len = 0
        self._max_event = max_event
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
            self._add_data(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._last_id = value
        return None  # "retry" and unknown fields are ignored

    def _add_data(self, value: str) -> None:
        self._data_len += len(value) + 1
        if self._data_len > self._max_event:
            raise StreamLimitError(f"The server sent an event-stream event larger than {_size(self._max_event)} "
                                   "(the limit for one event); the response was abandoned")
        self._data.append(value)

    @property
    def idle(self) -> bool:
        """No field seen since the last dispatch (what `blocks` needs to bypass `line`)."""
        return not self._data and not self._event

    def blocks(self, text: str, max_line: int, out: list[SSEEvent]) -> str:
        """Append to `out` the events of the leading blocks of `text` that are one `data: ` line, or an
        `event: ` line and a `data: ` line, each (what model servers send), made without going line by line;
        returns the rest of `text` (from the first other block, or the unfinished last one) for `line`. Only
        while `idle` and `text` is clean (no CR, starts on a line), so the events are those `line` would make."""
        blocks = text.split("\n\n")
        last = len(blocks) - 1  # the piece after the last blank line: not a complete block
        max_event, last_id = self._max_event, self._last_id
        for i in range(last):
            block = blocks[i]
            # a line over `max_line` or data over `max_event` (its "\n" counted) goes `line`'s way, to raise
            if block.startswith("data: ") and "\n" not in block:
                if len(block) > max_line or len(block) - 5 > max_event:
                    return "\n\n".join(blocks[i:])
                out.append(SSEEvent("message", block[6:], last_id))
                continue
            name_end = block.find("\n") if block.startswith("event: ") else -1
            if name_end < 0 or not block.startswith("data: ", name_end + 1) or "\n" in block[name_end + 1:]:
                return "\n\n".join(blocks[i:])
            size = len(block) - name_end - 1
            if name_end > max_line or size > max_line or size - 5 > max_event:
                return "\n\n".join(blocks[i:])
            out.append(SSEEvent(block[7:name_end] or "message", block[name_end + 7:], last_id))
        return blocks[last]

    def _dispatch(self) -> SSEEvent | None:
        data, event = self._data, self._event
        self._data, self._event, self._data_len = [], "", 0
        if not data:
            return None
        return SSEEvent(event or "message", "\n".join(data), self._last_id)


def _size(chars: int) -> str:
    return f"{chars // MiB} MiB" if chars >= MiB and chars % MiB == 0 else f"{chars} characters"


class SSEDecoder:
    """The events of an event stream fed as arbitrary byte chunks, synchronously: `feed` appends to a list
    the events one chunk completes, so a caller holding a network read's bytes gets all of its events in one
    call. UTF-8 is decoded incrementally (invalid bytes become U+FFFD); a leading BOM is dropped; an event not
    terminated by a blank line before EOF is never returned, as the spec requires."""

    def __init__(self, *, max_line: int = MAX_LINE_CHARS, max_event: int = MAX_EVENT_CHARS) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._lines, self._builder = _LineSplitter(max_line), _EventBuilder(max_event)
        self._max_line = max_line
        self._at_start = True

    def feed(self, chunk: bytes, out: list[SSEEvent]) -> None:
        """Append the events `chunk` completes to `out`. Raises `StreamLimitError` when a line exceeds
        `max_line` or an event's data `max_event` characters; `out` then holds the events before it."""
        text = self._decoder.decode(chunk)
        if self._at_start and text:
            self._at_start = False
            text = text.removeprefix("\ufeff")
        if "\r" in text:  # CR line ends: line by line (a CRLF may also be split across chunks)
            self._by_line(text, out)
            return
        while text:
            if self._lines.clean and self._builder.idle:
                text = self._builder.blocks(text, self._max_line, out)
            # one block the batch path cannot make (or one begun in an earlier chunk), or the unfinished rest
            end = text.find("\n\n") + 2
            self._by_line(text[:end] if end > 1 else text, out)
            text = text[end:] if end > 1 else ""

    @property
    def pending(self) -> bool:
        """True when the bytes fed so far end inside an event (part of a line, of a UTF-8 character, or fields
        not yet ended by a blank line): at EOF, the connection closed mid-event."""
        return bool(self._decoder.getstate()[0]) or not self._lines.clean or not self._builder.idle

    def _by_line(self, text: str, out: list[SSEEvent]) -> None:
        for line in self._lines.feed(text):
            event = self._builder.line(line)
            if event is not None:
                out.append(event)


async def iter_sse(chunks: AsyncIterable[bytes], *, max_line: int = MAX_LINE_CHARS,
                   max_event: int = MAX_EVENT_CHARS) -> AsyncIterator[SSEEvent]:
    """Yield the events of an event stream given as arbitrary byte chunks (`SSEDecoder`, one event at a time).

    Raises `StreamLimitError` when a line exceeds `max_line` or an event's data `max_event` characters (see
    the module docstring), after the events before it. Example:
    `async for ev in iter_sse(response.aiter_bytes()): print(ev.event, ev.data)`.
    """
    decoder = SSEDecoder(max_line=max_line, max_event=max_event)
    async for chunk in chunks:
        events: list[SSEEvent] = []
        failure = feed_events(decoder, chunk, events)
        for event in events:
            yield event
        if failure is not None:
            raise failure


def feed_events(decoder: SSEDecoder, chunk: bytes, out: list[SSEEvent]) -> StreamLimitError | None:
    """`decoder.feed(chunk, out)`, returning the `StreamLimitError` it raised (None when it did not): the
    caller handles the events before the error first, as one event at a time would have."""
    try:
        decoder.feed(chunk, out)
    except StreamLimitError as exc:
        return exc
    return None
