"""One string object for each of the words that repeat on almost every line of a session file.

orjson shares the keys it parses (its key cache), not the values: a 5,000-entry session held ~38,000 copies of
"message", "text", "assistant", "toolCall", the provider, the model and the tool names (~2 MB, a sixth of what
resuming it adds to the process). The words of the format (entry and block types, roles) are shared as the
lines are parsed, by comparing with this module's strings (no call, no hash). The values that come from
providers and tools (`api`, `provider`, `model`, `stopReason`, `toolName`, a tool call's `name`) are not: shared
through a dict they cost ~1,300 instructions each, 15.5 M of the 377 M to a resumed 5,000-entry session's first
`get_state` (issue 15), for 0.6 MB of its 29.6 MB peak.
"""

from __future__ import annotations

from typing import Any

from .shapes import context_message

def share_strings(entry: dict[str, Any], shared: dict[str, str]) -> None:
    """Replace, in place, `entry`'s type, its message's role and its content blocks' `type` by the equal string
    kept in `shared` (the first one met is kept there). Values of other types are left as they are: the entry
    is checked later. What `shared_and_checked` shares, said plainly (tests compare the two)."""
    share = shared.setdefault
    kind = entry.get("type")
    if type(kind) is str:
        entry["type"] = share(kind, kind)
    message = entry.get("message")
    if type(message) is not dict or type(role := message.get("role")) is not str:
        return
    message["role"] = share(role, role)
    content = message.get("content")
    if type(content) is list:
        for block in content:
            if type(block) is dict and type(kind := block.get("type")) is str:
                block["type"] = share(kind, kind)


class _NotAMessage:
    """The type of `NOT_A_MESSAGE`: one object, also through `copy.deepcopy` and pickling (by its name)."""

    def __reduce__(self) -> str:
        return "NOT_A_MESSAGE"

    def __repr__(self) -> str:
        return "NOT_A_MESSAGE"


NOT_A_MESSAGE = _NotAMessage()
"""What `shared_and_checked` returns for an entry that is not of type `message`."""

_PLAIN_ROLES = frozenset(("user", "assistant", "toolResult"))


def shared_and_checked(entry: dict[str, Any], shared: dict[str, str], unrepaired: list[object]) -> object:
    """`share_strings(entry, shared)`, and for a `message` entry `context_message` of its message (the message,
    a repaired copy, or None), else `NOT_A_MESSAGE`: one walk of the content blocks for both (opening a session
    runs this once a line). The walk only proves the usual shapes sound (user, assistant and tool result
    messages of text and tool call blocks, exact JSON types); anything else is decided by `context_message`.
    A message of such a shape is returned as it is and added to `unrepaired`: its optional fields (timestamp,
    usage, ...) are checked later, by `shapes.repaired` (they never make it unusable: a resumed session's
    first `get_state` counts its messages without them, issue 15)."""
    # The usual message entry with its fields read by subscript, not `get` (no method call: 9 M instructions
    # less to a resumed 5,000-entry session's first `get_state`, 2.7%): a field missing (KeyError), a value that
    # is no dict where one is read (TypeError) or any other shape is left to the long way, `_shared_and_checked`.
    try:
        if entry["type"] == "message":
            message = entry["message"]
            role = message["role"]
            if role == "assistant" or role == "user" or role == "toolResult":
                content = message["content"]
                if (_sound_blocks(content) if type(content) is list else role == "user" and type(content) is str) \
                        and (role != "toolResult" or type(message["toolCallId"]) is str):
                    entry["type"], message["role"] = "message", _ROLES[role]
                    unrepaired.append(message)
                    return message
    except (KeyError, TypeError):
        pass
    return _shared_and_checked(entry, shared, unrepaired)


_ROLES = {"assistant": "assistant", "user": "user", "toolResult": "toolResult"}
"""The roles of the usual messages, as the one string kept for each."""


def _sound_blocks(content: list[Any]) -> bool:
    """Whether every block of `content` is a text or a tool call block of sound fields (their `type` shared);
    raises KeyError or TypeError for a block missing a field or that is no dict."""
    for block in content:
        kind = block["type"]
        if kind == "text":
            block["type"] = "text"
            if type(block["text"]) is not str:
                return False
        elif kind == "toolCall":
            block["type"] = "toolCall"
            if type(block["name"]) is not str or type(block["id"]) is not str or type(block["arguments"]) is not dict:
                return False
        else:
            return False
    return True


def _shared_and_checked(entry: dict[str, Any], shared: dict[str, str], unrepaired: list[object]) -> object:
    """`shared_and_checked` of any entry (the long way: every `type` and role shared, any shape decided)."""
    # The sharing and the block checks inlined, the usual case first: ~2/3 of the bytecodes of a
    # session file's open that are not orjson's parse run here. The words of almost every line are shared by
    # comparing with this module's own strings (no call, no hash of the new string), the others through `shared`.
    share = shared.setdefault
    kind = entry.get("type")
    if kind == "message":
        entry["type"] = kind = "message"
    elif type(kind) is str:
        entry["type"] = kind = share(kind, kind)
    message = entry.get("message")
    if type(message) is not dict or type(role := message.get("role")) is not str:
        return context_message(message) if kind == "message" else NOT_A_MESSAGE
    if role == "assistant":
        message["role"] = role = "assistant"
    elif role == "user":
        message["role"] = role = "user"
    elif role == "toolResult":
        message["role"] = role = "toolResult"
    else:
        message["role"] = role = share(role, role)
    content = message.get("content")
    if type(content) is list:
        sound = role in _PLAIN_ROLES
        for block in content:
            if type(block) is not dict:
                sound = False
                continue
            block_kind = block.get("type")
            if block_kind == "text":
                block["type"] = "text"
                if type(block.get("text")) is not str:
                    sound = False
            elif type(block_kind) is not str:
                sound = False
            elif block_kind == "toolCall":
                block["type"] = "toolCall"
                if (type(block.get("name")) is not str or type(block.get("id")) is not str
                        or type(block.get("arguments")) is not dict):
                    sound = False
            else:
                block["type"] = share(block_kind, block_kind)
                sound = False
    else:
        sound = role == "user" and type(content) is str
    if kind != "message":
        return NOT_A_MESSAGE
    if not sound or role == "toolResult" and type(message.get("toolCallId")) is not str:
        return context_message(message)
    unrepaired.append(message)
    return message
