"""What the model is told about a tool call that cannot run: one without a name, or one naming no tool."""

from __future__ import annotations

from ..ai.types import ToolCall

NAMELESS_CALL = ("The model sent a tool call without a name, so no tool was run. Call one of the available "
                 "tools by its name.")
"""The error result of a tool call whose name is missing or blank (it is replayed as `unnamed_tool`)."""


def named(call: ToolCall) -> bool:
    """Whether `call` has a name that is a non-blank string."""
    name = call.get("name")
    return isinstance(name, str) and bool(name.strip())


def not_found(name: object) -> str:
    """`Tool <name> not found`, the model's name on one line (`name_text`): the model may send any string."""
    from ..ai.visible_text import name_text  # only for a missing tool: not on the start-up path

    return f"Tool {name_text(name)} not found"
