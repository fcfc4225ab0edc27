"""Wire shapes of the provider layer: content blocks, messages, usage, models, tools and stream events.

Every shape is a `TypedDict` with the protocol's camelCase keys, so the same dict lives in memory, in the
session file and on the RPC wire (seed 000, "Types"). Timestamps inside messages are Unix milliseconds.
"""

from __future__ import annotations

from typing import Any, Literal, Mapping, NotRequired, TypeAlias, TypedDict, TypeGuard, Union

JsonValue: TypeAlias = Union[None, bool, int, float, str, list["JsonValue"], dict[str, "JsonValue"]]
"""Arbitrary JSON as `json.loads` returns it: only for values whose shape is not ours (tool arguments, plugin
data, unknown fields of a provider's answer). Known shapes have their own TypedDicts below and in the
provider modules."""

StopReason = Literal["stop", "length", "toolUse", "error", "aborted"]
"""Terminal stop reasons of an assistant message; `"pending"` marks a message still streaming."""

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
"""`ai.options.THINKING_LEVELS` (the tuple lives there: checking a level needs no wire shape) as a type."""


class TextContent(TypedDict):
    type: Literal["text"]
    text: str
    textSignature: NotRequired[str]


class ThinkingContent(TypedDict):
    type: Literal["thinking"]
    thinking: str
    thinkingSignature: NotRequired[str]
    redacted: NotRequired[bool]


class ImageContent(TypedDict):
    """`data` is base64 without a data-URL prefix; `mimeType` e.g. `image/png`."""

    type: Literal["image"]
    data: str
    mimeType: str


class ToolCall(TypedDict):
    type: Literal["toolCall"]
    id: str
    name: str
    arguments: dict[str, JsonValue]
    argumentsError: NotRequired[str]
    """Set when the streamed arguments were not valid JSON: the call is answered with this error."""
    thoughtSignature: NotRequired[str]
    """Opaque reasoning state the API attached to this call (Gemini), replayed only to the same model."""


ContentBlock = Union[TextContent, ThinkingContent, ImageContent, ToolCall]
AssistantContent = Union[TextContent, ThinkingContent, ToolCall]
"""A block of an assistant message."""
UserContent = Union[TextContent, ImageContent]
"""A block of a user message or a tool result."""


class Cost(TypedDict):
    """Dollars, computed from the model's per-million-token prices."""

    input: float
    output: float
    cacheRead: float
    cacheWrite: float
    total: float


class Usage(TypedDict):
    """Token counts as reported by the provider; `totalTokens` = input + output + cacheRead + cacheWrite."""

    input: int
    output: int
    cacheRead: int
    cacheWrite: int
    totalTokens: int
    cost: Cost
    reasoning: NotRequired[int]
    """Reasoning tokens, already counted in `output`; set only by APIs that report them separately."""


class UserMessage(TypedDict):
    role: Literal["user"]
    content: Union[str, list[UserContent]]
    timestamp: int


class AssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: list[AssistantContent]
    api: str
    provider: str
    model: str
    usage: Usage
    stopReason: str
    timestamp: int
    responseId: NotRequired[str]
    responseModel: NotRequired[str]
    """The model name the server reported answering with, when it differs from `model` (the requested id)."""
    errorMessage: NotRequired[str]
    rawStopReason: NotRequired[str]
    thinkingLevel: NotRequired[str]
    durationMs: NotRequired[int]
    retryAfterMs: NotRequired[int]
    """On a failed response: the server's `retry-after` hint in milliseconds (automatic retry waits at least this)."""


class ToolResultMessage(TypedDict):
    role: Literal["toolResult"]
    toolCallId: str
    toolName: str
    content: list[UserContent]
    isError: bool
    timestamp: int
    details: NotRequired[Any]
    usage: NotRequired[Usage]


Message = Union[UserMessage, AssistantMessage, ToolResultMessage]


class ModelCost(TypedDict):
    """Dollars per million tokens."""

    input: float
    output: float
    cacheRead: float
    cacheWrite: float


