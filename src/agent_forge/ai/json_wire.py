"""JSON at the process's edges: strict parsing of what comes in, and output that is always valid JSON and UTF-8.

Python's `json` accepts and writes `NaN`/`Infinity` (not JSON, RFC 8259 §6) and keeps lone surrogates from `\\ud83d`
escapes in strings (not encodable as UTF-8). Input from clients, providers and models may carry either, so every
parse at an edge goes through `loads` (rejects them) and every request body through `encode_body` (replaces
them), so one bad value can never poison a session's later requests. Streamed text is fixed where it arrives
(`join_surrogates`: an emoji split across two deltas is joined, a lone half becomes U+FFFD) and every writer
of stdout or a session file encodes with `encode_utf8`, so a strict JSON parser never meets a lone surrogate.

Backends: the hot paths (`encode`, `fast_loads`: stdout records, session lines, stdin commands, SSE payloads) use
`orjson` when it is installed, under the same rules; whatever it refuses or would read differently (a lone
surrogate, an integer beyond 64 bits, nesting past its depth limit, a non-string key, bad input) goes the
stdlib's way, so both give the same values and the same errors. See `set_backend`.
"""

from __future__ import annotations

import json
import math
import os
from typing import TYPE_CHECKING, Any, Callable, NoReturn, TypeVar

from ..lazy_re import LazyPattern

if TYPE_CHECKING:
    from .types import JsonValue

_SURROGATE = LazyPattern("[\ud800-\udfff]")
_PAIR = LazyPattern("[\ud800-\udbff][\udc00-\udfff]")
_SURROGATE_ESCAPE = LazyPattern(r"\\u[dD][89a-fA-F]")
_T = TypeVar("_T")


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:40]} is out of range")
    return value


def loads(text: str | bytes) -> JsonValue:
    """`json.loads` that rejects `NaN`, `Infinity` and numbers that overflow to infinity (ValueError)."""
    value = fast_loads(text)  # orjson rejects all three, so what it accepts is the same value
    if value is MISS:
        return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    return value  # type: ignore[no-any-return]


def reason(exc: json.JSONDecodeError) -> str:
    """What is wrong, without the position: `exc.msg` minus the dangling words Python leaves for a position it
    appends itself (`Invalid control character at`, `Unterminated string starting at`)."""
    return exc.msg.removesuffix(" at").removesuffix(" starting")


def syntax_error(exc: json.JSONDecodeError) -> tuple[str, int, int]:
    """`(reason, line, column)` of a syntax error, 1-based; a trailing comma (the most common hand-editing slip,
    which the parser reports at the bracket after it) is named as such, at the comma:
    `trailing comma before '}' (JSON allows none)`."""
    text, pos = exc.doc, exc.pos
    before = text[:pos].rstrip() if pos < len(text) and text[pos] in "}]" else ""  # a cheap test first: 64 MiB lines
    if before.endswith(","):
        comma = len(before) - 1
        line = text.count("\n", 0, comma) + 1
        column = comma - (text.rfind("\n", 0, comma) + 1) + 1
        return f"trailing comma before '{text[pos]}' (JSON allows none)", line, column
    return reason(exc), exc.lineno, exc.colno


def problem(exc: BaseException) -> str:
    """What a parse refused, in words: a syntax error as `<reason> at line L column C` (`syntax_error`), anything
    else (`NaN`, an out-of-range number, a `RecursionError`) as its own message."""
    if isinstance(exc, json.JSONDecodeError):
        words, line, column = syntax_error(exc)
        return f"{words} at line {line} column {column}"
    return str(exc)


def finite(value: object) -> object:
    """A copy of `value` with non-finite floats replaced by None (containers copied only where needed)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def dumps(value: object, *, default: Callable[[object], object] | None = None) -> str:
    """Compact JSON (non-ASCII kept as is) that is always valid: non-finite floats are written as null.

    `default`: as `json.dumps`'s, the JSON-able stand-in for a value `json` cannot encode."""
    try:
        return _compact(value, default)
    except ValueError as exc:
        if "Out of range float" not in str(exc):
            raise
        return _compact(finite(value), default)


