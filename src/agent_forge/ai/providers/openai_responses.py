"""The `openai-responses` wire API: OpenAI's streaming Responses endpoint (POST {baseUrl}/responses).

Formats: https://platform.openai.com/docs/api-reference/responses/create and
https://platform.openai.com/docs/api-reference/responses-streaming.

Requests are stateless (`store: false`): the whole conversation is sent each turn, and reasoning survives
across turns as the API's encrypted reasoning items (`include: ["reasoning.encrypted_content"]`), which we
keep verbatim as a thinking block's `thinkingSignature` and replay to the same model. A tool call's `id` is
`<call_id>|<item_id>`: the API pairs outputs by `call_id` and wants the `fc_...` item id back on replay.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Iterable, Union

from .. import json_wire
from . import _fields as fields
from ._response_body import stream_error_text
from ..errors import ApiStreamError, StreamProtocolError
from ..hosts import effective_compat
from ..options import StreamOptions
from ..sse import SSEEvent
from ..transform import same_origin, transform_messages
from ..types import (AssistantMessage, AssistantMessageEvent, Context, ImageContent, Message, Model,
                     TextContent, ThinkingContent, Tool, ToolCall, ToolResultMessage, UserContent, is_assistant,
                     is_image, is_text, is_thinking, is_tool_call, is_tool_result, is_user)
from ..usage import update_cost
from ._sse_exchange import stream_api
from ._common import (
    BlockWords,
    open_block,
    sse_post,
    new_local_id,
    HttpRequest,
    MessageBuilder,
    SseHandler,
    dumps,
    max_tokens,
    merge_sampling,
    require_api_key,
    sampling_params,
    token_count,
)
from .openai_responses_wire import (EasyInputMessage, FunctionCallOutput, FunctionTool, OutputItem, Reasoning,
                                    ResponseErrorEvent, ResponseFunctionToolCall, ResponseInputContent,
                                    ResponseInputItem, ResponseLifecycleEvent, ResponseOutputIndexEvent,
                                    ResponseOutputItemEvent, ResponseOutputMessage, ResponseOutputText,
                                    ResponseReasoningItem,
                                    ResponseTextDeltaEvent, ResponseUsage)

REASONING_EFFORT = {
    "minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "xhigh",
}
"""Thinking levels → `reasoning.effort`; a model's `thinkingLevelMap` overrides (see `reasoning_param`)."""
INCOMPLETE_REASONS = {"max_output_tokens": "length", "content_filter": "error"}
"""`incomplete_details.reason` → our stopReason (https://platform.openai.com/docs/api-reference/responses/object,
`incomplete_details`). An incomplete response with a reason newer than this table was still cut off: "length"."""

Event = AssistantMessageEvent


