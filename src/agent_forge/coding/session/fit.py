"""Every session line stays readable: an entry whose JSON line would be longer than `MAX_LINE_BYTES` (a line the
reader skips as damage, which would cut the parent chain of every later entry) is shrunk before it is written.

One rule for every entry type (`SessionStore._append` and `_seed` call `fit_line`), the biggest parts first, each
cut just enough:
- an image block (`{"type": "image", "data": ...}`) becomes a text block saying what was left out;
- a string keeps its start and gets a note of how many characters were left out;
- when small parts make up the size, the longest list keeps its first items and a note (a text block when its
  items are blocks, else a string).
Parts under `_SMALLEST` bytes (ids, names, types, numbers) are never cut. An entry that still does not fit (a dict
of millions of keys) is refused with `OversizedEntry` before anything changes, as a value JSON cannot hold is.
"""

from __future__ import annotations

import sys
from typing import Any

from ...ai import json_wire
from . import file_lines
from .reading import UnencodableEntry, encode_line

_SMALLEST = 1024
"""Bytes of JSON below which a string, image or list is never cut."""


class OversizedEntry(UnencodableEntry):
    """An entry whose line stays over `MAX_LINE_BYTES` even when shrunk; raised before anything is changed."""


def fit_line(entry: dict[str, Any]) -> tuple[bytes, str | None]:
    """`entry`'s session line (`encode_line`, LF included) and None when the line without its LF is at most
    `MAX_LINE_BYTES`; otherwise the line of a shrunk copy (`entry` itself is not changed) and what was left out
    (`1 image and 70,000,000 characters`). Raises `UnencodableEntry` (`OversizedEntry` when shrinking fails)."""
    line = encode_line(entry)
    limit = file_lines.MAX_LINE_BYTES
    if len(line) - 1 <= limit:
        return line, None
    copy, left_out = _shrunk(line, _why(), len(line) - 1)  # a private copy to cut, equal to what the file would
    # have held; parsed with its LF (JSON whitespace) rather than a copy of the line without it
    line = encode_line(copy)
    if len(line) - 1 > limit:
        raise OversizedEntry(f"the entry is {len(line) - 1:,} bytes of JSON even with its large parts cut; a "
                             f"session entry holds at most {file_lines.line_limit()}")
    return line, left_out


def fit_event(event: dict[str, Any]) -> dict[str, Any]:
    """`event` itself when its compact JSON is at most `MAX_LINE_BYTES`, else a copy shrunk as an entry is
    (`fit_line`; the notes say an event line holds at most 64 MiB): a `tool_execution_update` whose partial
    result a plugin tool made huge. Values JSON cannot hold become their `str` in the copy; an event that cannot
    be encoded at all is returned as it is (the mode's own encoder deals with it)."""
    try:
        data = json_wire.encode(event, default=str)
    except (TypeError, ValueError, RecursionError):
        return event
    if len(data) <= file_lines.MAX_LINE_BYTES:
        return event
    return _shrunk(data, f"an event line holds at most {file_lines.line_limit()}")[0]


