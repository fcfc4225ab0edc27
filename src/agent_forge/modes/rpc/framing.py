"""JSONL framing of RPC mode: records split on LF only, one trailing CR stripped, compact UTF-8 JSON out.

Both seeds, "Framing": U+2028/U+2029 are ordinary characters inside JSON strings, so stdin is read as bytes and
split on b"\\n" alone. RPC mode caps a command line at `MAX_COMMAND_BYTES`; the client side reads lines of any
length.
"""

from __future__ import annotations

import functools
import json
import math
import os
from typing import Any, Iterator

from ...ai import json_wire
from .raw_json import InRecord, RawJson, list_json


MAX_COMMAND_BYTES = 64 << 20
"""The longest command line RPC mode reads (64 MiB, the LF not counted; docs/rpc.md, "Framing"): a longer one is
answered with a parse error, and is not kept in memory past this many bytes."""


class OversizedLine:
    """Stands for a line longer than the splitter's limit; `size` is its length in bytes (without the LF)."""

    def __init__(self, size: int, limit: int):
        self.size = size
        self.limit = limit

    def error(self) -> str:
        return f"the line is {self.size} bytes long; commands may be at most {self.limit} bytes"


class LineSplitter:
    """Feed byte chunks, get complete records (bytes, without the LF and one trailing CR).

    Buffered pieces are joined once per record, so a 10 MB line costs linear time. With a `limit` (bytes), a
    line growing past it is dropped as it comes (memory stays bounded) and yields one `OversizedLine` at its end.
    """

    def __init__(self, limit: int | None = None) -> None:
        self._parts: list[bytes] = []
        self._size = 0  # bytes of the current line so far (also while it is being skipped)
        self._limit = limit
        self._skipping = False

    def feed(self, chunk: bytes) -> Iterator[bytes | OversizedLine]:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                break
            self._add(chunk[start:end])
            yield self._take()
            start = end + 1
        if start < len(chunk):
            self._add(chunk[start:])

    def finish(self) -> Iterator[bytes | OversizedLine]:
        """The last record when the stream ends without a final LF."""
        if self._skipping:
            yield self._take()
        elif self._parts:
            record = self._take()
            if isinstance(record, OversizedLine) or record.strip():
                yield record

    def _add(self, piece: bytes) -> None:
        self._size += len(piece)
        if self._skipping:
            return
        if self._limit is not None and self._size > self._limit:
            self._parts, self._skipping = [], True  # nothing of it is kept from here on
            return
        self._parts.append(piece)

    def _take(self) -> bytes | OversizedLine:
        size, skipped, parts = self._size, self._skipping, self._parts
        self._parts, self._size, self._skipping = [], 0, False
        if skipped and self._limit is not None:
            return OversizedLine(size, self._limit)
        return _strip_cr(b"".join(parts))


def _strip_cr(record: bytes) -> bytes:
    return record[:-1] if record.endswith(b"\r") else record


def encode(obj: Any) -> bytes:
    """One output record. Lone surrogates become U+FFFD (`json_wire.encode_utf8`), so the output stays valid
    UTF-8 and strict JSON parsers accept it; a BadValue (an echoed request `id`) is written as
    the JSON text the client sent."""
    line = json_wire.fast_encode(obj, default=_fragment_or_plain, newline=True)
    if line is not None:
        return line
    verbatim: list[str | bytes] = []
    default = functools.partial(_plain, verbatim)
    try:  # the stdlib's way: what the fast backend declined (or the backend is off)
        data = json_wire.encode_utf8(json_wire.dumps(obj, default=default))
    except RecursionError:  # nested deeper than json.dumps can go, e.g. get_tree of a long session
        from .deep_json import dumps

        data = json_wire.encode_utf8(dumps(obj, encode=lambda value: json_wire.dumps(value, default=default)))
    for index, source in enumerate(verbatim):  # a backend that gave up after calling `default` left some unused
        text = source if isinstance(source, bytes) else json_wire.encode_utf8(source)
        data = data.replace(json_wire.encode(_placeholder(index)), text, 1)
    return data + b"\n"


async def encode_off_loop(obj: Any) -> bytes:
    """`encode(obj)` in a worker thread: a long read's record holding an `InRecord` (`raw_json.py`)."""
    import asyncio  # not at import: RPC mode's early get_state uses this module (rpc/early.py)

    return await asyncio.to_thread(encode, obj)


def _fragment_or_plain(value: Any) -> Any:
    """`_plain` for the fast backend: a BadValue's or RawJson's text goes in as it is (no placeholder to replace
    afterwards: a long `get_entries` answer is not copied again), an InRecord's items are encoded in place."""
    if isinstance(value, (BadValue, RawJson)):
        source = value.source
        return json_wire.fragment(source if isinstance(source, bytes) else json_wire.encode_utf8(source))
    if type(value) is InRecord:
        return value.items
    return _plain([], value)


