"""The events an agent run emits (seed 000, "Events"), one `TypedDict` per `type`, with the wire's camelCase keys.

`AgentEvent` is their union; the loop and the Agent send them through an `Emit` callable, synchronously and in
order. The session adds its own events on top (`coding/events.py`) and RPC mode writes each as one JSON line,
so these classes are also the protocol's event table (`docs/rpc.md`, "Events"; checked by
`tests/modes/test_protocol_docs.py`). Messages are the stored dicts (`ai/types.py` shapes plus the session's
custom roles such as `bashExecution`), hence `dict[str, Any]`.
"""

# No `from __future__ import annotations` here: on Python 3.11 it hides `NotRequired` from TypedDict, and the
# protocol table reads `__required_keys__` / `__optional_keys__`.
from typing import Any, Callable, Literal, NotRequired, TypedDict, Union, get_args, get_type_hints

from ..ai.types import AssistantMessage, AssistantMessageEvent, ToolResultMessage, Usage


class AgentStart(TypedDict):
    """A run begins (before its first `turn_start`)."""

    type: Literal["agent_start"]


class AgentEnd(TypedDict):
    """A run is over: `messages` are the ones it added, in order; `willRetry` is True when the session will
    retry or recover it (automatic retry, overflow compaction), so more runs follow before `agent_settled`."""

    type: Literal["agent_end"]
    messages: list[dict[str, Any]]
    willRetry: bool


class TurnStart(TypedDict):
    """A turn begins: its new user or steering messages, then one assistant message and its tool calls."""

    type: Literal["turn_start"]


class TurnEnd(TypedDict):
    """A turn is over: its assistant message and the results of the tool calls it made (maybe none)."""

    type: Literal["turn_end"]
    message: AssistantMessage
    toolResults: list[ToolResultMessage]


class MessageStart(TypedDict):
    """A message enters the transcript; an assistant message is still streaming (`stopReason: "pending"`)."""

    type: Literal["message_start"]
    message: dict[str, Any]


class MessageUpdate(TypedDict):
    """One provider stream event of the streaming assistant message; `usage` is the latest cumulative count."""

    type: Literal["message_update"]
    usage: Usage
    assistantMessageEvent: AssistantMessageEvent


class MessageEnd(TypedDict):
    """A message is complete; this `message` is authoritative (the session has recorded it by now)."""

    type: Literal["message_end"]
    message: dict[str, Any]


class ToolResultPayload(TypedDict):
    """A tool result as events carry it: content blocks for the model, `details` for clients only."""

    content: list[dict[str, Any]]
    details: NotRequired[Any]


class ToolExecutionStart(TypedDict):
    """A tool call is about to run, with the arguments the model sent."""

    type: Literal["tool_execution_start"]
    toolCallId: str
    toolName: str
    args: dict[str, Any]


class ToolExecutionUpdate(TypedDict):
    """Progress of a running tool call: `partialResult` is everything accumulated so far."""

    type: Literal["tool_execution_update"]
    toolCallId: str
    toolName: str
    args: dict[str, Any]
    partialResult: ToolResultPayload


class ToolExecutionEnd(TypedDict):
    """A tool call finished (exactly once per call, aborted ones included); `result` is what gets stored."""

    type: Literal["tool_execution_end"]
    toolCallId: str
    toolName: str
    result: ToolResultPayload
    isError: bool


class QueueUpdate(TypedDict):
    """The steering and follow-up queues changed; each lists the queued messages' texts, oldest first."""

    type: Literal["queue_update"]
    steering: list[str]
    followUp: list[str]


AgentEvent = Union[AgentStart, AgentEnd, TurnStart, TurnEnd, MessageStart, MessageUpdate, MessageEnd,
                   ToolExecutionStart, ToolExecutionUpdate, ToolExecutionEnd, QueueUpdate]

Emit = Callable[[AgentEvent], None]
"""Where the loop and the Agent send their events (the session's `on_agent_event`)."""


def event_shapes(union: object) -> dict[str, type]:
    """`type` value → TypedDict class, for every member of an event union such as `AgentEvent`.

    Raises `ValueError` when two members claim the same `type` (the table would be ambiguous)."""
    shapes: dict[str, type] = {}
    for shape in get_args(union):
        for name in get_args(get_type_hints(shape)["type"]):
            if name in shapes:
                raise ValueError(f"event type {name!r} is declared by {shapes[name].__name__} and {shape.__name__}")
            shapes[name] = shape
    return shapes
