"""JSONL framing of RPC mode: records split on LF only, one trailing CR stripped, compact UTF-8 JSON out.

Both seeds, "Framing": U+2028/U+2029 are ordinary characters inside JSON strings, so stdin is read as bytes and
split on b"\\n" alone; lines may be of any length.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

from ...ai import json_wire


class LineSplitter:
    """Feed byte chunks, get complete records (bytes, without the LF and one trailing CR).

    Buffered pieces are joined once per record, so a 10 MB line costs linear time.
    """

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                break
            self._parts.append(chunk[start:end])
            yield _strip_cr(b"".join(self._parts))
            self._parts = []
            start = end + 1
        if start < len(chunk):
            self._parts.append(chunk[start:])

    def finish(self) -> Iterator[bytes]:
        """The last record when the stream ends without a final LF."""
        if self._parts:
            record = b"".join(self._parts)
            self._parts = []
            if record.strip():
                yield _strip_cr(record)


def _strip_cr(record: bytes) -> bytes:
    return record[:-1] if record.endswith(b"\r") else record


def encode(obj: Any) -> bytes:
    """One output record. Lone surrogates (from `\\ud800`-style input escapes) are written back as JSON
    escapes, so the output stays valid UTF-8 and valid JSON."""
    try:
        text = json_wire.dumps(obj, default=_plain)
    except RecursionError:  # nested deeper than json.dumps can go, e.g. get_tree of a long session
        from .deep_json import dumps

        text = dumps(obj, encode=lambda value: json_wire.dumps(value, default=_plain))
    return text.encode("utf-8", "backslashreplace") + b"\n"


def _plain(value: Any) -> Any:
    """Non-JSON values (paths, sets, dataclasses from plugins) are written as strings, never a crash."""
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def decode(record: bytes) -> Any:
    """Parse one record; raises ValueError with a readable message. A leading UTF-8 BOM is ignored;
    `NaN`, `Infinity` and overflowing numbers are rejected (not JSON)."""
    try:
        text = record.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise ValueError(f"invalid UTF-8 at byte {exc.start}") from None
    try:
        return json_wire.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    except json.JSONDecodeError as exc:
        if not text.strip():
            raise ValueError("empty line") from None
        raise ValueError(f"{exc.msg} (line {exc.lineno}, column {exc.colno})") from None
