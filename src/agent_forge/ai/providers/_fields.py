"""Typed reads of the fields a stream parser uses, with one clear error for a field of the wrong type.

Servers other than the APIs' own (local servers, proxies) send `"name": 7`, `"id": 5`, `"choices": "x"`. Each
parser reads its fields through these, so such a chunk fails the request with a `StreamProtocolError` naming
the field by its path in the event (`choices[0].delta.tool_calls[0].function.name`), its value and the type
wanted, instead of a raw `TypeError`. A missing field or `null` reads as absent (the parsers' defaults).
Usage counts are not read here: junk there counts as 0 (`_common.token_count`).
"""

from __future__ import annotations

from typing import Any, Mapping

from .. import json_wire
from ..errors import MalformedChunkError, StreamProtocolError
from ..types import JsonValue

_SHOWN = 60  # characters of a wrong value quoted in the error


def load_object(data: str, where: str, *, screened: bool = False) -> dict[str, JsonValue]:
    """`data` (one SSE event's data) parsed as a JSON object; `where` names it ("stream chunk", "<name> event").
    `screened`: the caller found no run of 19 digits where `data` came from (`json_wire.fast_loads`).

    Raises `MalformedChunkError` when it is not JSON or not an object (every provider API, one text)."""
    value = json_wire.fast_loads(data, screened=screened)
    if value is json_wire.MISS:
        try:
            value = json_wire.loads(data)
        except (ValueError, RecursionError) as exc:
            raise MalformedChunkError(where, json_wire.problem(exc)) from None
    if not isinstance(value, dict):
        raise MalformedChunkError(where, f"expected a JSON object, got {type(value).__name__}")
    return value


class FieldTypeError(StreamProtocolError):
    """A stream event's field has the wrong JSON type; `str()`: `The stream sent <path> = <value> (<type>);
    expected <type>`. Not retried: the same server sends the same shape again."""


def wrong(path: str, value: object, expected: str) -> FieldTypeError:
    """The error for field `path` holding `value` where `expected` (`a string`, `an object`) was wanted."""
    return _fail(path, value, expected)


def _fail(path: str, value: object, expected: str) -> FieldTypeError:
    shown = json_wire.dumps(value)
    shown = shown if len(shown) <= _SHOWN else shown[:_SHOWN] + "…"
    return FieldTypeError(f"The stream sent {path} = {shown} ({json_type(value)}); expected {expected}")


def json_type(value: object) -> str:
    """The JSON name of a decoded value's type: `a string`, `a number`, `an object`, ..."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return "null"


def obj(parent: Mapping[str, Any], key: str, path: str) -> dict[str, Any]:
    """`parent[key]` as an object: {} when missing or null; raises FieldTypeError for any other type."""
    value = parent.get(key)
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    raise _fail(f"{path}.{key}" if path else key, value, "an object")


def array(parent: Mapping[str, Any], key: str, path: str) -> list[Any]:
    """`parent[key]` as an array: [] when missing or null; raises FieldTypeError for any other type."""
    value = parent.get(key)
    if value is None:
        return []
    if isinstance(value, list):
        return value
    raise _fail(f"{path}.{key}" if path else key, value, "an array")


def item(items: list[Any], position: int, path: str) -> dict[str, Any]:
    """`items[position]` as an object ({} for null); raises FieldTypeError naming `path[position]`."""
    value = items[position]
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    raise _fail(f"{path}[{position}]", value, "an object")


def text(parent: Mapping[str, Any], key: str, path: str) -> str | None:
    """`parent[key]` as a string: None when missing or null; raises FieldTypeError for any other type."""
    value = parent.get(key)
    if value is None or isinstance(value, str):
        return value
    raise _fail(f"{path}.{key}" if path else key, value, "a string")


def index(parent: Mapping[str, Any], key: str, path: str) -> int | None:
    """`parent[key]` as a whole number: None when missing or null; raises FieldTypeError otherwise (a
    boolean, a string, a fraction)."""
    value = parent.get(key)
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise _fail(f"{path}.{key}" if path else key, value, "a whole number")


def arguments(parent: Mapping[str, Any], key: str, path: str) -> str | dict[str, Any] | None:
    """Tool-call arguments: a JSON text (the APIs' form) or an object (some local servers send the arguments
    decoded), None when missing or null; raises FieldTypeError for any other type."""
    value = parent.get(key)
    if value is None or isinstance(value, (str, dict)):
        return value
    raise _fail(f"{path}.{key}" if path else key, value, "a string of JSON or an object")