def _compact(value: object, default: Callable[[object], object] | None) -> str:
    return json.dumps(value, allow_nan=False, separators=(",", ":"), ensure_ascii=False, default=default)


def scrub_surrogates(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def is_high_surrogate(char: str) -> bool:
    """True for a UTF-16 high (leading) surrogate, the first half of a pair that a split `\\ud83d\\ude00` leaves."""
    return "\ud800" <= char <= "\udbff"


def join_surrogates(text: str) -> str:
    """`text` with each adjacent high + low surrogate pair joined into the character it encodes (UTF-16, RFC 2781
    §2.2) and every other surrogate replaced by U+FFFD: valid text for UTF-8 and for strict JSON parsers."""
    if text.isascii() or not _SURROGATE.search(text):  # isascii: a C scan, most text never needs the search
        return text
    text = _PAIR.sub(lambda m: chr(0x10000 + ((ord(m[0][0]) - 0xD800) << 10) + ord(m[0][1]) - 0xDC00), text)
    return scrub_surrogates(text)


class HeldSurrogates:
    """The trailing high surrogate of each streamed block's last delta, held back until the block's next delta
    (UTF-16 text cut between a pair's halves: an emoji split across two deltas is joined, not two U+FFFD).
    Keyed by content index; true while one is held."""

    def __init__(self) -> None:
        self._held: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self._held)

    def resolve(self, index: int, chunk: str) -> str:
        """`chunk` after block `index`'s held-back half, its own trailing high surrogate held back, pairs joined
        and other lone halves replaced (`join_surrogates`)."""
        chunk = self._held.pop(index, "") + chunk
        if chunk and is_high_surrogate(chunk[-1]):
            chunk, self._held[index] = chunk[:-1], chunk[-1]
        return join_surrogates(chunk)

    def release(self, index: int) -> bool:
        """Block `index` ended: forget its held-back half; True when there was one (it stands for U+FFFD)."""
        return self._held.pop(index, None) is not None


def scrub_in_place(value: _T) -> _T:
    """`value` with `join_surrogates` applied to every string in it: dicts and lists are changed in place
    (iteratively, so any depth works); a top-level string is returned fixed."""
    if isinstance(value, str):
        return join_surrogates(value)  # type: ignore[return-value]  # str in, str out
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            _scrub_dict(item, stack)
        elif isinstance(item, list):
            for i, element in enumerate(item):
                if isinstance(element, str):
                    item[i] = join_surrogates(element)
                elif isinstance(element, (dict, list)):
                    stack.append(element)
    return value


def _scrub_dict(item: dict[object, object], stack: list[object]) -> None:
    for name in [k for k in item if isinstance(k, str) and _SURROGATE.search(k)]:
        item[join_surrogates(name)] = item.pop(name)
    for key, element in item.items():
        if isinstance(element, str):
            item[key] = join_surrogates(element)
        elif isinstance(element, (dict, list)):
            stack.append(element)


def may_hold_surrogates(text: str) -> bool:
    """Whether JSON text has a `\\uD800`-`\\uDFFF` escape (a cheap test before `scrub_in_place`)."""
    return bool(_SURROGATE_ESCAPE.search(text))


def encode_utf8(text: str) -> bytes:
    """UTF-8 bytes of `text`; lone surrogates (from bad escapes or undecodable file names) become U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return scrub_surrogates(text).encode("utf-8")


def encode_body(value: object) -> bytes:
    """A request body: `encode`."""
    return encode(value)


# ---- backends -----------------------------------------------------------------------------------------------

MISS: Any = object()
"""What `fast_loads` returns when the fast backend is off or declines the text: parse it the stdlib's way."""

