"""Wire shapes of OpenAI's Chat Completions API, named as its API reference names them.

Request side: the message params and tools of https://platform.openai.com/docs/api-reference/chat/create.
Response side: the `chat.completion.chunk` object of https://platform.openai.com/docs/api-reference/chat-streaming,
with the reasoning and cache fields compatible hosts add. Chunk shapes are `total=False`: the handler reads
every field defensively, since hosts omit many of them.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict, Union

from ..types import JsonValue


class ChatCompletionSystemMessageParam(TypedDict):
    role: Literal["system", "developer"]
    content: str


class ChatCompletionContentPartText(TypedDict):
    type: Literal["text"]
    text: str


class ImageURL(TypedDict):
    url: str


class ChatCompletionContentPartImage(TypedDict):
    type: Literal["image_url"]
    image_url: ImageURL


ChatCompletionContentPart = Union[ChatCompletionContentPartText, ChatCompletionContentPartImage]


class ChatCompletionUserMessageParam(TypedDict):
    role: Literal["user"]
    content: Union[str, list[ChatCompletionContentPart]]


class Function(TypedDict):
    """`arguments` is JSON text."""

    name: str
    arguments: str


class ChatCompletionMessageToolCallParam(TypedDict):
    id: str
    type: Literal["function"]
    function: Function


class ChatCompletionAssistantMessageParam(TypedDict):
    role: Literal["assistant"]
    content: str | None
    tool_calls: NotRequired[list[ChatCompletionMessageToolCallParam]]


class ChatCompletionToolMessageParam(TypedDict):
    role: Literal["tool"]
    tool_call_id: str
    content: str
    name: NotRequired[str]


ChatCompletionMessageParam = Union[ChatCompletionSystemMessageParam, ChatCompletionUserMessageParam,
                                   ChatCompletionAssistantMessageParam, ChatCompletionToolMessageParam]


class FunctionDefinition(TypedDict):
    name: str
    description: str
    parameters: dict[str, JsonValue]


class ChatCompletionToolParam(TypedDict):
    type: Literal["function"]
    function: FunctionDefinition


# ---- streaming chunks ----------------------------------------------------------------------------------


class ChoiceDeltaToolCallFunction(TypedDict, total=False):
    name: str
    arguments: str


class ChoiceDeltaToolCall(TypedDict, total=False):
    index: int
    id: str
    type: Literal["function"]
    function: ChoiceDeltaToolCallFunction


class ChoiceDelta(TypedDict, total=False):
    """`reasoning_content` (DeepSeek, vLLM), `reasoning` (OpenRouter, Ollama) and `reasoning_text` are hosts'
    reasoning text fields."""

    role: str
    content: str | None
    reasoning_content: str | None
    reasoning: str | None
    reasoning_text: str | None
    tool_calls: list[ChoiceDeltaToolCall]


class ChunkChoice(TypedDict, total=False):
    index: int
    delta: ChoiceDelta
    finish_reason: str | None


class PromptTokensDetails(TypedDict, total=False):
    cached_tokens: int
    cache_write_tokens: int
    """Cache writes, as OpenRouter reports them."""


class CompletionTokensDetails(TypedDict, total=False):
    reasoning_tokens: int


class CompletionUsage(TypedDict, total=False):
    """`prompt_tokens` includes the cached and cache-written ones."""

    prompt_tokens: int
    completion_tokens: int
    prompt_tokens_details: PromptTokensDetails
    completion_tokens_details: CompletionTokensDetails


class ChatCompletionChunk(TypedDict, total=False):
    """One `data:` chunk; `error` is what hosts send instead when the stream fails midway."""

    id: str
    model: str
    choices: list[ChunkChoice]
    usage: CompletionUsage | None
    error: JsonValue
