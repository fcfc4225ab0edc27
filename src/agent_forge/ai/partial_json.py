"""Best-effort parsing of a JSON object that may be cut off mid-way (streamed tool-call arguments)."""

from __future__ import annotations

import json
import re
from .types import JsonValue

_MISSING = object()
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_LITERALS = {"true": True, "false": False, "null": None}
_SPECIAL = re.compile(r'["\\]')
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class _Stop(Exception):
    """End of usable input: truncation or a syntax error."""


def parse_partial_json(text: str) -> dict[str, JsonValue]:
    """Parse `text` as a JSON object, completing it if it was truncated.

    Open strings, arrays and objects are closed; a key without a value is dropped; a prefix of `true`,
    `false` or `null` is completed; a truncated number keeps its complete part. Input that stops being
    valid JSON is treated as if it ended there. Returns `{}` when nothing usable remains or the top level
    is not an object; never raises. Example: `parse_partial_json('{"path": "src/ma')` → `{"path": "src/ma"}`.
    """
    try:
        value: object = json.loads(text)
    except (ValueError, RecursionError):
        value = _MISSING
    if isinstance(value, dict):
        return value
    if value is not _MISSING:
        return {}
    try:
        value = _Parser(text).value()
    except (_Stop, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


class _Parser:
    """Recursive-descent JSON reader that returns what it has read when the input stops."""

    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def _peek(self) -> str:
        while self.pos < len(self.text) and self.text[self.pos] in " \t\r\n":
            self.pos += 1
        if self.pos >= len(self.text):
            raise _Stop
        return self.text[self.pos]

    def value(self) -> JsonValue:
        char = self._peek()
        if char == "{":
            return self._object()
        if char == "[":
            return self._array()
        if char == '"':
            return self._string()[0]
        if char in "-0123456789":
            return self._number()
        return self._literal()

    def _object(self) -> dict[str, JsonValue]:
        result: dict[str, JsonValue] = {}
        self.pos += 1
        try:
            while self._peek() != "}":
                if self._peek() == ",":
                    self.pos += 1
                    continue
                self._member(result)
            self.pos += 1
        except _Stop:
            pass
        return result

    def _member(self, result: dict[str, JsonValue]) -> None:
        if self._peek() != '"':
            raise _Stop
        key, closed = self._string()
        if not closed or self._peek() != ":":
            raise _Stop
        self.pos += 1
        result[key] = self.value()

    def _array(self) -> list[JsonValue]:
        result: list[JsonValue] = []
        self.pos += 1
        try:
            while self._peek() != "]":
                if self._peek() == ",":
                    self.pos += 1
                    continue
                result.append(self.value())
            self.pos += 1
        except _Stop:
            pass
        return result

    def _string(self) -> tuple[str, bool]:
        """Read a string; returns (text, closed). An unterminated string keeps its complete characters."""
        text, out, pos = self.text, [], self.pos + 1
        while pos < len(text):
            end = _next_special(text, pos)
            out.append(text[pos:end])
            if end >= len(text):
                break
            if text[end] == '"':
                self.pos = end + 1
                return "".join(out), True
            escaped, pos = _escape(text, end)
            if escaped is None:
                break
            out.append(escaped)
        self.pos = len(text)
        return "".join(out), False

    def _number(self) -> int | float:
        match = _NUMBER.match(self.text, self.pos)
        if not match:
            raise _Stop
        self.pos = match.end()
        return json.loads(match.group())

    def _literal(self) -> JsonValue:
        rest = self.text[self.pos : self.pos + 5]
        for word, value in _LITERALS.items():
            if rest.startswith(word) or (rest and word.startswith(rest) and self.pos + len(rest) == len(self.text)):
                self.pos += min(len(word), len(rest))
                return value
        raise _Stop


def _next_special(text: str, pos: int) -> int:
    match = _SPECIAL.search(text, pos)
    return match.start() if match else len(text)


def _escape(text: str, pos: int) -> tuple[str | None, int]:
    """Decode the escape at `text[pos] == "\\"`; (None, pos) when it is truncated or invalid."""
    kind = text[pos + 1 : pos + 2]
    if kind in _ESCAPES:
        return _ESCAPES[kind], pos + 2
    if kind != "u" or not _HEX4.fullmatch(text[pos + 2 : pos + 6]):
        return None, pos
    code = int(text[pos + 2 : pos + 6], 16)
    low = text[pos + 8 : pos + 12]
    if 0xD800 <= code < 0xDC00 and len(text) < pos + 12:
        return None, pos  # the low half of the pair was cut off
    if 0xD800 <= code < 0xDC00 and text[pos + 6 : pos + 8] == "\\u" and _HEX4.fullmatch(low):
        low_code = int(low, 16)
        if 0xDC00 <= low_code < 0xE000:  # a surrogate pair encodes one astral character
            return chr(0x10000 + ((code - 0xD800) << 10) + (low_code - 0xDC00)), pos + 12
    return chr(code), pos + 6
