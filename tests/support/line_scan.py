"""Line lengths and picked lines of files of 64 MiB lines (session files, event streams of a few hundred MB),
read through `mmap` and `find`: iterating a file object line by line copied each huge line through growing
buffers (~0.3 s of CPU per test, issue 11)."""

from __future__ import annotations

import mmap
from collections.abc import Callable, Iterator
from pathlib import Path

HEAD = 300
"""Bytes at the start of a line that `scan`'s `pick` sees: enough for an event's `type` and a message's `role`."""


def _spans(data: mmap.mmap | bytes) -> Iterator[tuple[int, int]]:
    """(start, end) of every line of `data`, the LF left out; a last line without LF counts too."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        yield start, end
        start = end + 1


def scan(path: str | Path, pick: Callable[[bytes], bool] = lambda head: False) -> tuple[int, list[bytes]]:
    """(bytes in the longest line of `path`, LF not counted; the lines whose first `HEAD` bytes `pick` accepts,
    without their LF). An empty file is (0, [])."""
    with open(path, "rb") as handle:
        if not handle.seek(0, 2):
            return 0, []
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            longest, picked = 0, []
            for start, end in _spans(data):
                longest = max(longest, end - start)
                if pick(data[start:min(end, start + HEAD)]):
                    picked.append(data[start:end])
            return longest, picked


def longest_line(path: str | Path) -> int:
    """Bytes in the longest line of `path` (LF not counted)."""
    return scan(path)[0]
