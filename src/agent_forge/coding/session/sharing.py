"""One string object for each of the values that repeat on almost every line of a session file.

orjson shares the keys it parses (its key cache), not the values: a 5,000-entry session held ~38,000 copies of
"message", "text", "assistant", "toolCall", the provider, the model and the tool names (~2 MB, a sixth of what
resuming it adds to the process). Sharing them as the lines are parsed costs well under a microsecond a line.
"""

from __future__ import annotations

from typing import Any

_ROLE_FIELDS = {"assistant": ("api", "provider", "model", "stopReason"), "toolResult": ("toolName",)}
"""Role → the message fields whose values come from a small set (providers, models, stop reasons, tools)."""


def share_strings(entry: dict[str, Any], shared: dict[str, str]) -> None:
    """Replace, in place, `entry`'s type, its message's role and `_ROLE_FIELDS`, its content blocks' `type`
    (and a tool call's `name`) by the equal string kept in `shared` (the first one met is kept there). Values
    of other types are left as they are: the entry is checked later."""
    share = shared.setdefault
    kind = entry.get("type")
    if type(kind) is str:
        entry["type"] = share(kind, kind)
    message = entry.get("message")
    if type(message) is not dict or type(role := message.get("role")) is not str:
        return
    message["role"] = role = share(role, role)
    for key in _ROLE_FIELDS.get(role, ()):
        value = message.get(key)
        if type(value) is str:
            message[key] = share(value, value)
    content = message.get("content")
    if type(content) is list:
        for block in content:
            if type(block) is dict and type(kind := block.get("type")) is str:
                block["type"] = kind = share(kind, kind)
                if kind == "toolCall" and type(name := block.get("name")) is str:
                    block["name"] = share(name, name)
