"""Saving a conversation message that the session file cannot hold as it is.

The agent's memory and the session file must never disagree (`get_messages` live equals the file resumed), and a
value JSON cannot hold (a plugin's datetime, a set) must not end the run. The store refuses such an entry before
it changes anything (`UnencodableEntry`); then the message itself, the very dict the agent holds, is made
JSON-safe in place (each value JSON cannot hold becomes a string naming it), saved, and the change noted on stderr.
Whatever else the line written differs in (an entry too large for a session line shrunk by the store,
`session/fit.py`; a lone surrogate written as U+FFFD, a tuple as a list, NaN as null), the agent's dict takes what
the file holds, in place, for the same reason: this is the one place every message of every source (prompts,
queued messages, plugin messages, SDK and plugin tool results, a custom `stream_fn`'s replies) passes before its
events reach a listener, so the SDK's `messages` and events equal the file resumed, as RPC mode's output does.
"""

from __future__ import annotations

import copy
import json
import sys
from typing import TYPE_CHECKING, Any, Callable

from .session.entries import OMIT, timestamp_ms
from .session.reading import UnencodableEntry

if TYPE_CHECKING:
    from .session.store import SessionStore

_LEAVES = (str, int, float, bool, type(None))


def persist_message(store: SessionStore, message: dict[str, Any]) -> None:
    """Append `message` to `store` (a `custom` role message as a `custom_message` entry, whose timestamp
    `message` takes), made JSON-safe when it has to be (`save_json_safe`). When the store had to shrink the entry
    to fit a session line (`session/fit.py`), or wrote a value differently (a lone surrogate as U+FFFD),
    `message` takes the file's content, so memory equals the file."""
    entry = save_json_safe(lambda shown: _append(store, shown), message)
    if entry is None:
        return
    if entry["type"] == "custom_message":  # the entry's time is the one a resume reads (it has no other)
        message["timestamp"] = timestamp_ms(entry["timestamp"])
    _take_file_view(entry, message)


def save_json_safe(append: Callable[[dict[str, Any]], Any], message: dict[str, Any]) -> Any:
    """`append(message)`'s result; when the store refuses it as unencodable, `make_json_safe(message)` and append
    again. A message that still cannot be written (nesting too deep) is noted on stderr, kept in memory only,
    and None returned."""
    try:
        return append(message)
    except UnencodableEntry as exc:
        first = exc
    replaced = make_json_safe(message)
    try:
        entry = append(message)
    except UnencodableEntry as exc:
        print(f"agent-forge: a {message.get('role')} message was not saved in the session file: {exc}",
              file=sys.stderr)
        return None
    print(f"agent-forge: a {message.get('role')} message held values JSON cannot hold ({first}); saved with "
          f"{replaced} of them replaced by their description", file=sys.stderr)
    return entry


def _append(store: SessionStore, message: dict[str, Any]) -> Any:
    if message.get("role") == "custom":  # plugin context has its own entry type (session format)
        return store.append_custom_message(message.get("customType", ""), message.get("content", ""),
                                           message.get("display", True), message.get("details", OMIT))
    return store.append_message(message)


def _take_file_view(entry: Any, message: dict[str, Any]) -> None:
    """Make `message` (the agent's own dict) equal to `entry`'s message where they differ; a copy, so the store's
    entry never changes with the agent's message. Equal is the rule (one C-level comparison, no copy)."""
    if entry["type"] == "custom_message":
        saved = {key: entry[key] for key in ("customType", "content", "display", "details") if key in entry}
        if any(message.get(key, OMIT) != value for key, value in saved.items()):
            message.update(copy.deepcopy(saved))
    elif entry["message"] != message:
        message.clear()
        message.update(copy.deepcopy(entry["message"]))


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
