"""Where a value sits in JSON text: the line and column of a key path, for messages about configuration files.

Only used when a problem is reported, so the text is walked again rather than parsed with positions up front.
The text is valid JSON already (it was parsed) and nested at most `safe_read.MAX_JSON_DEPTH` levels.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

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


def line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of character `offset` in `text`."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def _skip(text: str, index: int) -> int:
    match = _SPACE.match(text, index)
    return match.end() if match else index


def _find(text: str, index: int, path: list[str | int]) -> int:
    """Offset of `path` inside the value starting at `index`."""
    if not path:
        return index
    head, rest = path[0], path[1:]
    found = _member(text, index, head) if text[index] == "{" else _element(text, index, head)
    if found is None:
        return index
    key_at, value_at = found
    return key_at if not rest else _find(text, value_at, rest)


def _member(text: str, index: int, key: str | int) -> tuple[int, int] | None:
    """(key offset, value offset) of the last member named `key` of the object at `index`."""
    found = None
    index = _skip(text, index + 1)
    while text[index] == '"':
        name, end = json.decoder.scanstring(text, index + 1)
        value_at = _skip(text, _skip(text, end) + 1)  # past the ':'
        if name == key:
            found = (index, value_at)
        index = _skip(text, _DECODER.raw_decode(text, value_at)[1])
        index = _skip(text, index + 1) if text[index] == "," else index
    return found


def _element(text: str, index: int, position: str | int) -> tuple[int, int] | None:
    """(offset, offset) of element `position` of the array at `index`."""
    if text[index] != "[" or not isinstance(position, int):
        return None
    index = _skip(text, index + 1)
    for _ in range(position):
        if text[index] == "]":
            return None
        index = _skip(text, _DECODER.raw_decode(text, index)[1])
        index = _skip(text, index + 1) if text[index] == "," else index
    return None if text[index] == "]" else (index, index)
