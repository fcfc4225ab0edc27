"""The `google-generative-ai` wire API: Gemini's streamed generateContent
(POST {baseUrl}/models/{model}:streamGenerateContent?alt=sse).

Formats: https://ai.google.dev/api/generate-content (request, `GenerateContentResponse` chunks, finish
reasons, `usageMetadata`) and https://ai.google.dev/gemini-api/docs/thinking (thought parts, thought
signatures, thinking budgets and levels). Each SSE event is one response chunk; the stream has no terminal
event, so a chunk with a `finishReason` is what marks a complete answer.

Gemini attaches opaque `thoughtSignature`s to parts; they are kept (thinking: `thinkingSignature`, text:
`textSignature`, calls: `thoughtSignature`) and replayed only to the same model. Function calls arrive whole,
so a call's arguments come as a single `toolcall_delta`.

A `functionCall.id` the server gave is kept as the call's id and sent back, in the call and in the
`functionResponse` that answers it (the API reference: it "must be sent back in the associated
FunctionResponse"); a call without one gets a local id (`new_local_id`), which never goes on the wire.
"""

from __future__ import annotations

import re
from typing import Any, AsyncIterator, Iterable, Literal, Union
from urllib.parse import quote

from . import _fields as fields
from ._response_body import stream_error_text
from ..errors import ApiStreamError, StreamProtocolError
from ..options import StreamOptions
from ..sse import SSEEvent
from ..transform import same_origin, transform_messages
from ..types import (AssistantMessage, AssistantMessageEvent, Context, Message, Model, Tool, ToolResultMessage,
                     UserContent, is_assistant, is_image, is_text, is_thinking, is_tool_call, is_tool_result,
                     is_user)
from ..usage import update_cost
from ._sse_exchange import stream_api
from ._common import (
    sse_post,
    new_local_id,
    is_local_id,
    HttpRequest,
    MessageBuilder,
    SseHandler,
    dumps,
    max_tokens,
    require_api_key,
    sampling_params,
    token_count,
)
from .google_wire import (Blob, Content, FunctionCall, FunctionDeclaration, FunctionResponse,
                          GenerateContentResponse, Part, ThinkingConfig, UsageMetadata)

THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 24576, "xhigh": 32768, "max": 32768}
"""Thinking levels → `thinkingConfig.thinkingBudget` tokens; a model's `thinkingLevelMap` overrides (an int is a
budget, a string a Gemini 3 `thinkingLevel`)."""
FOREIGN_CALL_SIGNATURE = "skip_thought_signature_validator"
"""Gemini 3 requires a signature on every function call of the current turn; for calls another model made,
the Gemini API docs ("Thought signatures", FAQ) give this value to skip the check."""
GENERATION_FIELDS = {
    "temperature": "temperature", "top_p": "topP", "topP": "topP", "top_k": "topK", "topK": "topK", "seed": "seed",
    "presence_penalty": "presencePenalty", "presencePenalty": "presencePenalty",
    "frequency_penalty": "frequencyPenalty", "frequencyPenalty": "frequencyPenalty",
    "stop": "stopSequences", "stopSequences": "stopSequences",
}
"""models.json `samplingParams` keys (OpenAI spelling or Gemini's own) → `generationConfig` fields
(https://ai.google.dev/api/generate-content#generationconfig); other keys have no field in this API."""
FINISH_MESSAGES = {
    "SAFETY": "The response was blocked for safety",
    "RECITATION": "The response was blocked for recitation",
    "LANGUAGE": "The response was blocked: it used an unsupported language",
    "BLOCKLIST": "The response was blocked: it contained forbidden terms",
    "PROHIBITED_CONTENT": "The response was blocked for prohibited content",
    "SPII": "The response was blocked: it may contain sensitive personal information",
    "IMAGE_SAFETY": "The image generation was blocked for safety",
    "IMAGE_PROHIBITED_CONTENT": "The image generation was blocked for prohibited content",
    "IMAGE_RECITATION": "The image generation was blocked for recitation",
    "IMAGE_OTHER": "The image generation stopped for another reason",
    "NO_IMAGE": "The model was expected to generate an image but made none",
    "MALFORMED_FUNCTION_CALL": "The model produced a malformed function call",
    "UNEXPECTED_TOOL_CALL": "The model called a tool it was not offered",
    "TOO_MANY_TOOL_CALLS": "The model made too many tool calls in a row",
    "MISSING_THOUGHT_SIGNATURE": "The request lacked a thought signature the model needs",
    "MALFORMED_RESPONSE": "The model produced a malformed response",
    "OTHER": "The response stopped for an unspecified reason",
}
"""`errorMessage` text for each `finishReason` that is a failure (every value of
https://ai.google.dev/api/generate-content#FinishReason but STOP, FINISH_REASON_UNSPECIFIED and MAX_TOKENS);
a value newer than this table fails as "The response ended abnormally"."""

