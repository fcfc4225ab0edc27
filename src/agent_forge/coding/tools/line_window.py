"""Locate a range of lines in a file by streaming it, so huge files are read with bounded memory."""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO

CHUNK_BYTES = 1 << 20


@dataclass(frozen=True)
class LineSpan:
    """Byte offsets of lines `first`..`last` (1-based, inclusive) and the file's line count.

    `start` is where line `first` begins (None when the file has fewer lines); `end` is just past line
    `last`'s newline, or the end of the file. Lines follow `truncate.count_lines`: a final fragment without a
    newline is a line.
    """

    start: int | None
    end: int
    total_lines: int


def locate_lines(f: BinaryIO, first: int, last: int | None) -> LineSpan:
    """Scan `f` (positioned at its start) once; `last=None` means to the end of the file."""
    start = 0 if first == 1 else None
    end = None
    newlines = position = 0
    tail = b""
    while chunk := f.read(CHUNK_BYTES):
        count = chunk.count(b"\n")
        if start is None and newlines + count >= first - 1:
            start = position + _nth_newline(chunk, first - 1 - newlines) + 1
        if end is None and last is not None and newlines + count >= last:
            end = position + _nth_newline(chunk, last - newlines) + 1
        newlines, position, tail = newlines + count, position + len(chunk), chunk[-1:]
    total = newlines + (1 if tail not in (b"", b"\n") else 0)
    if first > max(total, 1):  # line 1 of an empty file is its (empty) start; any other missing line is None
        start = None
    return LineSpan(start=start, end=position if end is None else end, total_lines=total)


def _nth_newline(chunk: bytes, n: int) -> int:
    """Index of the `n`-th (1-based) newline in `chunk`; the caller knows there are at least `n`."""
    index = -1
    for _ in range(n):
        index = chunk.find(b"\n", index + 1)
    return index
