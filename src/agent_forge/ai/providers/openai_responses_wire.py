"""Wire shapes of OpenAI's Responses API, named as its API reference names them.

Request side: the input items and tools of https://platform.openai.com/docs/api-reference/responses/create.
Response side: the streaming events of https://platform.openai.com/docs/api-reference/responses-streaming.
Event shapes are `total=False`: the handler reads every field defensively, since a host may omit any.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict, Union

from ..types import JsonValue


class ResponseInputText(TypedDict):
    type: Literal["input_text"]
    text: str


class ResponseInputImage(TypedDict):
    """`image_url` is a `data:` URL here."""

    type: Literal["input_image"]
    image_url: str
    detail: Literal["auto"]


ResponseInputContent = Union[ResponseInputText, ResponseInputImage]


class EasyInputMessage(TypedDict):
    """A user turn, or an assistant text we have no `msg_` id for; `content` a string or input parts."""

    role: Literal["user", "assistant"]
    content: Union[str, list[ResponseInputContent]]


class ResponseOutputText(TypedDict):
    type: Literal["output_text"]
    text: str
    annotations: list[JsonValue]


class ResponseOutputMessage(TypedDict):
    """An assistant text replayed with the `msg_...` id the API gave it."""

    type: Literal["message"]
    role: Literal["assistant"]
    id: str
    status: Literal["completed"]
    content: list[ResponseOutputText]


class ResponseFunctionToolCall(TypedDict):
    """`arguments` is JSON text; `id` is the API's `fc_...` item id, when we have it."""

    type: Literal["function_call"]
    call_id: str
    name: str
    arguments: str
    id: NotRequired[str]


class FunctionCallOutput(TypedDict):
    type: Literal["function_call_output"]
    call_id: str
    output: Union[str, list[ResponseInputContent]]


ResponseReasoningItem = dict[str, JsonValue]
"""A `reasoning` item (`id`, `summary`, `encrypted_content`, ...), kept and replayed verbatim: its fields are
the API's business, not ours."""

ResponseInputItem = Union[EasyInputMessage, ResponseOutputMessage, ResponseFunctionToolCall, FunctionCallOutput,
                          ResponseReasoningItem]


class FunctionTool(TypedDict):
    type: Literal["function"]
    name: str
    description: str
    parameters: dict[str, JsonValue]
    strict: bool


class Reasoning(TypedDict):
    effort: str
    summary: Literal["auto"]


# ---- streaming events ----------------------------------------------------------------------------------


class InputTokensDetails(TypedDict, total=False):
    cached_tokens: int


class OutputTokensDetails(TypedDict, total=False):
    reasoning_tokens: int


class ResponseUsage(TypedDict, total=False):
    """`input_tokens` includes the cached ones; `output_tokens` the reasoning ones."""

    input_tokens: int
    output_tokens: int
    input_tokens_details: InputTokensDetails
    output_tokens_details: OutputTokensDetails


class IncompleteDetails(TypedDict, total=False):
    reason: str


class Response(TypedDict, total=False):
    """The `response` of the lifecycle events (`created`, `completed`, `incomplete`, `failed`)."""

    id: str
    model: str
    status: str
    usage: ResponseUsage
    incomplete_details: IncompleteDetails
    error: dict[str, JsonValue]


class ResponseLifecycleEvent(TypedDict, total=False):
    """`response.created`, `response.completed`, `response.incomplete` and `response.failed`."""

    type: str
    response: Response


class ResponseErrorEvent(TypedDict, total=False):
    type: Literal["error"]
    code: str | None
    message: str
    param: str | None
    sequence_number: int


class SummaryPart(TypedDict, total=False):
    type: str
    text: str


class OutputContentPart(TypedDict, total=False):
    """`output_text` (`text`) or `refusal` (`refusal`)."""

    type: str
    text: str
    refusal: str


class OutputItem(TypedDict, total=False):
    """An output item: `reasoning` (`summary`), `message` (`content`) or `function_call` (`call_id`, `name`,
    `arguments`); other types (built-in tools) are skipped."""

    type: str
    id: str
    call_id: str
    name: str
    arguments: str
    summary: list[SummaryPart]
    content: list[OutputContentPart]


class ResponseOutputItemEvent(TypedDict, total=False):
    """`response.output_item.added` and `response.output_item.done`."""

    type: str
    output_index: int
    item: OutputItem


class ResponseOutputIndexEvent(TypedDict, total=False):
    """Events that point at an output item, e.g. `response.reasoning_summary_part.added`."""

    type: str
    output_index: int


class ResponseTextDeltaEvent(TypedDict, total=False):
    """`response.output_text.delta`; the refusal, function-call-arguments, reasoning-text and
    reasoning-summary-text deltas have the same shape."""

    type: str
    output_index: int
    delta: str
