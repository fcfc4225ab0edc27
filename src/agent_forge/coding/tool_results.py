"""What a tool hands back, checked before the session keeps it: every result of every tool (built-in, MCP,
plugin, an SDK caller's tool object) and every progress update must be something a session file can hold
(`docs/plugins.md`, `register_tool`), or it becomes a `ToolError` the model sees, naming the problem. The agent
loop applies `to_tool_result` and `checked_tool_error` through `Agent.check_result` / `Agent.check_error`, which
the session sets (`factory.py`); plugin tools apply them at their own boundary too (plugin `update` calls)."""

from __future__ import annotations

from typing import Any

from ..agent.types import ToolError, ToolResult
from .tools.file_kinds import IMAGE_TYPES, image_data_problem


def to_tool_result(value: object) -> ToolResult:
    """A tool's return value (or progress update) as a `ToolResult`: a string (one text block), a `ToolResult`, or a dict
    `{content: [blocks], details?}`. Anything else, content blocks that are not text/image blocks, or `details`
    that JSON cannot hold (a datetime, a set) is a `ToolError` the model sees, naming the problem: the session
    file must be able to hold every result."""
    if isinstance(value, str):
        return ToolResult(content=[{"type": "text", "text": value}])
    if isinstance(value, dict) and "content" in value:
        value = ToolResult(content=value["content"], details=value.get("details"))
    if not isinstance(value, ToolResult):
        raise ToolError(f"The tool returned an invalid result: {type(value).__name__} {describe_value(value)}; "
                        "expected a string, a ToolResult or a dict {content, details?}")
    if isinstance(value.content, str):  # ToolResult("text") means one text block
        value = ToolResult(content=[{"type": "text", "text": value.content}], details=value.details)
    problem = content_problem(value.content) or json_problem(value.details, "details")
    if problem is not None:
        raise ToolError(f"The tool returned an invalid result: {problem}")
    return value


def checked_tool_error(error: ToolError) -> ToolError:
    """`error` itself, or a copy without `details` (saying why) when JSON cannot hold its details."""
    problem = json_problem(error.details, "details")
    if problem is None:
        return error
    return ToolError(f"{error} (the tool's error details were dropped: {problem})")


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


def describe_value(value: object) -> str:
    """A short, safe description of a plugin's value (its repr may be huge or raise)."""
    try:
        text = repr(value)
    except Exception:
        return type(value).__name__
    return text if len(text) <= 80 else text[:77] + "..."


_JSON_LEAVES = (str, int, float, bool, type(None))


def json_problem(value: object, name: str) -> str | None:
    """Why `value` (called `name` in the message) cannot be saved in a session file as JSON, naming the first
    bad part by its path (`details.when is a datetime`), or None. Non-finite floats are fine (written as null);
    so are tuples (written as lists); a list or dict inside itself is named (`details.d contains itself`).
    Walks iteratively, so any depth is checked."""
    stack: list[tuple[str, object]] = [(name, value)]
    inside: set[int] = set()  # the lists and dicts on the path to the item (a shared one elsewhere is fine)
    while stack:
        path, item = stack.pop()
        if path is _LEFT:
            inside.discard(item)  # type: ignore[arg-type]
        elif isinstance(item, bool) or item is None or isinstance(item, (str, float)):
            continue
        elif isinstance(item, int):
            if _too_long(item):
                return f"{path} is an integer too large for JSON"
        elif isinstance(item, (list, tuple, dict)):
            if id(item) in inside:
                return f"{path} contains itself (a circular reference), which JSON cannot hold"
            if (problem := _enter(item, path, stack)) is not None:
                return problem
            inside.add(id(item))
        else:
            return f"{path} is a {type(item).__name__} ({describe_value(item)}), which JSON cannot hold"
    return None


def _enter(item: list | tuple | dict, path: str, stack: list[tuple[str, object]]) -> str | None:
    """Push the items of container `item` (and the mark of leaving it) for `json_problem`; a dict's key that
    is not a string is the problem returned."""
    stack.append((_LEFT, id(item)))
    if isinstance(item, dict):
        bad_key = next((key for key in item if not isinstance(key, _JSON_LEAVES)), _NO_KEY)
        if bad_key is not _NO_KEY:
            return f"{path} has a key that is not a string ({describe_value(bad_key)})"
        stack.extend((f"{path}.{key}", element) for key, element in reversed(list(item.items())))
    else:
        stack.extend((f"{path}[{i}]", element) for i, element in reversed(list(enumerate(item))))
    return None


_NO_KEY = object()
_LEFT: Any = object()  # a path of `json_problem`'s stack: the walk leaves the container whose id is the item


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
