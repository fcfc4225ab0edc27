"""The values that cross the plugin boundary: copying what plugins are handed (so changing it changes nothing in
the session) and the session-side values built from what plugins register (context messages, `get_commands`
items). Checking what they hand back (images, JSON, tool results) is `coding/tool_results.py`, shared with every
other tool."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, TypeVar

from ..agent.loop import now_ms
from ..coding.tool_results import content_problem, describe_value, images_problem, json_problem

__all__ = ["command_item", "content_problem", "context_message", "describe_value", "images_problem", "json_problem",
           "private_copy"]

if TYPE_CHECKING:
    from .api import CommandSpec, Plugin

_T = TypeVar("_T")


def private_copy(value: _T) -> _T:
    """A deep copy of session data handed to a plugin, so changing it changes nothing in the session. Tool
    `details` may hold objects that cannot be copied: the dicts and lists around them are still copied, and
    only such an object itself is shared."""
    try:
        return copy.deepcopy(value)
    except Exception:
        if isinstance(value, dict):
            return {key: private_copy(item) for key, item in value.items()}  # type: ignore[return-value]
        if isinstance(value, list):
            return [private_copy(item) for item in value]  # type: ignore[return-value]
        return value


def context_message(plugin: Plugin, text: str, display: bool) -> dict[str, object]:
    """A `custom` message (`coding/messages.py`: the model reads it as user text) carrying a plugin's context."""
    return {"role": "custom", "customType": plugin.id, "content": str(text), "display": display,
            "timestamp": now_ms()}


def command_item(command: CommandSpec) -> dict[str, object]:
    """A plugin command as a `get_commands` item (seed 000 shape)."""
    plugin = command.plugin
    item: dict[str, object] = {"name": command.name}
    if command.description:
        item["description"] = command.description
    if command.argument_hint and command.argument_hint.strip():
        item["argumentHint"] = " ".join(command.argument_hint.split())
    item["source"] = "capability"
    item["sourceInfo"] = {"path": f"<plugin:{plugin.id}:{command.name}>", "source": plugin.id,
                          "scope": plugin.scope, "origin": plugin.origin}
    item["path"] = plugin.path
    return item
