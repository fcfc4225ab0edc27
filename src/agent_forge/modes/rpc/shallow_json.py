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
_CLOSER = {"[": "]", "{": "}"}
_LENIENT = json.JSONDecoder(strict=False, parse_constant=lambda name: None)  # values are only skipped
_CLOSING_QUOTE = re.compile(r'(?<!\\)(?:\\\\)*"')  # a quote after an even run of backslashes
_FIND_TRIES = 64
_HAND_TOKENS = 100_000
"""Brackets and strings `member_text` matches by hand in the member that broke the line before it gives up."""
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
        raise json.JSONDecodeError(exc.msg, text, exc.pos) from None  # at its place in the whole line


def _skip_nested(text: str, pos: int, tokens: int | None = None) -> int:
    """End of the array or object starting at `pos`, brackets matched and strings skipped (the scalars in
    between are not checked: the member is replaced anyway). With `tokens`, at most that many brackets and
    strings are matched (ValueError past it)."""
    closers: list[str] = []
    while True:
        found = _TOKEN.search(text, pos)
        if found is None:
            raise ValueError("unterminated array or object")
        if tokens is not None and (tokens := tokens - 1) < 0:
            raise ValueError("too many brackets and strings to match by hand")
        char, pos = found.group(), found.end()
        if char == '"':
            end = _string_end(text, pos)
            if end is None:
                raise ValueError("unterminated string")
            pos = end
        elif char in _CLOSER:
            closers.append(_CLOSER[char])
        elif not closers or closers.pop() != char:
            raise ValueError(f"unbalanced '{char}' (char {pos - 1})")
        if not closers:
            return pos


def _string_end(text: str, pos: int) -> int | None:
    """Just past the `"` that closes the string whose text starts at `pos` (any escape or raw character inside
    allowed), or None. `str.find` from quote to quote skips plain text at C speed; a string of many escaped
    quotes or long backslash runs takes one regex pass instead (about 30 ns a character)."""
    start = pos
    for _ in range(_FIND_TRIES):
        quote = text.find('"', pos)
        if quote < 0:
            return None
        run = quote
        while text[run - 1] == "\\" and quote - run < _FIND_TRIES:
            run -= 1
        if quote - run == _FIND_TRIES:
            break
        if (quote - run) % 2 == 0:  # an even run of backslashes escapes itself, not the quote
            return quote + 1
        pos = quote + 1
    found = _CLOSING_QUOTE.search(text, start)
    return found.end() if found else None


def _at_end(text: str, pos: int, out: dict[str, Any]) -> dict[str, Any]:
    if _skip_ws(text, pos) != len(text):
        raise ValueError(f"Extra data (char {pos})")
    return out


def member_text(text: str, name: str) -> str | None:
    """The JSON text of the last top-level member `name` of `text`, an object read leniently: a string may hold
    any escape or raw character and a nested value need only balance its brackets, so what breaks `json.loads`
    elsewhere in the line does not hide the member. The walk stops where members can no longer be told apart
    (a member cut short, the closing brace, garbage after a value); None when `text` does not start as an
    object or no member `name` comes before that. A broken member of more than `_HAND_TOKENS` brackets and
    strings also ends the walk: a pathological line costs a parse error a fraction of a second, not seconds."""
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
    if text[pos:pos + 1] != '"' or (key_end := _string_end(text, pos + 1)) is None:
        return None
    colon = _skip_ws(text, key_end)
    if text[colon:colon + 1] != ":":
        return None
    start = _skip_ws(text, colon + 1)
    if (end := _value_end(text, start)) is None:
        return None
    try:
        key = json.loads(text[pos:key_end], strict=False)
    except ValueError:
        key = None
    return key, start, end


def _value_end(text: str, pos: int) -> int | None:
    """Where the member value at `pos` ends: most are JSON, which the C decoder skips fast (strict=False: raw
    control characters too); the one that broke the line (or nests too deep) is matched by hand."""
    try:
        end = _LENIENT.raw_decode(text, pos)[1]
    except (ValueError, RecursionError):
        return _lenient_end(text, pos)
    after = _skip_ws(text, end)
    return end if text[after:after + 1] in ("", ",", "}") else _lenient_end(text, pos)  # `12ab` is not 12


def _lenient_end(text: str, pos: int) -> int | None:
    """Where the value starting at `pos` ends (strings and brackets matched, anything inside them allowed)."""
    char = text[pos:pos + 1]
    if char == '"':
        return _string_end(text, pos + 1)
    if char in _CLOSER:
        try:  # bounded: a broken 60 MB array costs at most ~0.1 s before the walk gives up
            return _skip_nested(text, pos, _HAND_TOKENS)
        except ValueError:
            return None
    scalar = _SCALAR.match(text, pos)
    return scalar.end() if scalar else None