def _plain(verbatim: list[str | bytes], value: Any) -> Any:
    """Non-JSON values (paths, sets, dataclasses from plugins) are written as strings, never a crash; a
    BadValue becomes a placeholder that `encode` replaces with its source text, an InRecord one replaced with its
    items' `list_json` (a batch at a time: any depth)."""
    if type(value) is InRecord:
        value = RawJson(list_json(value.items))
    if isinstance(value, (BadValue, RawJson)):
        verbatim.append(value.source)
        return _placeholder(len(verbatim) - 1)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


_NONCE = os.urandom(8).hex()
"""Makes the placeholders unguessable, so text a client or model wrote can never be taken for one."""


def _placeholder(index: int) -> str:
    return f"\x00verbatim-{_NONCE}-{index}\x00"


class BadValue:
    """Stands in for a value that is valid JSON but unusable here: a number beyond the float range, an integer
    of more digits than Python converts (4300), or nesting deeper than the parser goes. `reason` says which;
    `source` is the value's JSON text, written back verbatim when the value is echoed (an `id`). The server
    answers a field error naming the field when the command uses it, and drops the field otherwise."""

    __slots__ = ("reason", "source")

    def __init__(self, reason: str, source: str) -> None:
        self.reason = reason
        self.source = source

    def __repr__(self) -> str:
        return f"BadValue({self.reason!r})"


def _float(text: str) -> float | BadValue:
    value = float(text)
    return value if math.isfinite(value) else BadValue(f"number {text[:40]} is out of range", text)


def _int(text: str) -> int | BadValue:
    try:
        return int(text)
    except ValueError:  # more digits than sys.get_int_max_str_digits()
        return BadValue(f"integer of {len(text)} digits is out of range", text)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


class MalformedRecord(ValueError):
    """A record that is not JSON (or not UTF-8). `request_id` is `(id,)` when the line still starts as a JSON
    object with a readable `id` member (`_salvage_id`), else None: the parse error then gives that id back."""

    def __init__(self, message: str, request_id: tuple[Any] | None) -> None:
        super().__init__(message)
        self.request_id = request_id


def _salvage_id(text: str, *, replaced: bool = False) -> tuple[Any] | None:
    """`(id,)` of the line `text` that `json.loads` refused: its last top-level `id` member, read past whatever
    broke the line elsewhere (`shallow_json.member_text`) and parsed on its own (a raw control character in it
    allowed, lone surrogates U+FFFD as in any command). None when there is none, it is not JSON either, it
    nests too deep to check, or `replaced` (the line's bad bytes were read as U+FFFD) and it holds a U+FFFD:
    then it is not the id the client sent."""
    from .shallow_json import member_text

    source = member_text(text, "id")
    if source is None:
        return None
    try:
        value = _LENIENT.decode(source)
    except (ValueError, RecursionError):
        return None
    if replaced and "\ufffd" in json_wire.dumps(value, default=repr):
        return None
    return (json_wire.scrub_in_place(value),)


def decode(record: bytes) -> Any:
    """Parse one record; raises ValueError with a readable message for a line that is not JSON (a
    `MalformedRecord` carrying the line's id when it has one). A leading UTF-8 BOM is ignored; `NaN` and
    `Infinity` are rejected (not JSON). Values that are JSON but unusable (see BadValue) become BadValue, so an
    object around them still yields its `id`."""
    value = json_wire.fast_loads(record)  # refuses lone surrogates, BOMs, big numbers: those go the long way
    if value is not json_wire.MISS:
        return value
    try:
        text = record.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        text = record.decode("utf-8", "replace").removeprefix("\ufeff")
        raise MalformedRecord(f"invalid UTF-8 at byte {exc.start}", _salvage_id(text, replaced=True)) from None
    try:
        value = _loads(text)
    except ValueError as exc:  # JSONDecodeError, NaN and Infinity, a broken member of a deep object
        if not text.strip():
            raise ValueError("empty line") from None
        raise MalformedRecord(_parse_problem(exc), _salvage_id(text)) from None
    # `\ud83d`-style escapes of half an emoji: U+FFFD from here on, so no message or file ever holds one.
    return json_wire.scrub_in_place(value) if json_wire.may_hold_surrogates(text) else value


def _loads(text: str) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_float=_float, parse_int=_int)
    except RecursionError:
        from .shallow_json import loads_object

        return loads_object(text, BadValue, decode_value=_decode_value)


def _parse_problem(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        words, line, column = json_wire.syntax_error(exc)
        return f"{words} (line {line}, column {column})"
    return str(exc)


_decode_value = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_float, parse_int=_int).raw_decode
_LENIENT = json.JSONDecoder(strict=False, parse_constant=_reject_constant, parse_float=_float, parse_int=_int)
"""What reads a salvaged id: a raw control character inside its string is allowed (JSON says escape it)."""


def bad_value(value: Any) -> BadValue | None:
    """The first BadValue in `value` (searched without recursion), or None."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, BadValue):
            return item
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None