_GEMINI_GENERATION = re.compile(r"gemini-(\d+)")

Event = AssistantMessageEvent


def stream(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[Event]:
    """Stream one assistant message from the Gemini API (see `ai.types` for the event shapes).

    Never raises after the first (`start`) event, except `CancelledError`, which it re-raises after
    closing the response and finalizing the message in place.
    """
    return stream_api(_Handler(MessageBuilder(model)), options, lambda: build_request(model, context, options))


# ---- request -------------------------------------------------------------------------------------------


def build_request(model: Model, context: Context, options: StreamOptions) -> HttpRequest:
    """URL, headers (`x-goog-api-key`) and JSON body. Raises `MissingApiKeyError` when no key is given."""
    key = require_api_key(model, options)
    auth = {"x-goog-api-key": key} if key is not None else {}
    model_path = quote(model["id"], safe="-._~/")
    url = f"{model['baseUrl'].rstrip('/')}/models/{model_path}:streamGenerateContent?alt=sse"
    return sse_post(model, options, url, auth, build_body(model, context, options))


def build_body(model: Model, context: Context, options: StreamOptions) -> dict[str, object]:
    """The `GenerateContentRequest` body: `contents`, `systemInstruction`, `tools`, `generationConfig`."""
    body: dict[str, object] = {"contents": convert_contents(model, context["messages"])}
    if context.get("systemPrompt"):
        body["systemInstruction"] = {"parts": [{"text": context["systemPrompt"]}]}
    if context.get("tools"):
        body["tools"] = [{"functionDeclarations": [_declaration(tool) for tool in context["tools"]]}]
    config: dict[str, object] = {"maxOutputTokens": max_tokens(model, options)}
    params = sampling_params(model, options)
    config.update({GENERATION_FIELDS[key]: value for key, value in params.items() if key in GENERATION_FIELDS})
    if isinstance(config.get("stopSequences"), str):
        config["stopSequences"] = [config["stopSequences"]]  # OpenAI's `stop` may be one string
    if options.temperature is not None:
        config["temperature"] = options.temperature
    thinking = thinking_config(model, options)
    if thinking is not None:
        config["thinkingConfig"] = thinking
    body["generationConfig"] = config
    return body


def thinking_config(model: Model, options: StreamOptions) -> ThinkingConfig | None:
    """`thinkingConfig` for a reasoning model, or None (the model's default).

    The value is the model's `thinkingLevelMap[level]` when present (null: no config), else
    `THINKING_BUDGETS[level]`; level "off" without a mapping sends no config. Thoughts are requested
    (`includeThoughts`) unless the level is "off" or the budget is 0.
    """
    if not model.get("reasoning"):
        return None
    level, mapping = options.thinking_level, model.get("thinkingLevelMap") or {}
    value = mapping[level] if level in mapping else THINKING_BUDGETS.get(level)
    if value is None:
        return None
    config: ThinkingConfig = {"thinkingLevel": value} if isinstance(value, str) else {"thinkingBudget": int(value)}
    if level != "off" and value != 0:
        config["includeThoughts"] = True
    return config


def _declaration(tool: Tool) -> FunctionDeclaration:
    # `parametersJsonSchema` takes full JSON Schema; the older `parameters` accepts only an OpenAPI subset.
    return {"name": tool["name"], "description": tool["description"], "parametersJsonSchema": tool["parameters"]}


def convert_contents(model: Model, messages: list[Message]) -> list[Content]:
    """Our messages → `contents`, after `transform_messages` made them valid for `model`. Consecutive
    contents of one role are merged (tool results and the user text after them form one user turn)."""
    contents: list[Content] = []
    sent_ids: set[str] = set()  # ids of the calls sent with one: their responses carry it too
    for message in transform_messages(model, messages):
        api_role: Literal["user", "model"]
        if is_user(message):
            parts, api_role = _user_parts(message["content"]), "user"
        elif is_assistant(message):
            parts, api_role = _model_parts(model, message, sent_ids), "model"
        elif is_tool_result(message):
            parts, api_role = _tool_result_parts(model, message, sent_ids), "user"
        else:
            continue
        if not parts:
            continue
        if contents and contents[-1]["role"] == api_role:
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": api_role, "parts": parts})
    return contents


def _user_parts(content: Union[str, list[UserContent]]) -> list[Part]:
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    parts: list[Part] = []
    for block in content:
        if is_image(block):
            parts.append({"inlineData": {"mimeType": block["mimeType"], "data": block["data"]}})
        elif (block.get("text") or "").strip():
            parts.append({"text": block["text"]})
    return parts


def _model_parts(model: Model, message: AssistantMessage, sent_ids: set[str]) -> list[Part]:
    """`sent_ids` gains the id of each call sent with one: an id this model's server gave (another model's
    ids, and local ones, mean nothing to it)."""
    own = same_origin(model, message)
    parts: list[Part] = []
    for block in message.get("content") or []:
        if is_thinking(block) and block.get("thinkingSignature"):
            parts.append({"text": block.get("thinking", ""), "thought": True,
                          "thoughtSignature": block["thinkingSignature"]})
        elif is_text(block) and (block.get("text") or "").strip():
            parts.append(_signed({"text": block["text"]}, block.get("textSignature")))
        elif is_tool_call(block):
            function: FunctionCall = {"name": block["name"], "args": block.get("arguments") or {}}
            if own and isinstance(block.get("id"), str) and not is_local_id(block["id"]):
                function["id"] = block["id"]
                sent_ids.add(block["id"])
            call: Part = {"functionCall": function}
            parts.append(_signed(call, block.get("thoughtSignature") or _foreign_signature(model, own)))
    return parts  # unsigned thinking of our own is not replayed: Gemini only reads signed thoughts


def _signed(part: Part, signature: str | None) -> Part:
    if signature:
        part["thoughtSignature"] = signature
    return part


def _foreign_signature(model: Model, own: bool) -> str | None:
    return FOREIGN_CALL_SIGNATURE if not own and gemini_generation(model) >= 3 else None


def gemini_generation(model: Model) -> int:
    """The major version of a `gemini-<N>...` model id (`gemini-3.1-pro` → 3), 0 for any other id."""
    match = _GEMINI_GENERATION.match(model["id"])
    return int(match[1]) if match else 0


def _tool_result_parts(model: Model, message: ToolResultMessage, sent_ids: set[str]) -> list[Part]:
    """One `functionResponse`; a result's images go in its `parts` (FunctionResponsePart) for Gemini 3 and
    later, which take multimodal function responses (and, per Google's gemini-cli, reject images sent beside
    one), else as `inlineData` parts after it, as earlier models read them."""
    content = message.get("content") or []
    text = "\n".join(b.get("text", "") for b in content if is_text(b))
    key = "error" if message.get("isError") else "output"
    response: FunctionResponse = {"name": message.get("toolName") or "", "response": {key: text}}
    if message.get("toolCallId") in sent_ids:
        response["id"] = message["toolCallId"]
    images: list[Blob] = [{"mimeType": b["mimeType"], "data": b["data"]} for b in content if is_image(b)]
    if images and gemini_generation(model) >= 3:
        response["parts"] = [{"inlineData": image} for image in images]
        return [{"functionResponse": response}]
    return [{"functionResponse": response}, *({"inlineData": image} for image in images)]


# ---- response ------------------------------------------------------------------------------------------


class _Handler(SseHandler):
    """Turns response chunks into stream events; text and thought parts extend the open block of their
    kind, each function call is a whole block."""

    def __init__(self, builder: MessageBuilder):
        self.builder = builder
        self._open: tuple[str, int] | None = None  # ("text" | "thinking", contentIndex)
        self._finish: str | None = None
        self._saw_tool_call = False

    @property
    def finished(self) -> bool:
        """Gemini has no terminal event: the chunk with a `finishReason` (its usage comes in it) is the last
        read, so a server that keeps the connection open, or sends more, does not hold or change the answer."""
        return self._finish is not None

    def handle(self, event: SSEEvent) -> Iterable[Event]:
        chunk: GenerateContentResponse = self.load(event.data, "stream chunk")  # type: ignore[assignment]
        if chunk.get("error"):
            raise ApiStreamError(stream_error_text(chunk["error"]))
        response_id = fields.text(chunk, "responseId", "")
        if response_id and "responseId" not in self.builder.message:
            self.builder.message["responseId"] = response_id
        self.builder.note_response_model(chunk.get("modelVersion"))
        self._update_usage(chunk.get("usageMetadata"))
        blocked = fields.obj(chunk, "promptFeedback", "").get("blockReason")
        if blocked:
            raise ApiStreamError(stream_error_text({"message": f"The prompt was blocked (blockReason: {blocked})"}))
        candidates = fields.array(chunk, "candidates", "")
        return self._candidate(fields.item(candidates, 0, "candidates")) if candidates else ()

    def end_of_stream(self) -> Iterable[Event]:
        if self._finish is None:
            raise StreamProtocolError("Stream ended before a finishReason")
        events = self._close()
        raw = self._finish
        if raw in ("STOP", "FINISH_REASON_UNSPECIFIED"):
            return [*events, self.builder.done("toolUse" if self._saw_tool_call else "stop", raw)]
        if raw == "MAX_TOKENS":
            return [*events, self.builder.done("length", raw)]
        self.builder.message["rawStopReason"] = raw
        text = FINISH_MESSAGES.get(raw, "The response ended abnormally")
        return [*events, self.builder.fail(f"{text} (finishReason: {raw})")]

    def _candidate(self, candidate: dict[str, Any]) -> list[Event]:
        events: list[Event] = []
        parts = fields.array(fields.obj(candidate, "content", "candidates[0]"), "parts", "candidates[0].content")
        for position in range(len(parts)):
            events += self._part(fields.item(parts, position, "candidates[0].content.parts"),
                                 f"candidates[0].content.parts[{position}]")
        if finish := fields.text(candidate, "finishReason", "candidates[0]"):
            self._finish = finish
        return events

    def _part(self, part: dict[str, Any], where: str) -> list[Event]:
        signature = fields.text(part, "thoughtSignature", where)
        if part.get("functionCall") is not None:
            return self._function_call(fields.obj(part, "functionCall", where), signature, f"{where}.functionCall")
        text = fields.text(part, "text", where)
        if text is not None:
            kind = "thinking" if part.get("thought") else "text"
            # An empty part (often just carrying a signature, or closing the stream) opens no block.
            events = self._text(kind, text) if text or self._is_open(kind) else []
            if signature:
                self.builder.count(len(signature))
                self._sign(signature)
            return events
        return []  # inline data, executable code and other part kinds we do not model

    def _is_open(self, kind: str) -> bool:
        return self._open is not None and self._open[0] == kind

    def _sign(self, signature: str) -> None:
        """Attach a signature to the open text or thinking block, else to the last such block."""
        index = self._open[1] if self._open is not None else len(self.builder.content) - 1
        block = self.builder.content[index] if index >= 0 else {}
        key = {"thinking": "thinkingSignature", "text": "textSignature"}.get(block.get("type", ""))
        if key:
            block[key] = signature

    def _text(self, kind: str, text: str) -> list[Event]:
        events: list[Event] = []
        if self._open is None or self._open[0] != kind:
            events += self._close()
            index, start = self.builder.start_text() if kind == "text" else self.builder.start_thinking()
            self._open = (kind, index)
            events.append(start)
        if text:
            events.append(self.builder.delta(self._open[1], text))
        return events

    def _function_call(self, call: dict[str, Any], signature: str | None, where: str) -> list[Event]:
        """A `functionCall` part. `args` sent as a JSON text instead of an object (some compatible hosts) is
        streamed as that text and parsed when the block ends, as every API's are: text that is not an object
        gives the call an `argumentsError`, reported to the model, and the rest of the answer goes on."""
        events = self._close()
        call_id = fields.text(call, "id", where) or new_local_id()
        name, args = fields.text(call, "name", where) or "", fields.arguments(call, "args", where) or {}
        text = args if isinstance(args, str) else dumps(args)
        index, start = self.builder.start_tool_call(call_id, name)  # the delta below carries `args` (counted once)
        if signature:
            self.builder.count(len(signature))
            self.builder.content[index]["thoughtSignature"] = signature
        self._saw_tool_call = True
        return [*events, start, self.builder.delta(index, text), *self.builder.finish(index)]

    def _close(self) -> list[Event]:
        if self._open is None:
            return []
        index, self._open = self._open[1], None
        return self.builder.finish(index)

    def _update_usage(self, raw: UsageMetadata | None) -> None:
        if not isinstance(raw, dict):
            return
        usage = self.builder.message["usage"]
        cached = token_count(raw.get("cachedContentTokenCount"))
        thoughts = token_count(raw.get("thoughtsTokenCount"))
        usage["cacheRead"] = cached
        usage["input"] = max(0, token_count(raw.get("promptTokenCount")) - cached)
        usage["output"] = token_count(raw.get("candidatesTokenCount")) + thoughts
        if thoughts:
            usage["reasoning"] = thoughts
        update_cost(self.builder.model, usage)
