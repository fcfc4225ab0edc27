"""The one set of checks for numbers (and other small values) read from configuration files.

Why one set: Python's `json` reads `1e400` as `inf` and keeps a 400-digit integer exact, and either one crashes
a later `int()` or float conversion (`OverflowError`). Every numeric check of `settings.json` and `models.json`
goes through `is_number`, which refuses them.
"""

from __future__ import annotations

import math


MAX_SAFE_INTEGER = 2 ** 53 - 1
"""Largest magnitude accepted for a configuration number: JavaScript's `Number.MAX_SAFE_INTEGER` (the reference
agent reads these files as JavaScript numbers); far above any real token count, price or delay."""


def is_number(value: object) -> bool:
    """A JSON number (not a boolean) that is finite and at most `MAX_SAFE_INTEGER` in magnitude."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, float) and not math.isfinite(value):  # (math.isfinite of a huge int would overflow)
        return False
    return abs(value) <= MAX_SAFE_INTEGER


def is_count(value: object) -> bool:
    """A non-negative whole number (`3` or `3.0`) that passes `is_number`."""
    return is_number(value) and value >= 0 and value == int(value)


def is_positive_int(value: object) -> bool:
    """A whole number above zero that passes `is_number` (token counts: `1.5` is refused, not rounded)."""
    return is_count(value) and value > 0


def is_fraction(value: object) -> bool:
    """A number strictly between 0 and 1."""
    return is_number(value) and 0 < value < 1


def non_finite_paths(data: object) -> list[tuple[str | int, ...]]:
    """Key paths of every number in parsed JSON that `is_number` refuses (`inf`, `nan`, huge), in document
    order; iterative, so any nesting `safe_read` accepts is fine."""
    found: list[tuple[str | int, ...]] = []
    stack: list[tuple[tuple[str | int, ...], object]] = [((), data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            stack.extend(((*path, k), v) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend(((*path, i), v) for i, v in reversed(list(enumerate(value))))
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and not is_number(value):
            found.append(path)
    return found


OUT_OF_RANGE = f"number out of range (it must be finite and at most {MAX_SAFE_INTEGER} in magnitude)"
"""The problem reported for a number `is_number` refuses."""


def drop_out_of_range(data: object) -> list[tuple[str | int, ...]]:
    """Remove from parsed JSON every number `is_number` refuses, so that the reader falls back to its default
    there; returns the key path of each (`non_finite_paths`). A refused number inside a list removes the whole
    member that holds the list (half a list would mean something else)."""
    found = non_finite_paths(data)
    for path in found:
        while path and not isinstance(path[-1], str):
            path = path[:-1]
        parent = _node(data, path[:-1]) if path else None
        if isinstance(parent, dict):
            parent.pop(path[-1], None)
    return found


def _node(data: object, path: tuple[str | int, ...]) -> object:
    for part in path:
        if isinstance(data, dict) and isinstance(part, str):
            data = data.get(part)
        elif isinstance(data, list) and isinstance(part, int) and part < len(data):
            data = data[part]
        else:
            return None
    return data
