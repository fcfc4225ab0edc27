"""Saving a conversation message that the session file cannot hold as it is.

The agent's memory and the session file must never disagree (`get_messages` live equals the file resumed), and a
value JSON cannot hold (a plugin's datetime, a set) must not end the run. The store refuses such an entry before
it changes anything (`UnencodableEntry`); then the message itself, the very dict the agent holds, is made
JSON-safe in place (each value JSON cannot hold becomes a string naming it), saved, and the change noted on stderr.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable

from .session.reading import UnencodableEntry

_LEAVES = (str, int, float, bool, type(None))


def persist_message(append: Callable[[dict[str, Any]], Any], message: dict[str, Any]) -> None:
    """`append(message)`; when the store refuses it as unencodable, `make_json_safe(message)` and append again.
    A message that still cannot be written (nesting too deep) is noted on stderr and kept in memory only."""
    try:
        append(message)
        return
    except UnencodableEntry as exc:
        first = exc
    replaced = make_json_safe(message)
    try:
        append(message)
    except UnencodableEntry as exc:
        print(f"agent-forge: a {message.get('role')} message was not saved in the session file: {exc}",
              file=sys.stderr)
        return
    print(f"agent-forge: a {message.get('role')} message held values JSON cannot hold ({first}); saved with "
          f"{replaced} of them replaced by their description", file=sys.stderr)


def make_json_safe(value: dict[str, Any] | list[Any]) -> int:
    """Replace, in place, every value in `value` JSON cannot hold by `"<unserialisable TYPE: repr>"`; tuples
    become lists and keys become strings as JSON writes them (so memory equals the file read back). Returns how
    many values were replaced. Iterative: any depth is walked."""
    replaced = 0
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict) and not all(isinstance(key, str) for key in item):
            pairs = list(item.items())
            item.clear()
            item.update((_key(key), element) for key, element in pairs)
        for key, element in list(item.items()) if isinstance(item, dict) else list(enumerate(item)):
            if isinstance(element, tuple):
                element = item[key] = list(element)
            if isinstance(element, (dict, list)):
                stack.append(element)
            elif not isinstance(element, _LEAVES) or _huge(element):
                item[key] = _describe(element)
                replaced += 1
    return replaced


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, _LEAVES) and not _huge(key):
        return json.dumps(key)  # as json.dumps writes a non-string key: 3 -> "3", True -> "true"
    return _describe(key)


def _huge(value: Any) -> bool:
    if not isinstance(value, int) or isinstance(value, bool):
        return False
    try:
        str(value)
    except ValueError:
        return True
    return False


def _describe(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:
        text = "?"
    text = text if len(text) <= 200 else text[:197] + "..."
    return f"<unserialisable {type(value).__name__}: {text}>"
