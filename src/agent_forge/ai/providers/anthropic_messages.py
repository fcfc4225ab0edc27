"""The `anthropic-messages` wire API: Anthropic's streaming Messages endpoint (POST {baseUrl}/v1/messages).

Request and event formats: https://docs.anthropic.com/en/api/messages and
https://docs.anthropic.com/en/docs/build-with-claude/streaming.
"""

from __future__ import annotations

import re
from typing import AsyncIterator, Iterable, Union

from . import _fields as fields
from ._response_body import stream_error_text
from ..errors import ApiStreamError, StreamProtocolError
from ..options import StreamOptions
from ..sse import SSEEvent
from ..transform import same_origin, transform_messages
from ..types import (AssistantContent, AssistantMessage, AssistantMessageEvent, Context, JsonValue, Message, Model,
                     Tool, ToolResultMessage, UserContent, is_assistant, is_image, is_thinking, is_tool_call,
                     is_tool_result, is_user)
from ..usage import update_cost
from ._sse_exchange import stream_api
from ._common import (
    BlockWords,
    open_block,
    sse_post,
    HttpRequest,
    MessageBuilder,
    SseHandler,
    token_count,
    max_tokens,
    require_api_key,
    sampling_params,
)
from .anthropic_wire import (
    ApiUsage, AssistantBlockParam, Base64ImageSource, CacheControl, ContentBlockDeltaEvent, ContentBlockParam,
    ContentBlockStartEvent, ContentBlockStopEvent, ErrorEvent, MediaBlockParam, MessageDeltaEvent, MessageParam,
    MessageStartEvent, MessageStopEvent, ToolParam, ToolResultBlockParam,
)

API_VERSION = "2023-06-01"
THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 32000, "max": 32000}
"""Thinking levels → `thinking.budget_tokens` (the API's minimum budget is 1024)."""
MIN_BUDGET = 1024
ANSWER_ROOM = 4096  # output tokens left for the answer when max_tokens must be raised above the budget
STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",  # a server-tool loop paused: no server tools are requested here, so nothing resumes
    "max_tokens": "length",
    "model_context_window_exceeded": "length",  # cut off where the context window ran out
    "tool_use": "toolUse",
    "refusal": "error",
}
"""`stop_reason` → our stopReason, every value of https://platform.claude.com/docs/en/build-with-claude/
handling-stop-reasons; a value newer than this table ends the answer as "stop" (kept as `rawStopReason`)."""
SAMPLING_FIELDS = ("temperature", "top_p", "top_k")
"""models.json `samplingParams` keys sent to this API (https://docs.anthropic.com/en/api/messages)."""
_EPHEMERAL: CacheControl = {"type": "ephemeral"}
_TOOL_ID_BAD = re.compile(r"[^A-Za-z0-9_-]")
_DELTA_FIELD = {"text_delta": "text", "thinking_delta": "thinking", "input_json_delta": "partial_json"}
_USAGE_FIELDS = {
    "input_tokens": "input",
    "output_tokens": "output",
    "cache_read_input_tokens": "cacheRead",
    "cache_creation_input_tokens": "cacheWrite",
}


