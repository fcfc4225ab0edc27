"""Large answers encoded piecewise, off the event loop: `get_tree`, `get_entries` and `get_messages` of a long
session (tens of thousands of entries, tens of MB).

Encoding such an answer in one `json.dumps` call holds the interpreter for its whole length, and a nested
`get_tree` (about three levels per entry) is deeper than `json.dumps` goes, so it took the slow generic deep
encoder (`deep_json.py`). Here the answer's big field is written item by item (each item with the C encoder,
in a worker thread, so the loop keeps answering `abort` and `get_state` between items) and handed to the
framing as a `RawJson`, which it writes verbatim. The text is exactly what `framing.encode` would write for
the value itself.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Sequence

from ...ai import json_wire

BIG = 2000
"""Answers of more items than this are encoded in a worker thread and answered in the background."""


class RawJson:
    """A JSON text (str, or UTF-8 bytes) to be written as it is inside an answer (`framing.encode` puts
    `source` in its place)."""

    __slots__ = ("source",)

    def __init__(self, source: str | bytes):
        self.source = source


BATCH = 256
"""Items of a list encoded per call: few calls, and each holds the interpreter only a few milliseconds."""


def value_json(value: Any) -> str:
    """One value as compact JSON, as `framing.encode` writes it (any depth; non-JSON values as strings)."""
    try:
        return _ENCODER.encode(value)  # one encoder for all calls: `json.dumps` with options builds one per call
    except ValueError:  # a non-finite float: `json_wire.dumps` writes it as null
        return json_wire.dumps(value, default=_plain)
    except RecursionError:
        from .deep_json import dumps

        return dumps(value, encode=lambda part: json_wire.dumps(part, default=_plain))


WHOLE = 20_000
"""With the fast backend, a list of up to this many items is encoded in one call (5,000 messages, 2.4 MB: ~2 ms):
one output buffer, where batches and their join made three copies of a multi-MB text (each new buffer's pages
faulted in: most of a long `get_messages`' time). A longer list, or one the fast backend declines (a lone
surrogate), goes by batches, so the interpreter is held a few milliseconds at a time at most."""


class InRecord:
    """A long read's list left as a value: its whole record is encoded in a worker thread (`framing.encode`,
    `RpcServer`), the list in the same fast-backend call. One buffer: the list's multi-MB text is not made
    apart and copied into the record (~3 ms of a 5,000-message `get_messages`)."""

    __slots__ = ("items",)

    def __init__(self, items: Sequence[Any]):
        self.items = items


def holds_in_record(data: Any) -> bool:
    """Whether an answer's `data` holds an `InRecord` field."""
    return isinstance(data, dict) and any(type(value) is InRecord for value in data.values())


async def list_answer(items: Sequence[Any]) -> Any:
    """What a read's list field holds: `items` itself up to `BIG` (encoded with the answer), an `InRecord` up to
    `WHOLE` with the fast backend, else the list's text made in a worker thread a batch at a time (`encoded`)."""
    if len(items) <= BIG:
        return items
    if len(items) <= WHOLE and json_wire.backend() == "orjson":
        return InRecord(items)
    return await encoded(len(items), lambda: list_json(items))


def list_json(items: Sequence[Any]) -> bytes:
    """A JSON array of `items` as UTF-8: in one call when `WHOLE` allows, else `BATCH` items at a time with the
    records' encoder (`json_wire.encode`: orjson when present, ten times the stdlib's speed)."""
    if len(items) <= WHOLE:
        whole = json_wire.fast_encode(items, default=_plain)
        if whole is not None:
            return whole
    parts = (_batch_json(items[start:start + BATCH])[1:-1] for start in range(0, len(items), BATCH))
    return b"[" + b",".join(part for part in parts if part) + b"]"


def _batch_json(batch: Sequence[Any]) -> bytes:
    try:
        return json_wire.encode(batch, default=_plain)
    except RecursionError:  # nested deeper than the encoders go
        return json_wire.encode_utf8(value_json(batch))


def forest_json(roots: list[dict[str, Any]]) -> str:
    """The nested `get_tree` forest (`TreeNode`s: `{entry, children, label?, labelTimestamp?}`) as JSON, without
    recursion: its depth is the session's length. Linear in the size of the output."""
    out: list[str] = ["["]
    stack: list[Any] = ["]", *_with_commas(roots)]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        out.append('{"entry":' + value_json(item["entry"]) + ',"children":[')
        tail = "]" + "".join(f',"{key}":' + value_json(item[key]) for key in ("label", "labelTimestamp")
                             if key in item)
        stack.append(tail + "}")
        stack.extend(_with_commas(item["children"]))
    return "".join(out)


def _with_commas(nodes: list[Any]) -> list[Any]:
    """`nodes` reversed for a stack, with "," between them: popped, they come out as `a , b , c`."""
    out: list[Any] = []
    for index, node in enumerate(reversed(nodes)):
        if index:
            out.append(",")
        out.append(node)
    return out


async def encoded(size: int, encode: Callable[[], str | bytes]) -> RawJson:
    """`RawJson(encode())`: in a worker thread when `size` (items) is over `BIG`, so the loop goes on."""
    if size <= BIG:
        return RawJson(encode())
    import asyncio  # not at import: RPC mode's early get_state uses this module (rpc/early.py)

    return RawJson(await asyncio.to_thread(encode))


def _plain(value: Any) -> Any:
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


_ENCODER = json.JSONEncoder(allow_nan=False, separators=(",", ":"), ensure_ascii=False, default=_plain)
"""What `json_wire.dumps` uses, built once (its output is the same, non-finite floats aside)."""
