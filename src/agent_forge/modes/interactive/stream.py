"""The live view of a streaming message: a bounded tail of its text, so the cost of one delta and of one redraw
does not grow with the message's length (the whole message is printed, as Markdown, when it ends)."""

from __future__ import annotations

from collections import deque

from prompt_toolkit.utils import get_cwidth

from .graphemes import drawn
from .render import clean

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class StreamTail:
    """The last `max_lines` logical lines of a growing text. `feed` costs O(len(delta)) plus at most
    `max_chars` for the open line, whose older part is dropped (a 2,000-delta answer on one line stays cheap)."""

    def __init__(self, max_lines: int = 60, max_chars: int = 20000):
        self._lines: deque[str] = deque(maxlen=max_lines)
        self._open = ""
        self._max_chars = max_chars
        self.chars = 0  # characters fed so far (for "N chars" hints)
        self._size = (0, 0)  # the (width, height) `_wrapped` holds rows for
        self._wrapped: dict[str, list[str]] = {}  # complete lines' rows at `_size`: they never change

    def feed(self, delta: str) -> None:
        """Append cleaned `delta` (escape sequences and controls removed per piece)."""
        text = clean(delta)
        self.chars += len(text)
        *complete, self._open = (self._open + text).split("\n")
        self._lines.extend(complete)
        if len(self._open) > self._max_chars:
            self._open = self._open[-self._max_chars:]

    def empty(self) -> bool:
        return not self._lines and not self._open

    def blank(self) -> bool:
        """Whether the text so far shows nothing (empty, or only whitespace: `rows` is then empty)."""
        return not self._open.strip() and not any(line.strip() for line in self._lines)

    def rows(self, width: int, height: int) -> list[str]:
        """The last `height` screen rows of the text wrapped at `width` columns (wide characters count 2),
        without blank rows before or after it: a paragraph break that is still streaming shows no gap under
        the text (the printed message has none there either; a row shown, then gone, is a blank row left)."""
        rows: list[str] = []
        lines = [*self._lines, self._open]
        while lines and not lines[-1].strip():
            lines.pop()
        complete = len(self._lines)
        for at in range(len(lines) - 1, -1, -1):
            line = lines[at]
            rows[:0] = self._complete_rows(line, width, height) if at < complete else wrap(line, width, height)
            if len(rows) >= height:
                return rows[-height:]
        while rows and not rows[0].strip():
            rows.pop(0)
        return rows

    def _complete_rows(self, line: str, width: int, height: int) -> list[str]:
        """`wrap(line, width, height)` for a complete line, wrapped once per size: each redraw while a message
        streams wraps only its open line (measuring a row is most of a redraw's cost in non-ASCII text)."""
        if self._size != (width, height) or len(self._wrapped) > 2 * (self._lines.maxlen or 0):
            self._size, self._wrapped = (width, height), {}  # (lines gone from the tail are forgotten too)
        rows = self._wrapped.get(line)
        if rows is None:
            rows = self._wrapped[line] = wrap(line, width, height)
        return rows


def wrap(line: str, width: int, keep: int) -> list[str]:
    """`line` cut into rows of at most `width` columns, at the last space of a row when it has one (words are
    not broken at the edge; a space at the edge is dropped), else at the edge; only the last `keep` rows are
    built."""
    width = max(width, 1)
    line = line[-width * keep:] if len(line) > width * keep else line  # a cell is at least one character
    line = drawn(line)  # as prompt_toolkit draws it: a cluster's code points take the columns they count
    if line.isascii():  # cleaned text: one cell per character, so plain string searches do (the common case)
        return _wrap_ascii(line, width)[-keep:]
    return _wrap_cells(line, width)[-keep:]


def _wrap_cells(line: str, width: int) -> list[str]:
    """`wrap` for any line, measuring each character's cells."""
    rows: list[str] = []
    row: list[str] = []
    used, space = 0, -1  # `space`: index in `row` of its last space
    for char in line:
        size = get_cwidth(char)
        if used + size > width:
            if char == " ":
                rows.append("".join(row))
                row, used, space = [], 0, -1
                continue
            carry = row[space + 1:] if space > 0 else []
            rows.append("".join(row[:len(row) - len(carry)]))
            row, used, space = carry, sum(get_cwidth(c) for c in carry), -1
        if char == " ":
            space = len(row)
        row.append(char)
        used += size
    rows.append("".join(row))
    return rows


def _wrap_ascii(line: str, width: int) -> list[str]:
    """`wrap` for a line whose every character takes one cell (same rows, found with `str.rfind`)."""
    rows = []
    while len(line) > width:
        space = line.rfind(" ", 0, width + 1)
        if space == width:  # the space at the edge is dropped
            rows.append(line[:width])
        elif space > 0:
            rows.append(line[:space + 1])
        else:
            rows.append(line[:width])
            space = width - 1
        line = line[space + 1:]
    rows.append(line)
    return rows


def spinner_frame(seconds: float) -> str:
    """The spinner character for `seconds` of elapsed time (10 frames a second)."""
    return SPINNER[int(seconds * 10) % len(SPINNER)]
