"""`shape_problems(event)`: how an emitted event differs from its TypedDict (agent/events.py, coding/events.py,
modes/rpc/types.py). Checked one level deep: required keys, no undeclared key, and each value's outer type
(a nested TypedDict or `list[...]` is only checked to be a dict or a list)."""

from __future__ import annotations

import types
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from agent_forge.modes.rpc.types import EVENT_SHAPES


def shape_problems(event: dict[str, Any]) -> list[str]:
    """[] when `event` matches the TypedDict of its `type`; else one line per problem."""
    shape = EVENT_SHAPES.get(event.get("type"))  # type: ignore[arg-type]
    if shape is None:
        return [f"undeclared event type {event.get('type')!r}"]
    hints = get_type_hints(shape)
    problems = [f"{event['type']}: missing {name}" for name in sorted(shape.__required_keys__) if name not in event]
    for name, value in event.items():
        if name not in hints:
            problems.append(f"{event['type']}: undeclared field {name}")
        elif not _fits(value, hints[name]):
            problems.append(f"{event['type']}.{name}: {value!r:.80} is not {hints[name]}")
    return problems


def _fits(value: Any, hint: Any) -> bool:
    origin = get_origin(hint)
    if hint is Any:
        return True
    if origin is Literal:
        return value in get_args(hint)
    if origin in (Union, types.UnionType):
        return any(_fits(value, arg) for arg in get_args(hint))
    if hint is type(None):
        return value is None
    if origin is not None:  # list[...], dict[...]
        return isinstance(value, origin)
    if isinstance(hint, type) and issubclass(hint, dict):  # a nested TypedDict
        return isinstance(value, dict)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)
