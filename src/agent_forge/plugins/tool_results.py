"""What a plugin tool hands back, checked at the plugin boundary: every result must be something a session file
can hold (`docs/plugins.md`, `register_tool`), or it becomes a `ToolError` the model sees, naming the problem."""

from __future__ import annotations

from ..agent.types import ToolError, ToolResult
from .values import content_problem, json_problem


def to_tool_result(value: object) -> ToolResult:
    """A plugin tool's return value as a `ToolResult`: a string (one text block), a `ToolResult`, or a dict
    `{content: [blocks], details?}`. Anything else, content blocks that are not text/image blocks, or `details`
    that JSON cannot hold (a datetime, a set) is a `ToolError` the model sees, naming the problem: the session
    file must be able to hold every result."""
    if isinstance(value, str):
        return ToolResult(content=[{"type": "text", "text": value}])
    if isinstance(value, dict) and "content" in value:
        value = ToolResult(content=value["content"], details=value.get("details"))
    if not isinstance(value, ToolResult):
        raise ToolError(f"The tool returned {type(value).__name__}; expected a string, a ToolResult or "
                        "{content, details}")
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
