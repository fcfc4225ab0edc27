"""The shapes a context message must have (ai/types.py, message-types.md): `context_message` keeps a message
out of the model's context when its shape is unusable and repairs optional fields of the wrong type in a copy
(see `context.py`, which applies it to every message of a branch)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .entries import AgentMessage


def context_message(message: object) -> AgentMessage | None:
    """`message` as the model context may hold it: None when its shape is unusable (not a dict, a role not in
    `MESSAGE_ROLES`, a content of the wrong type, a malformed content block, a missing required field); a
    shallow copy when optional fields have the wrong type (`timestamp` becomes 0; `usage`, `stopReason`,
    `errorMessage`, `provider`, `model`, `toolName`, `customType` are dropped); else `message` itself.
    Cost: linear in the number of content blocks (it runs for every message of a resumed session)."""
    if not isinstance(message, dict):
        return None
    role = message.get("role")
    check = MESSAGE_ROLES.get(role) if isinstance(role, str) else None
    if check is None or not check(message):
        return None
    return with_sound_fields(message)


def with_sound_fields(message: AgentMessage) -> AgentMessage:
    """`message` (of a usable shape) itself when its optional fields have the right types, else the repaired
    copy `context_message` describes."""
    wrong = None
    for key, value in message.items():  # one pass, no set or list made for the usual, sound message
        field = _OPTIONAL_FIELDS.get(key)
        if field is None or (field is _STR_FIELD and isinstance(value, str)):  # inlined: the usual fields
            continue
        if field is _TIMESTAMP_FIELD and type(value) is int:  # the usual timestamp, without a call
            continue
        if not field[0](value):
            wrong = [key] if wrong is None else [*wrong, key]
    return message if wrong is None else _repaired(message, wrong)


def repaired(messages: list[AgentMessage], unrepaired: list[object]) -> list[AgentMessage]:
    """`messages` (a context's) with each of `unrepaired` (messages whose optional fields were not checked yet,
    `sharing.shared_and_checked`) replaced by `with_sound_fields` of it: `messages` itself when none changes
    (the usual case: no copy of the list)."""
    fixed = {}
    for message in unrepaired:
        sound = with_sound_fields(message)  # type: ignore[arg-type]
        if sound is not message:
            fixed[id(message)] = sound  # `unrepaired` keeps the message alive: its id is not reused meanwhile
    return [fixed.get(id(message), message) for message in messages] if fixed else messages


def _repaired(message: AgentMessage, wrong: list[str]) -> AgentMessage:
    repaired = {key: value for key, value in message.items() if key not in wrong}
    repaired.update((key, _OPTIONAL_FIELDS[key][1]) for key in wrong if _OPTIONAL_FIELDS[key][1] is not _DROP)
    return repaired


def _is_text_or_blocks(content: object) -> bool:
    return isinstance(content, str) or is_blocks(content)


def is_blocks(content: object) -> bool:
    """A list of dicts with a string `type`; the known types also need their fields (unknown types pass:
    providers and `messages.convert_to_llm` decide about them)."""
    if not isinstance(content, list):
        return False
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":  # the usual blocks first, their `_BLOCK_FIELDS` checks inlined
            if not isinstance(block.get("text"), str):
                return False
        elif kind == "toolCall":
            if not (isinstance(block.get("id"), str) and isinstance(block.get("name"), str)
                    and isinstance(block.get("arguments"), dict)):
                return False
        elif not isinstance(kind, str):
            return False
        elif kind in _BLOCK_FIELDS and not all(isinstance(block.get(name), of) for name, of in _BLOCK_FIELDS[kind]):
            return False
    return True


_BLOCK_FIELDS: dict[str, tuple[tuple[str, type], ...]] = {
    "thinking": (("thinking", str),),
    "image": (("data", str), ("mimeType", str)),
}
"""Block type → its required fields and their types (ai/types.py); `text` and `toolCall` (`id`, `name`: strings,
`arguments`: a dict) are checked inline in `is_blocks`, the usual blocks."""


def _has(key: str, kind: type) -> Callable[[dict[str, Any]], bool]:
    return lambda message: isinstance(message.get(key), kind)


MESSAGE_ROLES: dict[str, Callable[[dict[str, Any]], bool]] = {
    "user": lambda m: _is_text_or_blocks(m.get("content")),
    "assistant": lambda m: is_blocks(m.get("content")),
    "toolResult": lambda m: is_blocks(m.get("content")) and isinstance(m.get("toolCallId"), str),
    "bashExecution": lambda m: isinstance(m.get("command"), str) and isinstance(m.get("output"), (str, type(None))),
    "custom": lambda m: _is_text_or_blocks(m.get("content", "")),
    "compactionSummary": _has("summary", str),
    "branchSummary": _has("summary", str),
}
"""Message role → the check of the fields every consumer of the context relies on (message-types.md)."""


def _is_number(value: object) -> bool:
    kind = type(value)  # exact types: JSON gives int and float, and a bool is not a number here
    return kind is int or (kind is float and math.isfinite(value))  # type: ignore[arg-type]


def _is_usage(value: object) -> bool:
    """A usage dict whose token counts and cost breakdown, where present, are numbers (`_is_number`, inlined:
    it runs for every assistant message of a resumed session)."""
    if not isinstance(value, dict):
        return False
    for key, amount in value.items():
        if key == "cost":
            if not isinstance(amount, dict):
                return False
            for part in amount.values():
                kind = type(part)
                if kind is not int and (kind is not float or not math.isfinite(part)):
                    return False
        elif key in _USAGE_COUNTS:
            kind = type(amount)
            if kind is not int and (kind is not float or not math.isfinite(amount)):
                return False
    return True


def _is_str(value: object) -> bool:
    return isinstance(value, str)


_USAGE_COUNTS = frozenset(("input", "output", "cacheRead", "cacheWrite", "totalTokens"))
_DROP = object()
_STR_FIELD: tuple[Callable[[object], bool], object] = (_is_str, _DROP)
_TIMESTAMP_FIELD: tuple[Callable[[object], bool], object] = (_is_number, 0)
_OPTIONAL_FIELDS: dict[str, tuple[Callable[[object], bool], object]] = {
    "timestamp": _TIMESTAMP_FIELD,
    "usage": (_is_usage, _DROP),
    **{key: _STR_FIELD for key in ("stopReason", "errorMessage", "provider", "model", "toolName", "customType")},
}
"""Optional message field → (its check, the value replacing a wrong one, or _DROP to remove it)."""