def stream(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
    """Stream one assistant message from the Messages API (see `ai.types` for the event shapes).

    Never raises after the first (`start`) event, except `CancelledError`, which it re-raises after
    closing the response and finalizing the message in place.
    """
    return stream_api(_Handler(MessageBuilder(model)), options, lambda: build_request(model, context, options))


# ---- request -------------------------------------------------------------------------------------------


def build_request(model: Model, context: Context, options: StreamOptions) -> HttpRequest:
    """URL, headers and JSON body of the request. Raises `MissingApiKeyError` when no key is given."""
    key = require_api_key(model, options)
    auth = {"anthropic-version": API_VERSION, **({"x-api-key": key} if key is not None else {})}
    return sse_post(model, options, messages_url(model["baseUrl"]), auth, build_body(model, context, options))


def messages_url(base_url: str) -> str:
    """`{baseUrl}/v1/messages`; a `baseUrl` that already ends in `/v1` (the OpenAI-style convention, common for
    proxies) gets `/messages` only, not a second `/v1`."""
    base = base_url.rstrip("/")
    return base + ("/messages" if base.endswith("/v1") else "/v1/messages")


def build_body(model: Model, context: Context, options: StreamOptions) -> dict[str, object]:
    """The Messages API request body (a JSON object: `model`, `max_tokens`, `stream`, `system`, `messages`,
    `tools`, `thinking`, sampling fields), with prompt-cache breakpoints and thinking parameters."""
    body: dict[str, object] = {"model": model["id"], "max_tokens": max_tokens(model, options), "stream": True}
    if context.get("systemPrompt"):
        body["system"] = [{"type": "text", "text": context["systemPrompt"], "cache_control": _EPHEMERAL}]
    messages = convert_messages(model, context["messages"])
    _mark_last_user_block(messages)
    body["messages"] = messages
    if context.get("tools"):
        body["tools"] = convert_tools(model, context["tools"])
    _apply_thinking(body, model, options)
    body.update(_sampling(sampling_params(model, options), thinking="thinking" in body))
    if options.temperature is not None and "thinking" not in body:
        body["temperature"] = options.temperature  # the API rejects temperature together with thinking
    return body


def _sampling(params: dict[str, JsonValue], *, thinking: bool) -> dict[str, JsonValue]:
    """The models.json `samplingParams` this API has: `temperature`, `top_p`, `top_k`; with thinking on, the API
    rejects `temperature` and `top_k`, so only `top_p` is sent. Other keys (`seed`, ...) have no field here."""
    keys = ("top_p",) if thinking else SAMPLING_FIELDS
    return {key: params[key] for key in keys if key in params}


def convert_tools(model: Model, tools: list[Tool]) -> list[ToolParam]:
    out: list[ToolParam] = [{"name": t["name"], "description": t["description"], "input_schema": t["parameters"]}
                            for t in tools]
    if (model.get("compat") or {}).get("supportsCacheControlOnTools", True):
        out[-1]["cache_control"] = _EPHEMERAL
    return out


def thinking_budget(model: Model, options: StreamOptions) -> tuple[int, int] | None:
    """(budget_tokens, max_tokens) for the request, or None when thinking is off or cannot fit.

    max_tokens must exceed the budget: it is raised to budget + ANSWER_ROOM (capped at the model's
    `maxTokens`), and when that is still too small the budget shrinks, never below MIN_BUDGET.
    """
    level = options.thinking_level
    if not model.get("reasoning") or level not in THINKING_BUDGETS:
        return None
    budget, limit = THINKING_BUDGETS[level], max_tokens(model, options)
    if limit <= budget:
        limit = max(limit, min(budget + ANSWER_ROOM, int(model["maxTokens"])))
    if limit <= budget:
        budget = max(MIN_BUDGET, limit - ANSWER_ROOM)
    return (budget, limit) if budget < limit else None


def _apply_thinking(body: dict[str, object], model: Model, options: StreamOptions) -> None:
    plan = thinking_budget(model, options)
    if plan is not None:
        body["thinking"] = {"type": "enabled", "budget_tokens": plan[0]}
        body["max_tokens"] = plan[1]


def _mark_last_user_block(messages: list[MessageParam]) -> None:
    for message in reversed(messages):
        if message["role"] == "user":
            message["content"][-1]["cache_control"] = _EPHEMERAL
            return


def convert_messages(model: Model, messages: list[Message]) -> list[MessageParam]:
    """Our messages → API messages, after `transform_messages` made them valid for `model`. Consecutive tool
    results become one user message; empty text blocks and messages left empty are dropped (the API rejects
    them)."""
    out: list[MessageParam] = []
    for message in transform_messages(model, messages):
        role = message.get("role")
        blocks: list[ContentBlockParam]
        if is_user(message):
            blocks = [*_user_blocks(message["content"])]
        elif is_assistant(message):
            blocks = [*_assistant_blocks(model, message)]
        elif is_tool_result(message):
            block = _tool_result_block(message)
            if out and out[-1]["role"] == "user" and out[-1]["content"][0]["type"] == "tool_result":
                out[-1]["content"].append(block)
                continue
            blocks = [block]
        else:
            continue
        if blocks:
            out.append({"role": "assistant" if role == "assistant" else "user", "content": blocks})
    return out


def _user_blocks(content: Union[str, list[UserContent]]) -> list[MediaBlockParam]:
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    return [b for b in (_media_block(block) for block in content) if b is not None]


def _media_block(block: UserContent) -> MediaBlockParam | None:
    """A user or tool-result block (images for a text-only model are notes already: `transform_messages`)."""
    if is_image(block):
        source: Base64ImageSource = {"type": "base64", "media_type": block["mimeType"], "data": block["data"]}
        return {"type": "image", "source": source}
    text = block.get("text") or ""
    return {"type": "text", "text": text} if text.strip() else None


def _assistant_blocks(model: Model, message: AssistantMessage) -> list[AssistantBlockParam]:
    replay_thinking = same_origin(model, message)
    blocks = [_assistant_block(block, replay_thinking) for block in message.get("content") or []]
    return [b for b in blocks if b is not None]


def _assistant_block(block: AssistantContent, replay_thinking: bool) -> AssistantBlockParam | None:
    if is_tool_call(block):
        return {"type": "tool_use", "id": tool_id(block["id"]), "name": block["name"], "input": block["arguments"]}
    if is_thinking(block):
        signature = block.get("thinkingSignature")
        if replay_thinking and signature and block.get("redacted"):
            return {"type": "redacted_thinking", "data": signature}
        if replay_thinking and signature:
            return {"type": "thinking", "thinking": block.get("thinking", ""), "signature": signature}
        if block.get("redacted"):
            return None
        text = block.get("thinking", "") or ""  # unsigned or foreign thinking: replay as plain text
    else:
        text = block.get("text") or ""
    return {"type": "text", "text": text} if text.strip() else None


def _tool_result_block(message: ToolResultMessage) -> ToolResultBlockParam:
    parts = [b for b in (_media_block(block) for block in message.get("content") or []) if b]
    block: ToolResultBlockParam = {"type": "tool_result", "tool_use_id": tool_id(message["toolCallId"])}
    if parts and all(p["type"] == "text" for p in parts):
        block["content"] = "\n".join(p["text"] for p in parts)
    elif parts:
        block["content"] = parts
    block["is_error"] = bool(message.get("isError"))
    return block


def tool_id(call_id: str) -> str:
    """A tool-call id the API accepts (`^[a-zA-Z0-9_-]{1,64}$`); ids from other APIs may contain `|` etc."""
    return _TOOL_ID_BAD.sub("_", call_id)[:64] or "tool"


# ---- response ------------------------------------------------------------------------------------------


_BLOCK_WORDS = BlockWords("content block", "content_block_start", "content_block_stop")
"""How errors name the API's blocks (`_common.open_block`)."""


class _Handler(SseHandler):
    """Turns Messages API SSE events into stream events, mapping the API's block `index` to ours."""

    def __init__(self, builder: MessageBuilder):
        self.builder = builder
        self._blocks: dict[int, int | None] = {}  # API index → our contentIndex (None: block type we skip)
        self._raw_stop: str | None = None
        self._stopped = False

    @property
    def finished(self) -> bool:
        return self._stopped

    def handle(self, event: SSEEvent) -> Iterable[AssistantMessageEvent]:
        if event.event == "message":  # no `event:` line (SSE's default name): the data's `type` names it
            data = self.load(event.data, "event without an event name")
            name = data.get("type")
            method = getattr(self, f"_on_{name}", None) if isinstance(name, str) else None
            return () if method is None else method(data)
        method = getattr(self, "_on_" + event.event, None)
        if method is None:
            return ()  # ping and event types newer than this module
        return method(self.load(event.data, f"{event.event} event"))

    def end_of_stream(self) -> Iterable[AssistantMessageEvent]:
        if not self._stopped:
            raise StreamProtocolError("Stream ended before message_stop")
        reason = STOP_REASONS.get(self._raw_stop or "end_turn", "stop")
        if self._raw_stop:
            self.builder.message["rawStopReason"] = self._raw_stop
        if reason == "error":
            return [self.builder.fail(f"The model declined to answer (stop_reason: {self._raw_stop})")]
        return [self.builder.done(reason, self._raw_stop)]

    def _on_message_start(self, data: MessageStartEvent) -> Iterable[AssistantMessageEvent]:
        message = fields.obj(data, "message", "message_start")
        if response_id := fields.text(message, "id", "message_start.message"):
            self.builder.message["responseId"] = response_id
        self.builder.note_response_model(message.get("model"))
        self._update_usage(message.get("usage"))
        return ()

    def _on_content_block_start(self, data: ContentBlockStartEvent) -> Iterable[AssistantMessageEvent]:
        where = "content_block_start.content_block"
        block = fields.obj(data, "content_block", "content_block_start")
        api_index, kind = fields.index(data, "index", "content_block_start"), fields.text(block, "type", where)
        if kind == "text":
            index, event = self.builder.start_text()
            text = fields.text(block, "text", where)
            events = [event] + ([self.builder.delta(index, text)] if text else [])
        elif kind == "thinking":
            index, event = self.builder.start_thinking()
            events = [event]
        elif kind == "redacted_thinking":
            signature = fields.text(block, "data", where) or ""
            index, event = self.builder.start_thinking(signature=signature, redacted=True)
            events = [event, self.builder.delta(index, "[redacted thinking]")]
        elif kind == "tool_use":
            call_id, name = fields.text(block, "id", where) or "", fields.text(block, "name", where) or ""
            arguments = fields.obj(block, "input", where)
            index, event = self.builder.start_tool_call(call_id, name, arguments=arguments)
            events = [event]
        else:
            index, events = None, []
        self._blocks[api_index] = index
        return events

    def _on_content_block_delta(self, data: ContentBlockDeltaEvent) -> Iterable[AssistantMessageEvent]:
        index = open_block(self._blocks, fields.index(data, "index", "content_block_delta"), self.builder,
                           "content_block_delta", _BLOCK_WORDS)
        if index is None:
            return ()
        delta = fields.obj(data, "delta", "content_block_delta")
        kind = fields.text(delta, "type", "content_block_delta.delta")
        if kind == "signature_delta":
            block = self.builder.content[index]
            signature = fields.text(delta, "signature", "content_block_delta.delta") or ""
            self.builder.count(len(signature))
            block["thinkingSignature"] = block.get("thinkingSignature", "") + signature
            return ()
        chunk = fields.text(delta, _DELTA_FIELD[kind], "content_block_delta.delta") if kind in _DELTA_FIELD else None
        return [self.builder.delta(index, chunk)] if chunk else ()

    def _on_content_block_stop(self, data: ContentBlockStopEvent) -> Iterable[AssistantMessageEvent]:
        index = self._blocks.get(fields.index(data, "index", "content_block_stop"))
        if index is None or not self.builder.is_open(index):
            return ()
        return self.builder.finish(index)

    def _on_message_delta(self, data: MessageDeltaEvent) -> Iterable[AssistantMessageEvent]:
        stop = fields.text(fields.obj(data, "delta", "message_delta"), "stop_reason", "message_delta.delta")
        if stop:
            self._raw_stop = stop
        self._update_usage(data.get("usage"))
        return ()

    def _on_message_stop(self, data: MessageStopEvent) -> Iterable[AssistantMessageEvent]:
        self._stopped = True
        return self.builder.end_all()

    def _on_error(self, data: ErrorEvent) -> Iterable[AssistantMessageEvent]:
        raise ApiStreamError(stream_error_text(data))

    def _update_usage(self, raw: ApiUsage | None) -> None:
        if not isinstance(raw, dict):
            return
        usage = self.builder.message["usage"]
        for api_key, ours in _USAGE_FIELDS.items():
            if isinstance(raw.get(api_key), int):  # a key left out keeps what message_start said
                usage[ours] = token_count(raw[api_key])  # type: ignore[literal-required]
        update_cost(self.builder.model, usage)
