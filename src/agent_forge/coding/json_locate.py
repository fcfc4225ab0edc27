"""Where a value sits in JSON text: the line and column of a key path, for messages about configuration files.

Only used when a problem is reported, so the text is walked again rather than parsed with positions up front.
The text is valid JSON already (it was parsed) and nested at most `safe_read.MAX_JSON_DEPTH` levels.
"""

from __future__ import annotations

import bisect
import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .paths import path_text

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder(parse_int=len)  # values are only skipped: no int() (it refuses over 4300 digits)

Path = Sequence[str | int]
"""Object keys and array indexes from the top, e.g. `("providers", "local", "models", 0, "baseUrl")`."""


def locate(text: str, path: Path) -> tuple[int, int] | None:
    """`(line, column)`, both 1-based, of the last key of `path` (its value for an array index, the document for
    an empty path); the deepest part of `path` that exists when the rest does not; None for text that is not
    JSON. With duplicate keys the last one counts, as for `json.loads`."""
    try:
        offset = _find(text, _skip(text, 0), list(path))
    except (ValueError, IndexError):
        return None
    return line_column(text, offset)


@dataclass(frozen=True)
class DuplicateKey:
    """A key written more than once in one JSON object. `where`: the object's key path (empty at the top);
    `positions`: 1-based `(line, column)` of each occurrence, in order (at least two). JSON keeps the last."""

    where: tuple[str | int, ...]
    key: str
    positions: tuple[tuple[int, int], ...]

    @property
    def line(self) -> int:
        """The line of the second occurrence: where the file stops meaning what its first entry says."""
        return self.positions[1][0]

    def message(self) -> str:
        """`providers.local: duplicate key "m" (lines 3 and 9); only the last one (line 9) is used, the earlier
        one ignored` (columns too when occurrences share a line): the text after a `<path>:<line>: ` prefix."""
        lines = [line for line, _ in self.positions]
        if len(set(lines)) == len(lines):
            places, last, prefix = [str(line) for line in lines], f"line {lines[-1]}", "lines "
        else:
            places = [f"line {line} column {column}" for line, column in self.positions]
            last, prefix = places[-1], ""
        if len(places) > 3:  # a key repeated thousands of times gets one line, not thousands of numbers
            prefix, places = f"{len(places)} times: {prefix}", [*places[:2], "...", places[-1]]
        listed = f"{prefix}{', '.join(places[:-1])} and {places[-1]}"
        inside = f"{dotted(self.where)}: " if self.where else ""
        earlier = "ones" if len(lines) > 2 else "one"
        return (f'{inside}duplicate key "{path_text(self.key)}" ({listed}); only the last one ({last}) is used, '
                f"the earlier {earlier} ignored")


def duplicate_keys(text: str) -> list[DuplicateKey]:
    """Every key repeated within one object of the JSON `text`, ordered by the line of its second occurrence.
    Repeats inside a value that a later occurrence replaces are left out (that value is not used at all).
    Raises ValueError for text that is not JSON."""
    try:
        found = _Walker(text).value(_skip(text, 0), ())[1]
    except IndexError:
        raise ValueError("not JSON text") from None
    located = [DuplicateKey(where, key, tuple(line_column(text, offset) for offset in offsets))
               for where, key, offsets in found]
    return sorted(located, key=lambda duplicate: duplicate.line)


def dotted(where: Sequence[str | int]) -> str:
    """`("providers", "local", "models", 0)` -> `providers.local.models[0]`; a key's control characters and line
    breaks as escapes (`path_text`): the key is the file's text, and the message stays one line."""
    text = ""
    for part in where:
        text += f"[{part}]" if isinstance(part, int) else (f".{path_text(part)}" if text else path_text(part))
    return text