def _shrunk(data: bytes, why: str, size: int | None = None) -> tuple[Any, str]:
    """A parsed copy of the JSON `data` (`size` bytes of JSON, default all of it: the rest is whitespace), its
    largest parts cut until it is a little under `MAX_LINE_BYTES` (room for the notes and the fields around it),
    and what was left out; `why` ends each note."""
    limit = file_lines.MAX_LINE_BYTES
    copy = json_wire.parse(data)
    cuts = _Cuts(excess=(len(data) if size is None else size) - (limit - min(64 << 10, limit // 16)), why=why)
    cuts.leaves(copy)
    cuts.lists(copy)
    return copy, cuts.summary()


def report(entry_type: str, left_out: str) -> None:
    """Say on stderr that an entry was shrunk to fit (the client sees the notes in the entry itself)."""
    print(f"agent-forge: a {entry_type} entry was too large for the session file (a session entry holds at most "
          f"{file_lines.line_limit()}): {left_out} left out, a note in its place", file=sys.stderr)


def _size(value: Any) -> int:
    return len(json_wire.encode(value))


def _why() -> str:
    return f"a session entry holds at most {file_lines.line_limit()}"


class _Cuts:
    """Cuts made to one entry: `excess` bytes still to save, `why` the end of each note, counts for `summary`."""

    def __init__(self, excess: int, why: str) -> None:
        self.excess, self.why = excess, why
        self.images = self.chars = self.items = 0

    def leaves(self, root: Any) -> None:
        """Cut images and strings, largest first, until `excess` is saved."""
        for size, holder, key in sorted(_leaves(root), key=lambda part: part[0], reverse=True):
            if self.excess <= 0:
                return
            value = holder[key]
            holder[key] = self._image(value) if isinstance(value, dict) else self._string(value, size)
            self.excess -= size - _size(holder[key])

    def lists(self, root: Any) -> None:
        """Cut the longest list, again and again, until `excess` is saved (nested lists: one at a time, since
        cutting one may drop another)."""
        done: set[int] = set()
        while self.excess > 0:
            parts = [part for part in _lists(root) if id(part[1][part[2]]) not in done]
            if not parts:
                return
            size, holder, key = max(parts, key=lambda part: part[0])
            holder[key] = self._list(holder[key], size)
            done.add(id(holder[key]))
            self.excess -= size - _size(holder[key])

    def _image(self, block: dict[str, Any]) -> dict[str, Any]:
        self.images += 1
        kind = block.get("mimeType") if isinstance(block.get("mimeType"), str) else "an"
        return {"type": "text", "text": f"[{kind[:100]} image of {len(block['data']):,} base64 characters left "
                                        f"out: {self.why}]"}

    def _string(self, text: str, size: int) -> str:
        kept = _prefix(text, size - self.excess - 200, size)
        self.chars += len(text) - len(kept)
        return f"{kept}\n[... {len(text) - len(kept):,} more characters left out: {self.why}]"

    def _list(self, items: list[Any], size: int) -> list[Any]:
        budget, kept = size - self.excess - 200, 0
        for item in items:
            budget -= _size(item) + 1
            if budget < 0:
                break
            kept += 1
        self.items += len(items) - kept
        note = f"[{len(items) - kept:,} more items left out: {self.why}]"
        blocks = all(isinstance(item, dict) and "type" in item for item in items)
        return [*items[:kept], {"type": "text", "text": note} if blocks else note]

    def summary(self) -> str:
        parts = [(self.images, "image"), (self.chars, "character"), (self.items, "list item")]
        from ...words import counted  # only a cut entry is described: not on start-up's path

        said = [counted(count, name, grouped=True) for count, name in parts if count]
        return " and ".join(said) or "nothing"


def _prefix(text: str, budget: int, size: int) -> str:
    """The longest start of `text` (`size` bytes of JSON, as `_leaves` measured it) found, in a few tries, whose
    JSON is at most `budget` bytes."""
    keep = max(0, len(text) * max(budget, 0) // max(size, 1))
    while keep and _size(text[:keep]) > budget:
        keep = keep * 9 // 10
    return text[:keep]


def _is_image(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") == "image" and isinstance(value.get("data"), str)


def _children(value: Any) -> Any:
    return value.items() if isinstance(value, dict) else enumerate(value)


def _leaves(root: Any) -> list[tuple[int, Any, Any]]:
    """(JSON size, holder, key) of every image block and string of at least `_SMALLEST` bytes under `root` (a
    dict or list), the root excluded; an image's own fields are not looked into."""
    found, stack = [], [root]
    while stack:
        holder = stack.pop()
        for key, value in _children(holder):
            if isinstance(value, str) and len(value) * 6 >= _SMALLEST or _is_image(value):
                if (size := _size(value)) >= _SMALLEST:
                    found.append((size, holder, key))
            elif isinstance(value, (dict, list)):
                stack.append(value)
    return found


def _lists(root: Any) -> list[tuple[int, Any, Any]]:
    """(JSON size, holder, key) of every list of at least `_SMALLEST` bytes and two items under `root`."""
    found, stack = [], [root]
    while stack:
        holder = stack.pop()
        for key, value in _children(holder):
            if isinstance(value, (dict, list)):
                stack.append(value)
                if isinstance(value, list) and len(value) > 1 and (size := _size(value)) >= _SMALLEST:
                    found.append((size, holder, key))
    return found
