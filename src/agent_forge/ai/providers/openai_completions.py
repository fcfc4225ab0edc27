"""The `openai-completions` wire API: streaming Chat Completions (POST {baseUrl}/chat/completions).

Also spoken by Ollama, vLLM, LM Studio, OpenRouter, Groq and others; their differences are `model["compat"]`
flags (see `Compat`). Formats: https://platform.openai.com/docs/api-reference/chat/create and
https://platform.openai.com/docs/api-reference/chat-streaming.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import AsyncIterator, Iterable, Union

from .. import json_wire
from . import _fields as fields
from ._response_body import stream_error_text
from ..errors import ApiStreamError, StreamProtocolError
from ..hosts import effective_compat
from ..options import StreamOptions
from ..sse import SSEEvent
from ..transform import transform_messages
from ..types import (AssistantMessage, AssistantMessageEvent, Context, Model, Tool, ToolCall, ToolResultMessage,
                     UserContent, is_assistant, is_image, is_text, is_tool_call, is_tool_result, is_user)
from ..usage import update_cost
from ._sse_exchange import stream_api
from ._common import (
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
from .openai_completions_wire import (ChatCompletionAssistantMessageParam, ChatCompletionChunk,
                                      ChatCompletionContentPart, ChatCompletionMessageParam,
                                      ChatCompletionMessageToolCallParam, ChatCompletionToolMessageParam,
                                      ChatCompletionToolParam, ChatCompletionUserMessageParam,
                                      CompletionUsage, Function,
                                      FunctionDefinition)

REASONING_EFFORT = {
    "minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": "high", "max": "high",
}
"""Thinking levels → `reasoning_effort`; xhigh/max become "xhigh" only with `compat.supportsXhighEffort`."""
STOP_REASONS = {
    "stop": "stop", "length": "length", "tool_calls": "toolUse", "function_call": "toolUse", "content_filter": "error",
    "model_length": "length", "error": "error", "insufficient_system_resource": "error",
}
"""`finish_reason` → our stopReason: OpenAI's values (https://platform.openai.com/docs/api-reference/chat/object,
`choices[].finish_reason`), then hosts' own: Mistral `model_length` (the model's context length ran out) and
`error` (https://docs.mistral.ai/api/, chat completion choices), OpenRouter `error`
(https://openrouter.ai/docs/api-reference/overview#finish-reason), DeepSeek `insufficient_system_resource`
(https://api-docs.deepseek.com/api/create-chat-completion). Other values end the answer as "stop"."""
FAILURES = {
    "content_filter": "The response was blocked",
    "error": "The host ended the answer with an error",
    "insufficient_system_resource": "The host ran out of resources mid-answer; try again later",
}
"""`errorMessage` text for each `finish_reason` that STOP_REASONS makes an error."""
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
"""Delta fields hosts use for reasoning text (DeepSeek/vLLM, OpenRouter/Ollama, others); first present wins."""
TOOL_IMAGES_NOTE = "Images returned by the tool call(s) above:"


@dataclass(frozen=True, slots=True)
class Compat:
    """`model["compat"]` flags of this API, with their defaults.

    `supportsDeveloperRole`: system prompt of reasoning models sent as role `developer` (default: only
    for api.openai.com). `maxTokensField`: "max_completion_tokens" or "max_tokens". `supportsReasoningEffort`,
    `supportsUsageInStreaming` (`stream_options.include_usage`), `supportsStore` (`store: false`):
    default true. `supportsXhighEffort`: send "xhigh" as is. `requiresToolResultName`: tool messages carry
    `name`. `requiresNonNullAssistantContent`: "" instead of null content beside tool calls.
    `thinkingFormat`: how reasoning is requested ("openai": `reasoning_effort`; "openrouter":
    `reasoning: {effort}`; "qwen": `enable_thinking`; "chat-template": `chat_template_kwargs.enable_thinking`).
    `promptCacheKeyMode`: "auto" (send `prompt_cache_key` = session id to api.openai.com only), "enabled",
    "disabled". Defaults come from the host (`ai.hosts`), overridden by `model["compat"]`.
    """

    developer_role: bool
    max_tokens_field: str = "max_completion_tokens"
    reasoning_effort: bool = True
    usage_in_streaming: bool = True
    store: bool = True
    xhigh_effort: bool = False
    tool_result_name: bool = False
    non_null_content: bool = False
    thinking_format: str = "openai"
    cache_key: bool = False

    @classmethod
    def of(cls, model: Model) -> Compat:
        raw = effective_compat(model)
        cache_mode = raw.get("promptCacheKeyMode", "auto")
        return cls(
            developer_role=raw.get("supportsDeveloperRole", "api.openai.com" in model.get("baseUrl", "")),
            max_tokens_field=raw.get("maxTokensField", "max_completion_tokens"),
            reasoning_effort=raw.get("supportsReasoningEffort", True),
            usage_in_streaming=raw.get("supportsUsageInStreaming", True),
            store=raw.get("supportsStore", True),
            xhigh_effort=raw.get("supportsXhighEffort", False),
            tool_result_name=raw.get("requiresToolResultName", False),
            non_null_content=raw.get("requiresNonNullAssistantContent", False),
            thinking_format=raw.get("thinkingFormat", "openai"),
            cache_key=cache_mode == "enabled"
            or (cache_mode == "auto" and "api.openai.com" in model.get("baseUrl", "")),
        )


def stream(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
    """Stream one assistant message from a Chat Completions endpoint (see `ai.types` for event shapes).

    Never raises after the first (`start`) event, except `CancelledError`, which it re-raises after
    closing the response and finalizing the message in place.
    """
    return stream_api(_Handler(MessageBuilder(model)), options, lambda: build_request(model, context, options))


# ---- request -------------------------------------------------------------------------------------------


def build_request(model: Model, context: Context, options: StreamOptions) -> HttpRequest:
    """URL, headers and JSON body. Raises `MissingApiKeyError` unless a key is given or not required."""
    key = require_api_key(model, options)
    auth = {"authorization": f"Bearer {key}"} if key is not None else {}
    url = model["baseUrl"].rstrip("/") + "/chat/completions"
    return sse_post(model, options, url, auth, build_body(model, context, options))


def build_body(model: Model, context: Context, options: StreamOptions) -> dict[str, object]:
    """The Chat Completions request body for `model`'s compat flags; models.json `samplingParams` are merged
    in at the top level (`merge_sampling`), below the request's own `temperature`."""
    compat = Compat.of(model)
    body: dict[str, object] = {"model": model["id"], "messages": convert_messages(model, context, compat)}
    body["stream"] = True
    if compat.usage_in_streaming:
        body["stream_options"] = {"include_usage": True}
    if compat.store:
        body["store"] = False
    body[compat.max_tokens_field] = max_tokens(model, options)
    if context.get("tools"):
        body["tools"] = [_tool(tool) for tool in context["tools"]]
    _apply_thinking(body, model, options, compat)
    if compat.cache_key and options.session_id:
        body["prompt_cache_key"] = options.session_id
    merge_sampling(body, sampling_params(model, options))
    if options.temperature is not None:
        body["temperature"] = options.temperature
    return body


def reasoning_effort(model: Model, options: StreamOptions, compat: Compat) -> str | None:
    """The effort value for the thinking level: the model's `thinkingLevelMap` entry when it has one (null:
    none), else `REASONING_EFFORT`; None when thinking is off or the model or host takes no effort."""
    level = options.thinking_level
    mapping = model.get("thinkingLevelMap") or {}
    if not (model.get("reasoning") and compat.reasoning_effort):
        return None
    if level in mapping:
        return None if mapping[level] is None else str(mapping[level])
    if level not in REASONING_EFFORT:
        return None
    return "xhigh" if compat.xhigh_effort and level in ("xhigh", "max") else REASONING_EFFORT[level]


def _apply_thinking(body: dict[str, object], model: Model, options: StreamOptions, compat: Compat) -> None:
    """Reasoning request fields in the host's `thinkingFormat`."""
    if not model.get("reasoning"):
        return
    effort = reasoning_effort(model, options, compat)
    if compat.thinking_format == "qwen":
        body["enable_thinking"] = options.thinking_level != "off"
    elif compat.thinking_format == "chat-template":
        body["chat_template_kwargs"] = {"enable_thinking": options.thinking_level != "off"}
    elif effort and compat.thinking_format == "openrouter":
        body["reasoning"] = {"effort": effort}
    elif effort:
        body["reasoning_effort"] = effort


def _tool(tool: Tool) -> ChatCompletionToolParam:
    function: FunctionDefinition = {"name": tool["name"], "description": tool["description"],
                                    "parameters": tool["parameters"]}
    return {"type": "function", "function": function}


def convert_messages(model: Model, context: Context, compat: Compat) -> list[ChatCompletionMessageParam]:
    """Our context → API messages. Thinking blocks are not sent back; images from a run of tool results
    follow it as one user message (tool messages carry text only)."""
    out: list[ChatCompletionMessageParam] = []
    if context.get("systemPrompt"):
        role = "developer" if model.get("reasoning") and compat.developer_role else "system"
        out.append({"role": role, "content": context["systemPrompt"]})
    pending_images: list[ChatCompletionContentPart] = []
    for message in transform_messages(model, context["messages"]):
        role = message.get("role")
        if role != "toolResult" and pending_images:
            out.append(_images_message(pending_images))
            pending_images = []
        if is_user(message):
            out.append({"role": "user", "content": _user_content(message["content"])})
        elif is_assistant(message):
            out.extend(_assistant(message, compat))
        elif is_tool_result(message):
            out.append(_tool_message(message, compat))
            pending_images.extend(_image_parts(message.get("content") or []))
    if pending_images:
        out.append(_images_message(pending_images))
    return out


def _user_content(content: Union[str, list[UserContent]]) -> Union[str, list[ChatCompletionContentPart]]:
    if isinstance(content, str):
        return content
    return [_part(block) for block in content]


def _part(block: UserContent) -> ChatCompletionContentPart:
    """A user content part (images for a text-only model are notes already: `transform_messages`)."""
    if not is_image(block):
        return {"type": "text", "text": block.get("text", "")}
    return {"type": "image_url", "image_url": {"url": f"data:{block['mimeType']};base64,{block['data']}"}}


def _image_parts(content: list[UserContent]) -> list[ChatCompletionContentPart]:
    return [_part(block) for block in content if block.get("type") == "image"]


def _images_message(parts: list[ChatCompletionContentPart]) -> ChatCompletionUserMessageParam:
    return {"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES_NOTE}, *parts]}


def _assistant(message: AssistantMessage, compat: Compat) -> list[ChatCompletionAssistantMessageParam]:
    """Zero or one API message: text blocks joined, tool calls as `tool_calls`; thinking dropped."""
    blocks = message.get("content") or []
    text = "".join(b.get("text", "") for b in blocks if is_text(b))
    calls = [_tool_call(b) for b in blocks if is_tool_call(b)]
    if not text and not calls:
        return []
    out: ChatCompletionAssistantMessageParam = {"role": "assistant",
                                                "content": text or ("" if compat.non_null_content else None)}
    if calls:
        out["tool_calls"] = calls
    return [out]


def _tool_call(block: ToolCall) -> ChatCompletionMessageToolCallParam:
    function: Function = {"name": block["name"], "arguments": dumps(block.get("arguments") or {})}
    return {"id": block["id"], "type": "function", "function": function}


def _tool_message(message: ToolResultMessage, compat: Compat) -> ChatCompletionToolMessageParam:
    content = message.get("content") or []
    text = "\n".join(b.get("text", "") for b in content if is_text(b))
    if not text and any(is_image(b) for b in content):
        text = "(image attached below)"
    out: ChatCompletionToolMessageParam = {"role": "tool", "tool_call_id": message["toolCallId"], "content": text}
    if compat.tool_result_name:
        out["name"] = message.get("toolName", "")
    return out


# ---- response ------------------------------------------------------------------------------------------


class _Handler(SseHandler):
    """Turns chunk objects into stream events. At most one text or thinking block is open at a time; tool calls
    are open side by side, one per `tool_calls[].index`, because the format keys argument pieces by `index`
    and a server may interleave them (a0, b0, a1, b1): each piece extends its own call. Their deltas carry
    their own `contentIndex`, as the Responses API's interleaved items do, so every call still streams; all
    open calls end when the text resumes or the stream ends."""

    def __init__(self, builder: MessageBuilder):
        self.builder = builder
        self._open: tuple[str, int] | None = None  # the open text or thinking block: (kind, contentIndex)
        self._calls: dict[int, int] = {}  # tool_calls[].index -> contentIndex of its open call
        self._raw_stop: str | None = None
        self._saw_tool_call = False
        self._done = False

    @property
    def finished(self) -> bool:
        return self._done

    def handle(self, event: SSEEvent) -> Iterable[AssistantMessageEvent]:
        if event.data[:1] != "{" and event.data.strip() == "[DONE]":  # a chunk object starts with "{"
            self._done = True
            return self._close()
        chunk: ChatCompletionChunk = self.load(event.data, "stream chunk")  # type: ignore[assignment]
        if chunk.get("error"):
            raise ApiStreamError(stream_error_text(chunk["error"]))
        response_id = fields.text(chunk, "id", "")
        if response_id and "responseId" not in self.builder.message:
            self.builder.message["responseId"] = response_id
        self.builder.note_response_model(chunk.get("model"))
        self._update_usage(chunk.get("usage"))
        choices = fields.array(chunk, "choices", "")
        return self._choice(fields.item(choices, 0, "choices")) if choices else ()

    def end_of_stream(self) -> Iterable[AssistantMessageEvent]:
        if self._raw_stop is None and not self._done:
            raise StreamProtocolError("Stream ended before a finish_reason")
        if self._raw_stop is None and not self.builder.content:
            # Some hosts omit finish_reason before [DONE]; with no content either, nothing was answered.
            raise StreamProtocolError("The stream sent [DONE] with no content and no finish_reason")
        events = self._close()
        if self._raw_stop is not None:
            self.builder.message["rawStopReason"] = self._raw_stop
        reason = STOP_REASONS.get(self._raw_stop or "stop", "stop")
        if reason == "error":
            text = FAILURES.get(self._raw_stop or "", "The answer ended abnormally")
            return [*events, self.builder.fail(f"{text} (finish_reason: {self._raw_stop})")]
        if reason == "stop" and self._saw_tool_call:
            reason = "toolUse"  # some hosts say "stop" after tool calls; the calls must still run
        return [*events, self.builder.done(reason, self._raw_stop)]

    def _choice(self, choice: dict) -> list[AssistantMessageEvent]:
        delta, events = fields.obj(choice, "delta", "choices[0]"), []
        reasoning = None
        for key in REASONING_FIELDS:  # a loop, not a generator: this runs for every delta of an answer
            if key in delta and (reasoning := fields.text(delta, key, "choices[0].delta")):
                break
        if reasoning:
            events += self._text("thinking", reasoning)
        if content := fields.text(delta, "content", "choices[0].delta"):
            events += self._text("text", content)
        calls = fields.array(delta, "tool_calls", "choices[0].delta")
        for position in range(len(calls)):
            events += self._tool_call(fields.item(calls, position, "choices[0].delta.tool_calls"), position)
        if finish := fields.text(choice, "finish_reason", "choices[0]"):
            self._raw_stop = finish
        return events

    def _text(self, kind: str, chunk: str) -> list[AssistantMessageEvent]:
        if self._open is not None and self._open[0] == kind:  # a delta of the open block: most chunks
            return [self.builder.delta(self._open[1], chunk)]
        events = self._close()
        index, start = self.builder.start_text() if kind == "text" else self.builder.start_thinking()
        self._open = (kind, index)
        return [*events, start, self.builder.delta(index, chunk)]

    def _tool_call(self, call: dict, position: int) -> list[AssistantMessageEvent]:
        """One `tool_calls` item, added to the call open under its `index` (a new call for a new index, or for
        a different id under the same index); `arguments` sent as an object (some local servers) is taken as
        the arguments."""
        path = f"choices[0].delta.tool_calls[{position}]"
        tool_index = fields.index(call, "index", path)
        tool_index = position if tool_index is None else tool_index
        call_id, function = fields.text(call, "id", path), fields.obj(call, "function", path)
        name = fields.text(function, "name", f"{path}.function")
        arguments = fields.arguments(function, "arguments", f"{path}.function")
        events: list[AssistantMessageEvent] = []
        if tool_index not in self._calls or self._new_id(tool_index, call_id):
            events += self._start_call(tool_index, call_id, name)
        index = self._calls[tool_index]
        if isinstance(arguments, dict):
            block = self.builder.content[index]
            block["arguments"] = json_wire.scrub_in_place(arguments)  # type: ignore[typeddict-unknown-key]
        elif arguments:
            events.append(self.builder.delta(index, arguments))
        return events

    def _start_call(self, tool_index: int, call_id: str | None, name: str | None) -> list[AssistantMessageEvent]:
        """Open a call under `tool_index`, after closing the open text or thinking block and any call that
        index had (a host reusing index 0 for its next call)."""
        events = self._close_text()
        if tool_index in self._calls:
            events += self.builder.finish(self._calls.pop(tool_index))
        index, start = self.builder.start_tool_call(call_id or new_local_id(), name or "")
        self._calls[tool_index], self._saw_tool_call = index, True
        return [*events, start]

    def _new_id(self, tool_index: int, call_id: str | None) -> bool:
        """A different id under an open call's index starts another call (some hosts reuse index 0)."""
        if not call_id:
            return False
        return call_id != self.builder.content[self._calls[tool_index]]["id"]  # type: ignore[typeddict-item]

    def _close(self) -> list[AssistantMessageEvent]:
        """End the open text or thinking block and every open call, in contentIndex order."""
        events = self._close_text()
        for index in sorted(self._calls.values()):
            events += self.builder.finish(index)
        self._calls.clear()
        return events

    def _close_text(self) -> list[AssistantMessageEvent]:
        if self._open is None:
            return []
        index, self._open = self._open[1], None
        return self.builder.finish(index)

    def _update_usage(self, raw: CompletionUsage | None) -> None:
        if not isinstance(raw, dict):
            return
        usage = self.builder.message["usage"]
        details = raw.get("prompt_tokens_details") or {}
        cached = token_count(details.get("cached_tokens"))
        written = token_count(details.get("cache_write_tokens"))  # cache writes, as OpenRouter reports them
        usage["cacheRead"], usage["cacheWrite"] = cached, written
        usage["input"] = max(0, token_count(raw.get("prompt_tokens")) - cached - written)
        usage["output"] = token_count(raw.get("completion_tokens"))
        reasoning = token_count((raw.get("completion_tokens_details") or {}).get("reasoning_tokens"))
        if reasoning:
            usage["reasoning"] = reasoning
        update_cost(self.builder.model, usage)
