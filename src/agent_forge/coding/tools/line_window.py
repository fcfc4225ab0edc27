"""Locate a range of lines in a file by streaming it, so huge files are read with bounded memory and time."""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO

CHUNK_BYTES = 1 << 20

COUNT_LIMIT_BYTES = 50 * 1024 * 1024
"""Past the lines a reader needs, lines are counted only up to this byte offset: counting all of a
multi-gigabyte file, or of one that keeps growing, would make a small read take seconds or never end."""


@dataclass(frozen=True)
class LineSpan:
    """Byte offsets of lines `first`..`last` (1-based, inclusive) and the file's line count.

    `start` is where line `first` begins (None when the file has fewer lines); `end` is just past line
    `last`'s newline, or the end of the file. Lines follow `truncate.count_lines`: a final fragment without a
    newline is a line. `scanned` is how many bytes were read.

    `complete` is False when the scan stopped early (see `locate_lines`): then `total_lines` counts only the
    lines in the scanned bytes, `end` is the scan position if line `last` lies beyond it, and more lines
    follow the needed ones.
    """

    start: int | None
    end: int
    total_lines: int
    scanned: int
    complete: bool = True


def locate_lines(f: BinaryIO, first: int, last: int | None, *, enough: int | None = None,
                 count_limit: int = COUNT_LIMIT_BYTES) -> LineSpan:
    """Scan `f` (positioned at its start) once; `last=None` means to the end of the file.

    `enough` (default `last`; at least `first`) is the last line the caller will actually use. Once it is
    located, bytes follow it, and the scan has passed byte `count_limit`, the scan stops at the end of the
    next full chunk instead of counting the rest of the file (`complete=False`); a short read means the end
    is near, so it goes on.
    """
    enough = last if enough is None else enough
    ends: dict[int, int | None] = {n: None for n in (first - 1, last, enough) if n}  # byte after line n's "\n"
    newlines = position = 0
    tail = b""
    while chunk := f.read(CHUNK_BYTES):
        count = chunk.count(b"\n")
        for n, found in ends.items():
            if found is None and newlines + count >= n:
                ends[n] = position + _nth_newline(chunk, n - newlines) + 1
        newlines, position, tail = newlines + count, position + len(chunk), chunk[-1:]
        stop = ends.get(enough)
        if stop is not None and stop < position and position >= count_limit and len(chunk) == CHUNK_BYTES:
            start = 0 if first == 1 else ends[first - 1]
            end = ends.get(last) or position
            return LineSpan(start, end, newlines + (tail != b"\n"), position, complete=False)
    total = newlines + (1 if tail not in (b"", b"\n") else 0)
    start = 0 if first == 1 else ends[first - 1]
    if first > max(total, 1):  # line 1 of an empty file is its (empty) start; any other missing line is None
        start = None
    end = ends.get(last) if last else None
    return LineSpan(start, position if end is None else end, total, position)


def _nth_newline(chunk: bytes, n: int) -> int:
    """Index of the `n`-th (1-based) newline in `chunk`; the caller knows there are at least `n`."""
    index = -1
    for _ in range(n):
        index = chunk.find(b"\n", index + 1)
    return index
