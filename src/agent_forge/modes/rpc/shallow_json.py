"""Parse a JSON object whose members may nest deeper than `json.loads` can go, keeping its shallow members.

`json.loads` recurses once per nesting level and raises RecursionError after about a thousand; a command line
such as `{"id":"a","type":"get_state","x":[[[...]]]}` is still an object whose `id` must be answered. Only the top
level is walked here; each member goes to the caller's decoder, and a member too deep for it is checked for
balanced brackets and replaced by the caller's stand-in.

`member_text` walks the top level of a line that is not JSON at all but starts as an object (a raw control
character or a bad escape in a string, garbage after the closing brace, a member cut short), for the `id` an
error response gives back.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

_WS = re.compile(r"[ \t\n\r]*")
_TOKEN = re.compile(r'["\[\]{}]')
_STRING_REST = re.compile(r'(?:[^"\\]|\\.)*"', re.DOTALL)
_CLOSER = {"[": "]", "{": "}"}
_SCALAR = re.compile(r'[^,:{}\[\]"\s]+')  # a number, true, false, null, or a broken one: up to a delimiter

TOO_DEEP = "value nested too deeply"


def loads_object(text: str, stand_in: Callable[[str, str], Any], *,
                 decode_value: Callable[[str, int], tuple[Any, int]]) -> dict[str, Any]:
    """The object in `text` with each member decoded by `decode_value` (a `JSONDecoder.raw_decode`) or, when
    too deep, `stand_in(TOO_DEEP, <the member's JSON text>)`. Raises ValueError when `text` is not one JSON
    object."""
    pos = _skip_ws(text, 0)
    if text[pos:pos + 1] != "{":
        raise ValueError("JSON nested too deeply")
    out: dict[str, Any] = {}
    pos = _skip_ws(text, pos + 1)
    if text[pos:pos + 1] == "}":
        return _at_end(text, pos + 1, out)
    while True:
        key, pos = _key(text, pos)
        out[key], pos = _member(text, pos, stand_in, decode_value)
        pos = _skip_ws(text, pos)
        if text[pos:pos + 1] == "}":
            return _at_end(text, pos + 1, out)
        if text[pos:pos + 1] != ",":
            raise ValueError(f"Expecting ',' delimiter (char {pos})")
        pos = _skip_ws(text, pos + 1)


def _skip_ws(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()  # type: ignore[union-attr]  # matches the empty string at worst


def _key(text: str, pos: int) -> tuple[str, int]:
    if text[pos:pos + 1] != '"':
        raise ValueError(f"Expecting property name enclosed in double quotes (char {pos})")
    key, pos = json.decoder.scanstring(text, pos + 1)  # type: ignore[attr-defined]
    pos = _skip_ws(text, pos)
    if text[pos:pos + 1] != ":":
        raise ValueError(f"Expecting ':' delimiter (char {pos})")
    return key, _skip_ws(text, pos + 1)


def _member(text: str, pos: int, stand_in: Callable[[str, str], Any],
            decode_value: Callable[[str, int], tuple[Any, int]]) -> tuple[Any, int]:
    try:
        return decode_value(text, pos)
    except RecursionError:
        end = _skip_nested(text, pos)
        return stand_in(TOO_DEEP, text[pos:end]), end
    except json.JSONDecodeError as exc:
        raise ValueError(f"{exc.msg} (char {exc.pos})") from None


def _skip_nested(text: str, pos: int) -> int:
    """End of the array or object starting at `pos`, brackets matched and strings skipped (the scalars in
    between are not checked: the member is replaced anyway)."""
    closers: list[str] = []
    while True:
        found = _TOKEN.search(text, pos)
        if found is None:
            raise ValueError("unterminated array or object")
        char, pos = found.group(), found.end()
        if char == '"':
            rest = _STRING_REST.match(text, pos)
            if rest is None:
                raise ValueError("unterminated string")
            pos = rest.end()
        elif char in _CLOSER:
            closers.append(_CLOSER[char])
        elif not closers or closers.pop() != char:
            raise ValueError(f"unbalanced '{char}' (char {pos - 1})")
        if not closers:
            return pos


def _at_end(text: str, pos: int, out: dict[str, Any]) -> dict[str, Any]:
    if _skip_ws(text, pos) != len(text):
        raise ValueError(f"Extra data (char {pos})")
    return out


def member_text(text: str, name: str) -> str | None:
    """The JSON text of the last top-level member `name` of `text`, an object read leniently: a string may hold
    any escape or raw character and a nested value need only balance its brackets, so what breaks `json.loads`
    elsewhere in the line does not hide the member. The walk stops where members can no longer be told apart
    (a member cut short, the closing brace, garbage after a value); None when `text` does not start as an
    object or no member `name` comes before that."""
    found, pos = None, _skip_ws(text, 0)
    if text[pos:pos + 1] != "{":
        return None
    pos += 1
    while (member := _lenient_member(text, _skip_ws(text, pos))) is not None:
        key, start, end = member
        if key == name:
            found = text[start:end]
        pos = _skip_ws(text, end)
        if text[pos:pos + 1] != ",":
            break
        pos += 1
    return found


def _lenient_member(text: str, pos: int) -> tuple[str | None, int, int] | None:
    """(key, or None when its escapes are broken; value start; value end) of the member at `pos`, or None."""
    if text[pos:pos + 1] != '"' or (key_end := _lenient_end(text, pos)) is None:
        return None
    colon = _skip_ws(text, key_end)
    if text[colon:colon + 1] != ":":
        return None
    start = _skip_ws(text, colon + 1)
    end = _lenient_end(text, start)
    if end is None:
        return None
    try:
        key = json.loads(text[pos:key_end], strict=False)
    except ValueError:
        key = None
    return key, start, end


def _lenient_end(text: str, pos: int) -> int | None:
    """Where the value starting at `pos` ends (strings and brackets matched, anything inside them allowed)."""
    char = text[pos:pos + 1]
    if char == '"':
        rest = _STRING_REST.match(text, pos + 1)
        return rest.end() if rest else None
    if char in _CLOSER:
        try:
            return _skip_nested(text, pos)
        except ValueError:
            return None
    scalar = _SCALAR.match(text, pos)
    return scalar.end() if scalar else None