class Model(TypedDict):
    """A model as the seeds' `Model` type: what `get_state.model` and `get_available_models` return.

    `api` names the wire API module (`anthropic-messages`, `openai-completions`, ...); hosts that speak an
    existing API differ only in `provider`, `baseUrl`, `headers` and `compat`.
    """

    id: str
    name: str
    api: str
    provider: str
    baseUrl: str
    reasoning: bool
    input: list[str]
    contextWindow: int
    maxTokens: int
    cost: ModelCost
    headers: NotRequired[dict[str, str]]
    compat: NotRequired[dict[str, JsonValue]]
    thinkingLevels: NotRequired[list[str]]
    thinkingLevelMap: NotRequired[dict[str, JsonValue]]
    """models.json: thinking level -> the API's value for it; `null` drops the level."""
    samplingParams: NotRequired[dict[str, JsonValue]]
    """models.json: request fields such as `temperature`, `top_p`, `seed` (each API sends those it has)."""
    samplingParamsByThinkingLevel: NotRequired[dict[str, dict[str, JsonValue]]]
    defaultContextWindow: NotRequired[int]
    contextWindowOptions: NotRequired[list[int]]


class Tool(TypedDict):
    """A tool as declared to the model: `parameters` is a JSON schema object."""

    name: str
    description: str
    parameters: dict[str, JsonValue]


class Context(TypedDict):
    """Everything one model request needs besides the model and options."""

    systemPrompt: str
    messages: list[Message]
    tools: NotRequired[list[Tool]]


# Stream events. A provider's `stream()` yields these; `partial`-free by design (seed 000: lean
# `message_update`). The provider mutates one AssistantMessage in place and yields events that point into it
# by `contentIndex`; `start` carries that message, `done`/`error` carry it finished.


class StartEvent(TypedDict):
    type: Literal["start"]
    message: AssistantMessage


class TextStartEvent(TypedDict):
    type: Literal["text_start", "thinking_start"]
    contentIndex: int


class DeltaEvent(TypedDict):
    type: Literal["text_delta", "thinking_delta", "toolcall_delta"]
    contentIndex: int
    delta: str


class BlockEndEvent(TypedDict):
    type: Literal["text_end", "thinking_end"]
    contentIndex: int
    content: str


class ToolCallStartEvent(TypedDict):
    type: Literal["toolcall_start"]
    contentIndex: int
    id: str
    toolName: str


class ToolCallEndEvent(TypedDict):
    type: Literal["toolcall_end"]
    contentIndex: int
    toolCall: ToolCall


class DoneEvent(TypedDict):
    """Final event: `message.stopReason` is terminal; for `error` it is `error` or `aborted`."""

    type: Literal["done", "error"]
    message: AssistantMessage


AssistantMessageEvent = Union[
    StartEvent, TextStartEvent, DeltaEvent, BlockEndEvent, ToolCallStartEvent, ToolCallEndEvent, DoneEvent
]


# Narrowing: messages and blocks are read defensively (`.get`), since a session file or a plugin may hand over
# a malformed one; these tell a type checker what a passing `.get("role")` or `.get("type")` check means.


def is_user(message: Mapping[str, object]) -> TypeGuard[UserMessage]:
    return message.get("role") == "user"


def is_assistant(message: Mapping[str, object]) -> TypeGuard[AssistantMessage]:
    return message.get("role") == "assistant"


def is_tool_result(message: Mapping[str, object]) -> TypeGuard[ToolResultMessage]:
    return message.get("role") == "toolResult"


def is_text(block: Mapping[str, object]) -> TypeGuard[TextContent]:
    return block.get("type") == "text"


def is_thinking(block: Mapping[str, object]) -> TypeGuard[ThinkingContent]:
    return block.get("type") == "thinking"


def is_image(block: Mapping[str, object]) -> TypeGuard[ImageContent]:
    return block.get("type") == "image"


def is_tool_call(block: Mapping[str, object]) -> TypeGuard[ToolCall]:
    return block.get("type") == "toolCall"
