"""Cutting long tool output to the shared limits (2000 lines or 50 KB), keeping either the head or the tail.

A *line* is text up to and including a `\\n`; a final fragment without `\\n` also counts as a line, so
`"a\\nb\\n"` and `"a\\nb"` both have 2 lines and `""` has 0. Byte counts are UTF-8 bytes of the text (lone
surrogates count as 3 bytes, as `surrogatepass` encodes them). Results never split a character.
"""

from __future__ import annotations

import codecs
from typing import Literal, TypedDict

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 50 * 1024


class TruncationResult(TypedDict):
    """Outcome of `truncate_head`/`truncate_tail`; also sent to clients as `details.truncation`.

    `content` is the kept text (a prefix for head, a suffix for tail). `outputLines` counts a cut line as one.
    `firstLineExceedsLimit` (head): the first line alone is over `maxBytes`, so `content` is only its start.
    `lastLinePartial` (tail): the last line alone is over `maxBytes`, so `content` is only its end.
    """

    content: str
    truncated: bool
    truncatedBy: Literal["lines", "bytes"] | None
    totalLines: int
    totalBytes: int
    outputLines: int
    outputBytes: int
    firstLineExceedsLimit: bool
    lastLinePartial: bool
    maxLines: int
    maxBytes: int


def utf8_len(text: str) -> int:
    """Number of UTF-8 bytes of `text`."""
    return len(text.encode("utf-8", "surrogatepass"))


def count_lines(text: str) -> int:
    """Lines in `text` by this module's definition."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def format_size(num_bytes: int) -> str:
    """Human-readable size with binary units: `512B`, `50KB`, `1.5MB`."""
    if num_bytes < 1024:
        return f"{num_bytes}B"
    for unit in ("KB", "MB", "GB"):
        num_bytes /= 1024
        if num_bytes < 1024 or unit == "GB":
            return f"{num_bytes:.1f}".removesuffix(".0") + unit
    raise AssertionError("unreachable")


def append_notice(content: str, notice: str) -> str:
    """`content`, a blank line, then `notice` (just `notice` when `content` is empty)."""
    if not content:
        return notice
    return content + ("\n" if content.endswith("\n") else "\n\n") + notice


def truncate_head(
    text: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep the first whole lines of `text` that fit both limits.

    Only when the first line alone is over `max_bytes` is a line cut: its first `max_bytes` bytes are kept and
    `firstLineExceedsLimit` is set.
    """
    total_bytes = utf8_len(text)
    total_lines = count_lines(text)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return _untouched(text, total_lines, total_bytes, max_lines, max_bytes)
    end, kept, kept_bytes, by = _head_extent(text, max_lines, max_bytes)
    if kept == 0 and by == "bytes":
        newline = text.find("\n")
        first_line = text if newline < 0 else text[:newline]
        content = utf8_prefix(first_line, max_bytes)
        return _result(content, by, total_lines, total_bytes, max_lines, max_bytes, first_cut=content != first_line)
    return _result(text[:end], by, total_lines, total_bytes, max_lines, max_bytes, lines=kept, size=kept_bytes)


def truncate_tail(
    text: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep the last whole lines of `text` that fit both limits.

    Only when the last line alone is over `max_bytes` is a line cut: its last `max_bytes` bytes are kept and
    `lastLinePartial` is set.
    """
    total_bytes = utf8_len(text)
    total_lines = count_lines(text)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return _untouched(text, total_lines, total_bytes, max_lines, max_bytes)
    start, kept, kept_bytes, by = _tail_extent(text, max_lines, max_bytes)
    if kept == 0 and by == "bytes":
        last_start = text.rfind("\n", 0, len(text) - 1) + 1
        content = utf8_suffix(text[last_start:], max_bytes)
        return _result(content, by, total_lines, total_bytes, max_lines, max_bytes, last_cut=True)
    return _result(text[start:], by, total_lines, total_bytes, max_lines, max_bytes, lines=kept, size=kept_bytes)


def utf8_prefix(text: str, max_bytes: int) -> str:
    """The longest prefix of `text` that is at most `max_bytes` UTF-8 bytes."""
    decoder = codecs.getincrementaldecoder("utf-8")("surrogatepass")
    return decoder.decode(text.encode("utf-8", "surrogatepass")[:max_bytes], final=False)


def utf8_suffix(text: str, max_bytes: int) -> str:
    """The longest suffix of `text` that is at most `max_bytes` UTF-8 bytes."""
    data = text.encode("utf-8", "surrogatepass")[-max_bytes:] if max_bytes > 0 else b""
    start = 0
    while start < len(data) and data[start] & 0xC0 == 0x80:  # skip continuation bytes of a cut character
        start += 1
    return data[start:].decode("utf-8", "surrogatepass")


def _head_extent(text: str, max_lines: int, max_bytes: int) -> tuple[int, int, int, Literal["lines", "bytes"]]:
    """(end index, lines kept, bytes kept, limit hit) scanning whole lines from the start."""
    end = kept = kept_bytes = 0
    while kept < max_lines and end < len(text):
        newline = text.find("\n", end)
        line_end = len(text) if newline < 0 else newline + 1
        size = utf8_len(text[end:line_end])
        if kept_bytes + size > max_bytes:
            return end, kept, kept_bytes, "bytes"
        end, kept, kept_bytes = line_end, kept + 1, kept_bytes + size
    return end, kept, kept_bytes, "lines"


def _tail_extent(text: str, max_lines: int, max_bytes: int) -> tuple[int, int, int, Literal["lines", "bytes"]]:
    """(start index, lines kept, bytes kept, limit hit) scanning whole lines from the end."""
    start, kept, kept_bytes = len(text), 0, 0
    while kept < max_lines and start > 0:
        line_start = text.rfind("\n", 0, start - 1) + 1  # start - 1 skips this line's own newline
        size = utf8_len(text[line_start:start])
        if kept_bytes + size > max_bytes:
            return start, kept, kept_bytes, "bytes"
        start, kept, kept_bytes = line_start, kept + 1, kept_bytes + size
    return start, kept, kept_bytes, "lines"


def _untouched(text: str, lines: int, size: int, max_lines: int, max_bytes: int) -> TruncationResult:
    return TruncationResult(
        content=text, truncated=False, truncatedBy=None, totalLines=lines, totalBytes=size, outputLines=lines,
        outputBytes=size, firstLineExceedsLimit=False, lastLinePartial=False, maxLines=max_lines,
        maxBytes=max_bytes,
    )


def _result(
    content: str, by: Literal["lines", "bytes"], total_lines: int, total_bytes: int, max_lines: int,
    max_bytes: int, *, lines: int = 1, size: int | None = None, first_cut: bool = False, last_cut: bool = False,
) -> TruncationResult:
    return TruncationResult(
        content=content, truncated=True, truncatedBy=by, totalLines=total_lines, totalBytes=total_bytes,
        outputLines=lines, outputBytes=utf8_len(content) if size is None else size,
        firstLineExceedsLimit=first_cut, lastLinePartial=last_cut, maxLines=max_lines, maxBytes=max_bytes,
    )