def stream(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[Event]:
    """Stream one assistant message from the Responses API (see `ai.types` for the event shapes).

    Never raises after the first (`start`) event, except `CancelledError`, which it re-raises after
    closing the response and finalizing the message in place.
    """
    return stream_api(_Handler(MessageBuilder(model)), options, lambda: build_request(model, context, options))


# ---- request -------------------------------------------------------------------------------------------


def build_request(model: Model, context: Context, options: StreamOptions) -> HttpRequest:
    """URL, headers and JSON body. Raises `MissingApiKeyError` unless a key is given or not required."""
    key = require_api_key(model, options)
    auth = {"authorization": f"Bearer {key}"} if key is not None else {}
    url = model["baseUrl"].rstrip("/") + "/responses"
    return sse_post(model, options, url, auth, build_body(model, context, options))


def build_body(model: Model, context: Context, options: StreamOptions) -> dict[str, object]:
    """The request body. Compat flags (`ai.hosts`): `supportsStore` (default true: send `store: false`),
    `supportsMaxOutputTokens` (default true), `promptCacheKeyMode` ("auto"/"enabled": `prompt_cache_key` is
    the session id; "disabled": never). models.json `samplingParams` are merged in at the top level
    (`merge_sampling`: `temperature`, `top_p`, ... as the API names them)."""
    compat = effective_compat(model)
    body: dict[str, object] = {"model": model["id"], "input": convert_input(model, context["messages"]), "stream": True}
    if context.get("systemPrompt"):
        body["instructions"] = context["systemPrompt"]
    if compat.get("supportsStore", True):
        body["store"] = False
    if compat.get("supportsMaxOutputTokens", True):
        body["max_output_tokens"] = max_tokens(model, options)
    if context.get("tools"):
        body["tools"] = [_tool(tool) for tool in context["tools"]]
    reasoning = reasoning_param(model, options)
    if reasoning is not None:
        body["reasoning"] = reasoning
    if model.get("reasoning") and compat.get("supportsStore", True):
        body["include"] = ["reasoning.encrypted_content"]  # stateless: reasoning comes back to us to replay
    if options.session_id and compat.get("promptCacheKeyMode", "auto") != "disabled":
        body["prompt_cache_key"] = options.session_id
    merge_sampling(body, sampling_params(model, options))
    if options.temperature is not None:
        body["temperature"] = options.temperature
    return body


def reasoning_param(model: Model, options: StreamOptions) -> Reasoning | None:
    """`{"effort", "summary": "auto"}` for a reasoning model, or None (no `reasoning` field).

    The effort is the model's `thinkingLevelMap[level]` when present (null: no field), else
    `REASONING_EFFORT[level]`; level "off" without a mapping sends no field (the model's default applies).
    """
    if not model.get("reasoning"):
        return None
    level, mapping = options.thinking_level, model.get("thinkingLevelMap") or {}
    effort = mapping[level] if level in mapping else REASONING_EFFORT.get(level)
    if effort is None:
        return None
    return {"effort": str(effort), "summary": "auto"}


def _tool(tool: Tool) -> FunctionTool:
    # `strict` defaults to true in this API, which demands closed schemas with every property required.
    return {"type": "function", "name": tool["name"], "description": tool["description"],
            "parameters": tool["parameters"], "strict": False}


def convert_input(model: Model, messages: list[Message]) -> list[ResponseInputItem]:
    """Our messages → input items, after `transform_messages` made them valid for `model`."""
    items: list[ResponseInputItem] = []
    for message in transform_messages(model, messages):
        if is_user(message):
            parts = _parts(message["content"])
            if parts:
                items.append({"role": "user", "content": parts})
        elif is_assistant(message):
            items.extend(_assistant_items(model, message))
        elif is_tool_result(message):
            items.append(_tool_output(message))
    return items


def _parts(content: Union[str, list[UserContent]]) -> list[ResponseInputContent]:
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    parts: list[ResponseInputContent] = []
    for block in content:
        if is_image(block):
            parts.append({"type": "input_image", "image_url": _data_url(block), "detail": "auto"})
        elif (block.get("text") or "").strip():
            parts.append({"type": "input_text", "text": block["text"]})
    return parts


def _data_url(block: ImageContent) -> str:
    return f"data:{block['mimeType']};base64,{block['data']}"


def _assistant_items(model: Model, message: AssistantMessage) -> list[ResponseInputItem]:
    own = same_origin(model, message)
    items: list[ResponseInputItem] = []
    for block in message.get("content") or []:
        if is_thinking(block):
            item = _reasoning_item(block) if own else None
            if item is not None:
                items.append(item)
        elif is_text(block) and (block.get("text") or "").strip():
            items.append(_output_message(block))
        elif is_tool_call(block):
            items.append(_function_call(block))
    return items


def _reasoning_item(block: ThinkingContent) -> ResponseReasoningItem | None:
    """The reasoning item kept in `thinkingSignature`, or None when there is none to replay."""
    try:
        item = json_wire.loads(block.get("thinkingSignature") or "")
    except ValueError:
        return None
    return item if isinstance(item, dict) and item.get("type") == "reasoning" else None


def _output_message(block: TextContent) -> EasyInputMessage | ResponseOutputMessage:
    signature = block.get("textSignature") or ""
    if not signature.startswith("msg_"):
        return {"role": "assistant", "content": block["text"]}
    content: list[ResponseOutputText] = [{"type": "output_text", "text": block["text"], "annotations": []}]
    return {"type": "message", "role": "assistant", "id": signature, "status": "completed", "content": content}


def _function_call(block: ToolCall) -> ResponseFunctionToolCall:
    call_id, _, item_id = str(block["id"]).partition("|")
    item: ResponseFunctionToolCall = {"type": "function_call", "call_id": call_id, "name": block["name"],
            "arguments": dumps(block.get("arguments") or {})}
    if item_id.startswith("fc_"):
        item["id"] = item_id
    return item


def _tool_output(message: ToolResultMessage) -> FunctionCallOutput:
    content = message.get("content") or []
    call_id = str(message["toolCallId"]).partition("|")[0]
    text = "\n".join(b.get("text", "") for b in content if is_text(b))
    if not any(is_image(b) for b in content):
        return {"type": "function_call_output", "call_id": call_id, "output": text}
    return {"type": "function_call_output", "call_id": call_id, "output": _parts(content)}


# ---- response ------------------------------------------------------------------------------------------


_OUTPUT_WORDS = BlockWords("output", "response.output_item.added", "response.output_item.done")
"""How errors name the API's blocks (`_common.open_block`)."""


class _Handler(SseHandler):
    """Turns Responses API events into stream events; an output item is one content block of ours."""

    def __init__(self, builder: MessageBuilder):
        self.builder = builder
        self._blocks: dict[int, int | None] = {}  # output_index → contentIndex (None: an item type we skip)
        self._streamed: set[int] = set()  # contentIndexes that received at least one delta
        self._summary_parts: dict[int, int] = {}  # contentIndex of a reasoning item → summary parts seen
        self._status: str | None = None
        self._incomplete: str | None = None
        self._saw_tool_call = False

    @property
    def finished(self) -> bool:
        return self._status is not None

    def handle(self, event: SSEEvent) -> Iterable[Event]:
        data = self.load(event.data, f"{event.event} event")
        kind = str(data.get("type") or event.event)
        method = getattr(self, "_on_" + kind.replace(".", "_"), None)
        return () if method is None else method(data)  # unknown: events newer than this module

    def end_of_stream(self) -> Iterable[Event]:
        if self._status is None:
            raise StreamProtocolError("Stream ended before response.completed")
        events = self.builder.end_all()
        raw = self._incomplete or self._status
        reason = INCOMPLETE_REASONS.get(self._incomplete, "length") if self._incomplete else "stop"
        if reason == "error":
            self.builder.message["rawStopReason"] = raw
            return [*events, self.builder.fail(f"The response was blocked (incomplete: {self._incomplete})")]
        if reason == "stop" and self._saw_tool_call:
            reason = "toolUse"
        return [*events, self.builder.done(reason, raw)]

    # -- response lifecycle

    def _on_response_created(self, data: ResponseLifecycleEvent) -> Iterable[Event]:
        response = fields.obj(data, "response", "response.created")
        if response_id := fields.text(response, "id", "response.created.response"):
            self.builder.message["responseId"] = response_id
        self.builder.note_response_model(response.get("model"))
        return ()

    def _on_response_completed(self, data: ResponseLifecycleEvent) -> Iterable[Event]:
        return self._terminal(data, "response.completed", "completed")

    def _on_response_incomplete(self, data: ResponseLifecycleEvent) -> Iterable[Event]:
        return self._terminal(data, "response.incomplete", "incomplete")

    def _on_response_failed(self, data: ResponseLifecycleEvent) -> Iterable[Event]:
        return self._terminal(data, "response.failed", "failed")

    def _terminal(self, data: ResponseLifecycleEvent, where: str, kind: str) -> Iterable[Event]:
        """The one mapping of a terminal event: its outcome is `kind`, except that `response.completed` goes
        by its `response.status` (a host may end every answer with it, even one cut off or failed).
        "failed" and "cancelled" raise `ApiStreamError`; "incomplete" records `incomplete_details.reason`."""
        response = fields.obj(data, "response", where)
        self.builder.note_response_model(response.get("model"))
        self._update_usage(response.get("usage"))
        status = kind if kind != "completed" else fields.text(response, "status", f"{where}.response") or kind
        if status in ("failed", "cancelled"):
            error = response.get("error") or {"message": f"response {status}", "response": response}
            raise ApiStreamError(stream_error_text(error))
        if status == "incomplete":
            details = fields.obj(response, "incomplete_details", f"{where}.response")
            self._incomplete = fields.text(details, "reason", f"{where}.response.incomplete_details") or "unknown"
        self._status = status
        return ()

    def _on_error(self, data: ResponseErrorEvent) -> Iterable[Event]:
        raise ApiStreamError(stream_error_text({k: v for k, v in data.items() if k != "sequence_number"}))

    # -- output items

    def _on_response_output_item_added(self, data: ResponseOutputItemEvent) -> Iterable[Event]:
        where = "response.output_item.added"
        item, position = fields.obj(data, "item", where), fields.index(data, "output_index", where)
        kind = fields.text(item, "type", f"{where}.item")
        if kind == "reasoning":
            index, event = self.builder.start_thinking()
            self._summary_parts[index] = 0
        elif kind == "message":
            index, event = self.builder.start_text()
        elif kind == "function_call":
            call_id = fields.text(item, "call_id", f"{where}.item") or new_local_id()
            item_id, name = fields.text(item, "id", f"{where}.item"), fields.text(item, "name", f"{where}.item")
            index, event = self.builder.start_tool_call(f"{call_id}|{item_id or ''}", name or "")
            self._saw_tool_call = True
        else:
            self._blocks[position] = None  # built-in tool calls and other item types we do not model
            return ()
        self._blocks[position] = index
        return [event]

    def _on_response_output_item_done(self, data: ResponseOutputItemEvent) -> Iterable[Event]:
        index = self._open_block(data)
        if index is None:
            return ()
        item, block = fields.obj(data, "item", "response.output_item.done"), self.builder.content[index]
        events = self._backfill(index, item)
        if block["type"] == "thinking":
            block["thinkingSignature"] = dumps(item)
            self.builder.count(len(block["thinkingSignature"]))
        elif block["type"] == "text" and (item_id := fields.text(item, "id", "response.output_item.done.item")):
            block["textSignature"] = item_id
        return [*events, *self.builder.finish(index)]

    def _backfill(self, index: int, item: OutputItem) -> list[Event]:
        """A delta with the item's full text when the API sent none while streaming (some hosts do not)."""
        if index in self._streamed:
            return []
        where = "response.output_item.done.item"
        kind = fields.text(item, "type", where)
        if kind == "function_call":
            text = fields.arguments(item, "arguments", where) or ""
            if isinstance(text, dict):  # the arguments decoded (some local servers): taken as they are
                block = self.builder.content[index]
                block["arguments"] = json_wire.scrub_in_place(text)  # type: ignore[typeddict-unknown-key]
                return []
        else:
            key = "summary" if kind == "reasoning" else "content"
            parts = fields.array(item, key, where)
            texts = [_part_text(fields.item(parts, n, f"{where}.{key}"), f"{where}.{key}[{n}]")
                     for n in range(len(parts))]
            text = ("\n\n" if kind == "reasoning" else "").join(texts)
        return [self.builder.delta(index, text)] if text else []

    # -- deltas

    def _on_response_reasoning_summary_part_added(self, data: ResponseOutputIndexEvent) -> Iterable[Event]:
        index = self._open_block(data)
        if index is None or self.builder.content[index]["type"] != "thinking":
            return ()
        self._summary_parts[index] = self._summary_parts.get(index, 0) + 1
        return self._text_delta(index, "\n\n") if self._summary_parts[index] > 1 else ()

    def _on_response_reasoning_summary_text_delta(self, data: ResponseTextDeltaEvent) -> Iterable[Event]:
        return self._delta(data, "response.reasoning_summary_text.delta")

    def _on_response_reasoning_text_delta(self, data: ResponseTextDeltaEvent) -> Iterable[Event]:
        return self._delta(data, "response.reasoning_text.delta")

    def _on_response_output_text_delta(self, data: ResponseTextDeltaEvent) -> Iterable[Event]:
        return self._delta(data, "response.output_text.delta")

    def _on_response_refusal_delta(self, data: ResponseTextDeltaEvent) -> Iterable[Event]:
        return self._delta(data, "response.refusal.delta")

    def _on_response_function_call_arguments_delta(self, data: ResponseTextDeltaEvent) -> Iterable[Event]:
        return self._delta(data, "response.function_call_arguments.delta")

    def _delta(self, data: ResponseTextDeltaEvent, where: str) -> list[Event]:
        return self._text_delta(self._open_block(data), fields.text(data, "delta", where))

    def _text_delta(self, index: int | None, chunk: str | None) -> list[Event]:
        if index is None or not chunk:
            return []
        self._streamed.add(index)
        return [self.builder.delta(index, chunk)]

    def _open_block(self, data: ResponseOutputIndexEvent) -> int | None:
        where = str(data.get("type") or "event")
        return open_block(self._blocks, fields.index(data, "output_index", where), self.builder, where, _OUTPUT_WORDS)

    def _update_usage(self, raw: ResponseUsage | None) -> None:
        if not isinstance(raw, dict):
            return
        usage = self.builder.message["usage"]
        cached = token_count((raw.get("input_tokens_details") or {}).get("cached_tokens"))
        usage["cacheRead"] = cached
        usage["input"] = max(0, token_count(raw.get("input_tokens")) - cached)
        usage["output"] = token_count(raw.get("output_tokens"))
        reasoning = token_count((raw.get("output_tokens_details") or {}).get("reasoning_tokens"))
        if reasoning:
            usage["reasoning"] = reasoning
        update_cost(self.builder.model, usage)


def _part_text(part: dict[str, Any], where: str) -> str:
    """The text of a message content part (`text`, or a refusal's `refusal`) or a reasoning summary part."""
    return fields.text(part, "text", where) or fields.text(part, "refusal", where) or ""
