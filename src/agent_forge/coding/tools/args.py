"""Validation of tool arguments: each failure is a `ToolError` naming the offending field."""

from __future__ import annotations

import math


from ...agent.types import ToolError
from ...ai.types import JsonValue


def json_type(value: object) -> str:
    """The JSON name of a Python value's type, for error messages (`string`, `number`, `null`, ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def check_object(args: object) -> dict[str, JsonValue]:
    """`args` itself must be a JSON object."""
    if not isinstance(args, dict):
        raise ToolError(f"Tool arguments must be a JSON object, got {json_type(args)}")
    return args


def require_string(args: dict[str, JsonValue], name: str) -> str:
    """The string field `name`; missing or non-string → `ToolError`."""
    if name not in args or args[name] is None:
        raise ToolError(f"Missing required parameter '{name}'")
    value = args[name]
    if not isinstance(value, str):
        raise ToolError(f"Parameter '{name}' must be a string, got {json_type(value)}")
    return value


def optional_number(args: dict[str, JsonValue], name: str, *, minimum: float | None = None) -> float | None:
    """The number field `name`, or None when absent/null.

    Numeric strings (`"30"`) are accepted because models often quote numbers; booleans, NaN and infinities
    are not. A value below `minimum` → `ToolError`.
    """
    value = args.get(name)
    if value is None:
        return None
    number = _as_number(value)
    if number is None:
        raise ToolError(f"Parameter '{name}' must be a number, got {json_type(value)}")
    if minimum is not None and number < minimum:
        raise ToolError(f"Parameter '{name}' must be >= {_format_number(minimum)}, got {_format_number(number)}")
    return number


def optional_int(args: dict[str, JsonValue], name: str, *, minimum: int | None = None) -> int | None:
    """Like `optional_number`, but the value must be a whole number (`2.0` is accepted as 2)."""
    number = optional_number(args, name, minimum=minimum)
    if number is None:
        return None
    if number != int(number):
        raise ToolError(f"Parameter '{name}' must be a whole number, got {_format_number(number)}")
    return int(number)


def _as_number(value: object) -> float | int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    return None


def _format_number(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)
