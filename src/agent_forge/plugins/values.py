"""The values that cross the plugin boundary: checking what plugins hand back (image blocks), copying what they
are handed (so changing it changes nothing in the session), describing a plugin's value in a message, and the
session-side values built from what plugins register (context messages, `get_commands` items)."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, TypeVar

from ..agent.loop import now_ms
from ..coding.tools.file_kinds import IMAGE_TYPES, image_data_problem

if TYPE_CHECKING:
    from .api import CommandSpec, Plugin

_T = TypeVar("_T")


def images_problem(images: object) -> str | None:
    """Why `images` is not a list of image blocks `{type: "image", data: <base64>, mimeType}` that pass
    `image_data_problem` (type, base64, magic bytes, size), or None. A bad image must not reach the
    conversation: every later request would fail."""
    if not isinstance(images, list):
        return f"images must be a list of image blocks or None, got {type(images).__name__}"
    for i, image in enumerate(images):
        if not (isinstance(image, dict) and image.get("type") == "image"):
            return (f"images[{i}] must be an image block {{type: \"image\", data: <base64>, mimeType: one of "
                    f"{', '.join(IMAGE_TYPES)}}}")
        problem = image_data_problem(image.get("data"), image.get("mimeType"))
        if problem:
            return f"images[{i}]: {problem}"
    return None


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


def describe_value(value: object) -> str:
    """A short, safe description of a plugin's value (its repr may be huge or raise)."""
    try:
        text = repr(value)
    except Exception:
        return type(value).__name__
    return text if len(text) <= 80 else text[:77] + "..."


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


_JSON_LEAVES = (str, int, float, bool, type(None))


def json_problem(value: object, name: str) -> str | None:
    """Why `value` (called `name` in the message) cannot be saved in a session file as JSON, naming the first
    bad part by its path (`details.when is a datetime`), or None. Non-finite floats are fine (written as null);
    so are tuples (written as lists). Walks iteratively, so any depth is checked."""
    stack: list[tuple[str, object]] = [(name, value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, bool) or item is None or isinstance(item, (str, float)):
            continue
        if isinstance(item, int):
            if _too_long(item):
                return f"{path} is an integer too large for JSON"
        elif isinstance(item, (list, tuple)):
            stack.extend((f"{path}[{i}]", element) for i, element in reversed(list(enumerate(item))))
        elif isinstance(item, dict):
            bad_key = next((key for key in item if not isinstance(key, _JSON_LEAVES)), _NO_KEY)
            if bad_key is not _NO_KEY:
                return f"{path} has a key that is not a string ({describe_value(bad_key)})"
            stack.extend((f"{path}.{key}", element) for key, element in reversed(list(item.items())))
        else:
            return f"{path} is a {type(item).__name__} ({describe_value(item)}), which JSON cannot hold"
    return None


_NO_KEY = object()


def _too_long(number: int) -> bool:
    try:
        str(number)
    except ValueError:  # more digits than int -> str allows (sys.set_int_max_str_digits)
        return True
    return False


def content_problem(content: object, name: str = "content") -> str | None:
    """Why `content` is not a list of tool result blocks (`{type: "text", text: str}` or an image block), or
    None."""
    if not isinstance(content, list):
        return f"{name} must be a list of blocks, got {type(content).__name__}"
    for i, block in enumerate(content):
        if isinstance(block, dict) and block.get("type") == "text":
            if not isinstance(block.get("text"), str):
                return f"{name}[{i}].text must be a string, got {type(block.get('text')).__name__}"
        elif isinstance(block, dict) and block.get("type") == "image":
            problem = images_problem([block])
            if problem is not None:
                return problem.replace("images[0]", f"{name}[{i}]")
        else:
            return f"{name}[{i}] must be a text block {{type: \"text\", text}} or an image block"
        problem = json_problem(block, f"{name}[{i}]")
        if problem is not None:
            return problem
    return None
