"""JSON at the process's edges: strict parsing of what comes in, and output that is always valid JSON and UTF-8.

Python's `json` accepts and writes `NaN`/`Infinity` (not JSON, RFC 8259 §6) and keeps lone surrogates from `\\ud83d`
escapes in strings (not encodable as UTF-8). Input from clients, providers and models may carry either, so every
parse at an edge goes through `loads` (rejects them) and every request body through `encode_body` (replaces
them), so one bad value can never poison a session's later requests.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:40]} is out of range")
    return value


def loads(text: str | bytes) -> Any:
    """`json.loads` that rejects `NaN`, `Infinity` and numbers that overflow to infinity (ValueError)."""
    return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)


def finite(value: Any) -> Any:
    """A copy of `value` with non-finite floats replaced by None (containers copied only where needed)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def dumps(value: Any, **options: Any) -> str:
    """Compact JSON (non-ASCII kept as is) that is always valid: non-finite floats are written as null."""
    options.setdefault("separators", (",", ":"))
    options.setdefault("ensure_ascii", False)
    try:
        return json.dumps(value, allow_nan=False, **options)
    except ValueError as exc:
        if "Out of range float" not in str(exc):
            raise
        return json.dumps(finite(value), allow_nan=False, **options)


def scrub_surrogates(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def encode_utf8(text: str) -> bytes:
    """UTF-8 bytes of `text`; lone surrogates (from bad escapes or undecodable file names) become U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return scrub_surrogates(text).encode("utf-8")


def encode_body(value: Any) -> bytes:
    """A request body: `dumps` then `encode_utf8`."""
    return encode_utf8(dumps(value))