_DEFERRED_CALLS = 16
"""Calls served by the stdlib before orjson is imported: start-up's few records would not earn back its import
(~2 ms of CPU: it imports uuid), a stream or a session file does at once."""



def _first_fast_call() -> int:
    """How many calls `_fast` counts down before choosing: 1 with AGENT_FORGE_JSON=orjson (tests of a process)."""
    return 1 if os.environ.get("AGENT_FORGE_JSON") == "orjson" else _DEFERRED_CALLS


_backend: Any = None  # the orjson module once loaded; False: the stdlib only; None: not decided yet
_deferred = _first_fast_call()
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
LONG_NUMBER_DIGITS = 19
"""The shortest run of digits `has_long_number` reports."""
_LONG_NUMBER = b"0" * LONG_NUMBER_DIGITS  # orjson reads integers beyond 64 bits (19+ digits) as floats; the stdlib as ints


_SCAN_CHUNK = 1 << 18  # 256 KiB: the translated copy of a chunk stays small next to a 30 MB session file
_SAMPLED_FROM = 1 << 10
"""Bytes from which `has_long_number` screens the even bytes first (below: the whole text, at once)."""
_HALF_RUN = _LONG_NUMBER[: LONG_NUMBER_DIGITS // 2]
"""What 19 digits in a row leave among the bytes at even offsets: at least 9 digits in a row."""


def has_long_number(data: str | bytes | memoryview) -> bool:
    """Whether `data` holds a run of 19 digits (anywhere: in a string too). A translate and a substring search
    cost well under a microsecond a line (a regex `\\d{19}` cost more than orjson's parse); a large text is
    translated a chunk at a time, overlapping by 18 bytes, so no copy of a whole file is made, and only its
    bytes at even offsets at first (`_has_run`)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if len(raw) <= _SCAN_CHUNK:
        return _has_run(raw if isinstance(raw, bytes) else bytes(raw))
    view, overlap = memoryview(raw), len(_LONG_NUMBER) - 1
    return any(_has_run(view[start:start + _SCAN_CHUNK + overlap].tobytes())
               for start in range(0, len(view), _SCAN_CHUNK))


def _has_run(raw: bytes) -> bool:
    """Whether `raw` holds 19 digits in a row. A large `raw` is screened by its bytes at even offsets (half the
    bytes to translate): 19 digits in a row put at least 9 in a row there, and each place 9 are (also where
    digits and other bytes alternate: a hexadecimal hash) is checked in `raw`, where such a run can only start
    in the 2 bytes before it."""
    if len(raw) < _SAMPLED_FROM:
        return _LONG_NUMBER in raw.translate(_DIGITS_AS_ZERO)
    even = raw[::2].translate(_DIGITS_AS_ZERO)
    at = even.find(_HALF_RUN)
    while at >= 0:
        start = 2 * at
        if _LONG_NUMBER in raw[max(start - 2, 0):start + LONG_NUMBER_DIGITS].translate(_DIGITS_AS_ZERO):
            return True
        at = even.find(_HALF_RUN, at + 1)
    return False


def set_backend(name: str) -> None:
    """Choose the JSON backend: "orjson" (now; ImportError when it is missing), "stdlib", or "auto" (the
    default: orjson after the first few calls when it is installed; the environment variable AGENT_FORGE_JSON
    set to "stdlib" keeps the stdlib, set to "orjson" takes orjson from the first call)."""
    global _backend, _deferred
    if name not in ("orjson", "stdlib", "auto"):
        raise ValueError(f"unknown JSON backend {name!r}: orjson, stdlib or auto")
    _deferred = _first_fast_call()
    _backend = None if name == "auto" else False if name == "stdlib" else _import_orjson(required=True)


def backend() -> str:
    """The backend in use now: "orjson", "stdlib", or "auto" while still undecided."""
    return "auto" if _backend is None else "orjson" if _backend else "stdlib"


def _import_orjson(required: bool = False) -> Any:
    if not required and os.environ.get("AGENT_FORGE_JSON") == "stdlib":
        return False
    from ..lazy_inspect import deferred_datetime, deferred_inspect, deferred_platform

    # orjson imports dataclasses, which imports inspect (and copy) only to call them later; uuid, which imports
    # platform for one call; datetime, for the C API capsule of `_datetime` only (`lazy_inspect`).
    try:
        with deferred_inspect(), deferred_platform(), deferred_datetime():
            import orjson
    except ImportError:
        if required:
            raise
        return False
    return orjson


def _fast() -> Any:
    """The orjson module when it is the backend in use, else None."""
    global _backend, _deferred
    if _backend is None:
        _deferred -= 1
        if _deferred > 0:
            return None
        _backend = _import_orjson()
    return _backend or None


def fast_backend() -> Any:
    """The orjson module when it is the backend, else None; decides now when still undecided (a caller about to
    parse a whole file: see `_DEFERRED_CALLS`). What its `loads` returns for a text without `has_long_number`
    is what `fast_loads` returns; what it raises (JSONDecodeError) `fast_loads` returns as MISS."""
    global _deferred
    if _backend is None:
        _deferred = 1
    return _fast()


_ORJSON_OPTIONS = 0  # set from orjson's flags on first use: dataclasses and datetimes go to `default`, as json


def encode(value: object, *, default: Callable[[object], object] | None = None) -> bytes:
    """Compact JSON as UTF-8 bytes (non-ASCII kept as is): non-finite floats written as null, lone surrogates
    as U+FFFD. `default`: as `json.dumps`'s. Errors as `json.dumps` raises them (TypeError, ValueError,
    RecursionError)."""
    fast = _fast()
    if fast is not None:
        try:
            return fast.dumps(value, default=default, option=_orjson_options(fast))
        except fast.JSONEncodeError:
            pass  # a lone surrogate, a big integer, a non-string key, deep nesting, an error in `default`
    return encode_utf8(dumps(value, default=default))


def fast_encode(value: object, *, default: Callable[[object], object] | None = None,
                newline: bool = False) -> bytes | None:
    """`encode(value)` (`+ b"\n"` with `newline`, in the same buffer: a multi-MB record is not copied to add it)
    made by the fast backend, or None when the backend is off or declines `value` (the caller then encodes it
    the stdlib's way: `dumps`). `default` may return `fragment`s: JSON text written as it is."""
    fast = _fast()
    if fast is None:
        return None
    option = _orjson_options(fast) | (fast.OPT_APPEND_NEWLINE if newline else 0)
    try:
        return fast.dumps(value, default=default, option=option)
    except fast.JSONEncodeError:
        return None


def fragment(source: bytes) -> Any:
    """JSON text (UTF-8) that `fast_encode` writes as it is where its `default` returns this. Only for
    `default`s the fast backend calls: the stdlib cannot encode one."""
    return _backend.Fragment(source)


def _orjson_options(fast: Any) -> int:
    global _ORJSON_OPTIONS
    if not _ORJSON_OPTIONS:
        _ORJSON_OPTIONS = fast.OPT_PASSTHROUGH_DATACLASS | fast.OPT_PASSTHROUGH_DATETIME
    return _ORJSON_OPTIONS


def fast_loads(data: str | bytes | memoryview, *, screened: bool = False) -> Any:
    """The JSON value of `data` when the fast backend reads it exactly as the stdlib would, else `MISS`
    (backend off, invalid JSON, NaN, a lone surrogate, a number orjson reads differently, a BOM).
    `screened`: the caller found no `has_long_number` in a text holding `data` (a whole file, once)."""
    fast = _fast()
    if fast is None or (not screened and has_long_number(data)):
        return MISS
    try:
        return fast.loads(data)
    except fast.JSONDecodeError:
        return MISS


def parse(data: str | bytes) -> Any:
    """`json.loads(data)` (as lenient: NaN accepted), through the fast backend when it can."""
    value = fast_loads(data)
    return json.loads(data) if value is MISS else value
