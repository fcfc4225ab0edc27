"""Finding an edit's `oldText` in a file: exactly, else ignoring trailing whitespace, else typography too.

Models often drop the trailing spaces of a line or type straight quotes and hyphens for the file's curly quotes,
dashes and non-breaking spaces. When `oldText` does not occur exactly, two tolerant levels are tried in turn;
the first level that finds anything decides (so an exact match always wins, and a tolerant twin of an exact
match is never counted as a second occurrence):

1. `whitespace`: trailing whitespace ignored at the end of every line of the file and of `oldText`.
2. `typography`: as 1, and `_TYPOGRAPHY` characters (curly quotes, dashes, non-breaking and other typographic
   spaces) read as their ASCII forms, in the file and in `oldText` alike.

A tolerant match is mapped back to a span of the original text, so a replacement changes only the matched
lines and every other character stays as it was. The last line of `oldText` is special: whitespace-only, it is
the indentation of the line that follows and is kept as typed; with trailing whitespace after some text, it
must match up to a line end, and the span then runs to the end of that line in the file.
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass
from typing import Iterator

EXACT, WHITESPACE, TYPOGRAPHY = "exact", "whitespace", "typography"

_TYPOGRAPHY = str.maketrans({
    **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),  # ‘ ’ ‚ ‛
    **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),  # “ ” „ ‟
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),  # hyphens, en/em dashes, minus sign
    **dict.fromkeys("\u00a0\u2007\u202f\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2008\u2009\u200a\u3000", " "),
})
"""One character to one character, so positions in the folded text map back line by line."""


KEPT_SPANS = 10
"""How many spans `Matches` keeps (enough to name candidates); `count` counts them all."""


@dataclass(frozen=True)
class Matches:
    """Where `oldText` occurs at the strictest `level` that found it (`EXACT` with `count` 0: nowhere).
    `spans` are the first `KEPT_SPANS` `(start, end)` indices into the searched text, in order; `count` is the
    number of occurrences, overlapping ones included."""

    level: str
    spans: list[tuple[int, int]]
    count: int


def find_matches(text: str, needle: str) -> Matches:
    """Every occurrence of `needle` in `text` at the strictest level with any (see the module docstring)."""
    found = _kept(_find_all(text, needle), EXACT)
    if found.count or not needle.strip():  # whitespace alone is matched exactly or not at all
        return found
    for level, table in ((WHITESPACE, None), (TYPOGRAPHY, _TYPOGRAPHY)):
        found = _kept(_Folded(text, table).find(needle), level)
        if found.count:
            return found
    return Matches(EXACT, [], 0)


def line_numbers(text: str, spans: list[tuple[int, int]]) -> list[int]:
    """1-based line numbers of the span starts."""
    return [text.count("\n", 0, start) + 1 for start, _ in spans]


def _kept(spans: Iterator[tuple[int, int]], level: str) -> Matches:
    kept = list(itertools.islice(spans, KEPT_SPANS))
    return Matches(level, kept, len(kept) + sum(1 for _ in spans))


class _Folded:
    """`text` with each line's trailing whitespace removed (and `table` applied), and the way back."""

    def __init__(self, text: str, table: dict[int, str] | None):
        self.table = table
        self.starts: list[int] = []  # folded start of each line
        self.original_starts: list[int] = []
        self.original_ends: list[int] = []  # where each line's "\n" (or the text) ends in the original
        parts, folded, original = [], 0, 0
        for line in text.split("\n"):
            kept = self._fold(line.rstrip())
            self.starts.append(folded)
            self.original_starts.append(original)
            self.original_ends.append(original + len(line))
            parts.append(kept)
            folded += len(kept) + 1
            original += len(line) + 1
        self.text = "\n".join(parts)

    def find(self, needle: str) -> Iterator[tuple[int, int]]:
        """Spans, in the original text, of the folded `needle`'s occurrences."""
        folded, to_line_end = self._fold_needle(needle)
        for start in _starts(self.text, folded):
            end = start + len(folded)
            if not to_line_end:
                yield self._start(start), self._to_original(end)
            elif end == len(self.text) or self.text[end] == "\n":
                yield self._start(start), self.original_ends[self._line(end)]

    def _fold(self, text: str) -> str:
        return text.translate(self.table) if self.table else text

    def _fold_needle(self, needle: str) -> tuple[str, bool]:
        *lines, last = needle.split("\n")
        tail = last.rstrip()
        to_line_end = bool(tail) and tail != last
        return self._fold("\n".join([*(line.rstrip() for line in lines), tail or last])), to_line_end

    def _line(self, index: int) -> int:
        return bisect.bisect_right(self.starts, index) - 1

    def _start(self, index: int) -> int:
        """A match starting at a line break starts at the original break, after the line's trailing spaces."""
        if index < len(self.text) and self.text[index] == "\n":
            return self.original_ends[self._line(index)]
        return self._to_original(index)

    def _to_original(self, index: int) -> int:
        line = self._line(index)
        return self.original_starts[line] + index - self.starts[line]


def _find_all(text: str, needle: str) -> Iterator[tuple[int, int]]:
    return ((start, start + len(needle)) for start in _starts(text, needle))


def _starts(text: str, needle: str) -> Iterator[int]:
    """Start indices of `needle` in `text`, overlapping occurrences included."""
    index = text.find(needle)
    while index >= 0:
        yield index
        index = text.find(needle, index + 1)