def line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of character `offset` in `text`."""
    starts = _line_starts(text)
    line = bisect.bisect_right(starts, offset)
    return line, offset - starts[line - 1] + 1


@functools.lru_cache(maxsize=4)
def _line_starts(text: str) -> list[int]:
    """Offsets where the lines of `text` start, found once per text: counting from the start for each of
    thousands of problems in one file was quadratic."""
    return [0] + [match.end() for match in re.finditer("\n", text)]


def _skip(text: str, index: int) -> int:
    match = _SPACE.match(text, index)
    return match.end() if match else index


def _find(text: str, index: int, path: list[str | int]) -> int:
    """Offset of `path` inside the value starting at `index`."""
    if not path:
        return index
    head, rest = path[0], path[1:]
    found = _members(text, index).get(head)
    if found is None:
        return index
    key_at, value_at = found
    return key_at if not rest else _find(text, value_at, rest)


@functools.lru_cache(maxsize=16)
def _members(text: str, index: int) -> dict[str | int, tuple[int, int]]:
    """`{key: (key offset, value offset)}` of the object at `index` (the last of a repeated key), `{position:
    (offset, offset)}` of an array, `{}` for a scalar. Kept for the next call: a file with thousands of bad
    entries in one list is reported entry by entry, and walking the list again each time made that quadratic."""
    members: dict[str | int, tuple[int, int]] = {}
    opening, closing = text[index], {"{": "}", "[": "]"}.get(text[index])
    index = _skip(text, index + 1)
    while closing and text[index] != closing:
        if opening == "{":
            name, end = json.decoder.scanstring(text, index + 1)
            value_at = _skip(text, _skip(text, end) + 1)  # past the ':'
            members[name] = (index, value_at)
        else:
            value_at = index
            members[len(members)] = (index, index)
        index = _skip(text, _DECODER.raw_decode(text, value_at)[1])
        index = _skip(text, index + 1) if text[index] == "," else index
    return members


_Found = tuple[tuple[str | int, ...], str, list[int]]
"""A repeated key before it is located: (where, key, offset of each occurrence)."""


class _Walker:
    """One walk of valid JSON text for repeated keys. Recursion is bounded: the text was parsed with at most
    `safe_read.MAX_JSON_DEPTH` levels of nesting. A container is first skipped at the parser's speed; only one
    holding a repeat is walked member by member."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.repeats = False
        self.decoder = json.JSONDecoder(object_pairs_hook=self._check, parse_int=len)

    def _check(self, pairs: list[tuple[str, object]]) -> None:
        self.repeats = self.repeats or len({name for name, _ in pairs}) != len(pairs)

    def value(self, index: int, where: tuple[str | int, ...]) -> tuple[int, list[_Found]]:
        """(offset just past the value at `index`, the repeated keys inside it)."""
        text = self.text
        if text[index] not in "{[":
            return _DECODER.raw_decode(text, index)[1], []
        self.repeats = False
        end = self.decoder.raw_decode(text, index)[1]
        if not self.repeats:
            return end, []
        return self.object(index, where) if text[index] == "{" else self.array(index, where)

    def array(self, index: int, where: tuple[str | int, ...]) -> tuple[int, list[_Found]]:
        text, found = self.text, []
        index, position = _skip(text, index + 1), 0
        while text[index] != "]":
            end, inner = self.value(index, (*where, position))
            found += inner
            index, position = _skip(text, end), position + 1
            index = _skip(text, index + 1) if text[index] == "," else index
        return index + 1, found

    def object(self, index: int, where: tuple[str | int, ...]) -> tuple[int, list[_Found]]:
        text = self.text
        offsets: dict[str, list[int]] = {}
        inner: dict[str, list[_Found]] = {}  # per key, from its last occurrence only
        index = _skip(text, index + 1)
        while text[index] == '"':
            name, end = json.decoder.scanstring(text, index + 1)
            offsets.setdefault(name, []).append(index)
            index, inner[name] = self.value(_skip(text, _skip(text, end) + 1), (*where, name))
            index = _skip(text, index)
            index = _skip(text, index + 1) if text[index] == "," else index
        if text[index] != "}":
            raise ValueError("not JSON text")
        found = [(where, name, at_list) for name, at_list in offsets.items() if len(at_list) > 1]
        return index + 1, found + [duplicate for nested in inner.values() for duplicate in nested]
