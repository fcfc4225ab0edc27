"""The tool contract the agent loop executes, and the shapes of tool results.

A tool is any object with `name`, `label`, `description`, `parameters` (a JSON schema object) and an async
`execute`. Abort is asyncio cancellation: the loop cancels the task running `execute`; a tool that holds
resources (a child process) releases them and lets `CancelledError` propagate.
"""

from __future__ import annotations

from typing import Awaitable, Callable, Protocol, TypeAlias, Union

from ..ai.types import JsonValue, Message, UserContent
from ..records import Record, factory

AgentMessage: TypeAlias = Union[Message, dict[str, object]]
"""A transcript entry: a provider `Message`, or a message of a role the agent's owner defines (the coding
layer's `bashExecution`, `custom`, summaries), which only the owner's `convert_to_llm` reads."""


class ToolResult(Record):
    """What a tool returns: `content` is a list of text/image blocks for the model; `details` is for clients
    (diffs, truncation info, `fullOutputPath`) and is not sent to the model."""

    content: list[UserContent]
    details: object = None


class ToolError(Exception):
    """Raised by a tool to report a failure to the model: the result gets `isError: true` and the message text.

    `details` (optional) is kept on the tool result for clients.
    """

    def __init__(self, message: str, details: object = None):
        super().__init__(message)
        self.details = details


ToolUpdate = Callable[[ToolResult], None]
"""Callback for streaming progress: each call carries the accumulated partial result so far."""


class AgentTool(Protocol):
    name: str
    label: str
    description: str
    parameters: dict[str, JsonValue]

    def execute(self, tool_call_id: str, args: dict[str, JsonValue], on_update: ToolUpdate) -> Awaitable[object]:
        """Run the tool: a `ToolResult`. Raise `ToolError` for failures the model should see; cancellation aborts.
        What it returns is checked (`LoopConfig.check_result`): a plugin's tool may return anything."""
        ...


def text_result(text: str, details: object = None) -> ToolResult:
    """A `ToolResult` with a single text block."""
    return ToolResult(content=[{"type": "text", "text": text}], details=details)


class FunctionTool(Record, kw_only=True):
    """A tool built from an async function `fn(args, on_update) -> ToolResult` (SDK and test convenience)."""

    name: str
    description: str
    parameters: dict[str, JsonValue]
    fn: Callable[[dict[str, JsonValue], ToolUpdate], Awaitable[ToolResult]]
    label: str = ""
    extra: dict[str, object] = factory(dict)

    async def execute(self, tool_call_id: str, args: dict[str, JsonValue], on_update: ToolUpdate) -> ToolResult:
        return await self.fn(args, on_update)
