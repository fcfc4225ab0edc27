"""Wire shapes of Anthropic's Messages API, named as its documentation names them.

Request side: https://docs.anthropic.com/en/api/messages (`MessageParam`, the content block params, `ToolParam`).
Response side: the streaming event types of https://docs.anthropic.com/en/docs/build-with-claude/streaming.
Event shapes are `total=False`: the handler reads every field defensively, since a server may omit any.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict, Union

from ..types import JsonValue


class CacheControl(TypedDict):
    type: Literal["ephemeral"]


class TextBlockParam(TypedDict):
    type: Literal["text"]
    text: str
    cache_control: NotRequired[CacheControl]


class Base64ImageSource(TypedDict):
    type: Literal["base64"]
    media_type: str
    data: str


class ImageBlockParam(TypedDict):
    type: Literal["image"]
    source: Base64ImageSource
    cache_control: NotRequired[CacheControl]


class ToolUseBlockParam(TypedDict):
    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, JsonValue]
    cache_control: NotRequired[CacheControl]


class ThinkingBlockParam(TypedDict):
    type: Literal["thinking"]
    thinking: str
    signature: str
    cache_control: NotRequired[CacheControl]


class RedactedThinkingBlockParam(TypedDict):
    type: Literal["redacted_thinking"]
    data: str
    cache_control: NotRequired[CacheControl]


class ToolResultBlockParam(TypedDict):
    type: Literal["tool_result"]
    tool_use_id: str
    content: NotRequired[Union[str, list[Union[TextBlockParam, ImageBlockParam]]]]
    is_error: NotRequired[bool]
    cache_control: NotRequired[CacheControl]


MediaBlockParam = Union[TextBlockParam, ImageBlockParam]
AssistantBlockParam = Union[TextBlockParam, ToolUseBlockParam, ThinkingBlockParam, RedactedThinkingBlockParam]
ContentBlockParam = Union[MediaBlockParam, AssistantBlockParam, ToolResultBlockParam]


class MessageParam(TypedDict):
    role: Literal["user", "assistant"]
    content: list[ContentBlockParam]


class ToolParam(TypedDict):
    name: str
    description: str
    input_schema: dict[str, JsonValue]
    cache_control: NotRequired[CacheControl]


# ---- streaming events ----------------------------------------------------------------------------------


class ApiUsage(TypedDict, total=False):
    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int


class StartedMessage(TypedDict, total=False):
    """The `message` of `message_start`: an empty response carrying its id, model and first usage."""

    id: str
    model: str
    usage: ApiUsage


class MessageStartEvent(TypedDict, total=False):
    type: Literal["message_start"]
    message: StartedMessage


class StartedContentBlock(TypedDict, total=False):
    """The `content_block` of `content_block_start`: `text`, `thinking`, `redacted_thinking` (its `data`) or
    `tool_use` (its `id`, `name`, `input`); other types are skipped."""

    type: str
    text: str
    data: str
    id: str
    name: str
    input: dict[str, JsonValue]


class ContentBlockStartEvent(TypedDict, total=False):
    type: Literal["content_block_start"]
    index: int
    content_block: StartedContentBlock


class BlockDelta(TypedDict, total=False):
    """`text_delta` (`text`), `thinking_delta` (`thinking`), `input_json_delta` (`partial_json`) or
    `signature_delta` (`signature`)."""

    type: str
    text: str
    thinking: str
    partial_json: str
    signature: str


class ContentBlockDeltaEvent(TypedDict, total=False):
    type: Literal["content_block_delta"]
    index: int
    delta: BlockDelta


class ContentBlockStopEvent(TypedDict, total=False):
    type: Literal["content_block_stop"]
    index: int


class MessageDeltaBody(TypedDict, total=False):
    stop_reason: str
    stop_sequence: str | None


class MessageDeltaEvent(TypedDict, total=False):
    type: Literal["message_delta"]
    delta: MessageDeltaBody
    usage: ApiUsage


class MessageStopEvent(TypedDict, total=False):
    type: Literal["message_stop"]


class ErrorEvent(TypedDict, total=False):
    """An in-stream failure, e.g. `{"type": "error", "error": {"type": "overloaded_error", "message": ...}}`."""

    type: Literal["error"]
    error: dict[str, JsonValue]
