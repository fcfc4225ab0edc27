"""Machinery shared by provider modules: the in-place message builder, the provider contract (`guarded`) and
request helpers (the HTTP/SSE stream driver is `_sse_exchange`)."""

from __future__ import annotations

import re
import time
import uuid
from contextlib import aclosing
from dataclasses import dataclass
from typing import AsyncIterator, Iterable

from .. import json_wire
from ..errors import AIError, MissingApiKeyError, StreamProtocolError
from ..options import StreamOptions
from ..partial_json import parse_partial_json
from ..redaction import redact, secret_values
from ..sse import SSEEvent, check_message_size
from ..types import AssistantContent, AssistantMessage, AssistantMessageEvent, JsonValue, Model, ThinkingContent
from ..usage import empty_usage
from . import _fields as fields

Event = AssistantMessageEvent
_DELTA = {"text": "text_delta", "thinking": "thinking_delta", "toolCall": "toolcall_delta"}


def now_ms() -> int:
    return int(time.time() * 1000)


def dumps(value: object) -> str:
    """Compact JSON, UTF-8 kept as is (DESIGN.md: stdlib json, compact separators), never `NaN`."""
    return json_wire.dumps(value)


def new_message(model: Model) -> AssistantMessage:
    """A fresh `pending` assistant message for `model`."""
    return {
        "role": "assistant",
        "content": [],
        "api": model["api"],
        "provider": model["provider"],
        "model": model["id"],
        "usage": empty_usage(),
        "stopReason": "pending",
        "timestamp": now_ms(),
    }


def parse_tool_arguments(raw: str) -> tuple[dict[str, JsonValue], str | None]:
    """Strictly parse a completed tool call's argument JSON: (arguments, None) or ({}, error text)."""
    if not raw.strip():
        return {}, None
    try:
        value = json_wire.loads(raw)
    except (ValueError, RecursionError) as exc:
        return {}, f"{json_wire.problem(exc)}\n\nReceived arguments:\n{raw}"
    if not isinstance(value, dict):
        return {}, f"Tool arguments must be a JSON object\n\nReceived arguments:\n{raw}"
    return value, None


class MessageBuilder:
    """Owns one AssistantMessage mutated in place while streaming, and makes the events that point into it.

    Text of an open block is kept as a list of chunks and joined when the block ends (or on `finalize`),
    so a delta costs O(len(delta)); until then the block's `text`/`thinking` is "" and a tool call's
    `arguments` is {}. A completed tool call whose JSON does not parse gets `arguments: {}` and an
    `argumentsError` text (the agent reports it to the model instead of running the tool).

    UTF-16 surrogates from `\\uXXXX` escapes never reach the message: a high surrogate ending a delta is held
    back and joined with the next delta of the same block (U+FFFD when the block ends first), any other lone
    surrogate becomes U+FFFD; ids, names, parsed arguments and the finished message are scrubbed too.
    What streams in is counted (`count`) against `sse.MAX_MESSAGE_CHARS`.
    """

    def __init__(self, model: Model):
        self.model = model
        self.message = new_message(model)
        self._open: dict[int, list[str]] = {}
        self._held = json_wire.HeldSurrogates()  # a block's trailing high surrogate, waiting for its low half
        self._chars = 0  # characters streamed into the message so far

    def count(self, chars: int) -> None:
        """Add `chars` streamed characters; raises `StreamLimitError` when past `sse.MAX_MESSAGE_CHARS`."""
        self._chars = check_message_size(self._chars + chars)

    @property
    def content(self) -> list[AssistantContent]:
        return self.message["content"]

    def is_open(self, index: int) -> bool:
        return index in self._open

    def start_text(self) -> tuple[int, Event]:
        index = self._append({"type": "text", "text": ""})
        return index, {"type": "text_start", "contentIndex": index}

    def start_thinking(self, *, signature: str | None = None, redacted: bool = False) -> tuple[int, Event]:
        self.count(len(signature or ""))
        block: ThinkingContent = {"type": "thinking", "thinking": ""}
        if signature is not None:
            block["thinkingSignature"] = signature
        if redacted:
            block["redacted"] = True
        index = self._append(block)
        return index, {"type": "thinking_start", "contentIndex": index}

    def start_tool_call(self, call_id: str, name: str,
                        arguments: dict[str, JsonValue] | None = None) -> tuple[int, Event]:
        """`arguments`: a value the API gave up front, kept when no argument JSON is streamed."""
        call_id, name = json_wire.join_surrogates(call_id), json_wire.join_surrogates(name)
        self.count(len(call_id) + len(name) + (len(json_wire.dumps(arguments)) if arguments else 0))
        arguments = json_wire.scrub_in_place(arguments or {})
        index = self._append({"type": "toolCall", "id": call_id, "name": name, "arguments": arguments})
        return index, {"type": "toolcall_start", "contentIndex": index, "id": call_id, "toolName": name}

    def delta(self, index: int, chunk: str) -> Event:
        """The `*_delta` event for `chunk` of block `index`; its `delta` is `chunk` with surrogates resolved
        (see the class docstring), so it may lack a held-back last character or be empty."""
        self._chars = check_message_size(self._chars + len(chunk))
        if self._held or not chunk.isascii():  # ASCII holds no surrogate: most deltas skip the search
            chunk = self._held.resolve(index, chunk)
        self._open[index].append(chunk)
        kind = _DELTA[self.content[index]["type"]]
        return {"type": kind, "contentIndex": index, "delta": chunk}  # type: ignore[typeddict-item]

    def finish(self, index: int) -> list[Event]:
        """Close block `index`: its `*_end` event, after a `*_delta` of U+FFFD when a high surrogate was still
        held back (the concatenated deltas always equal the block's final text)."""
        events: list[Event] = []
        if self._held.release(index):
            self._open[index].append("\ufffd")
            kind = _DELTA[self.content[index]["type"]]
            events.append({"type": kind, "contentIndex": index, "delta": "\ufffd"})  # type: ignore[typeddict-item]
        return [*events, self.end(index)]

    def end(self, index: int) -> Event:
        """Close block `index` and return its `*_end` event (`finish` also flushes a held-back surrogate)."""
        block = self._close(index, strict=True)
        if block["type"] == "toolCall":
            return {"type": "toolcall_end", "contentIndex": index, "toolCall": block}  # type: ignore[typeddict-item]
        kind = block["type"]
        return {"type": f"{kind}_end", "contentIndex": index, "content": block[kind]}  # type: ignore[typeddict-item]

    def end_all(self) -> list[Event]:
        return [event for index in sorted(self._open) for event in self.finish(index)]

    def finalize(self) -> None:
        """Close every open block without events (abort/error): tool arguments parsed best-effort."""
        for index in sorted(self._open):
            self._close(index, strict=False)

    def done(self, stop_reason: str, raw: str | None) -> Event:
        self.finalize()
        json_wire.scrub_in_place(self.message)
        self.message["stopReason"] = stop_reason
        if raw is not None:
            self.message["rawStopReason"] = raw
        return {"type": "done", "message": self.message}

    def note_response_model(self, name: object) -> None:
        """Record the model the server says answered as `responseModel`, when it is not the requested id."""
        if isinstance(name, str) and name and name != self.model["id"] and "responseModel" not in self.message:
            self.message["responseModel"] = name

    def fail(self, error_message: str) -> Event:
        self.finalize()
        self.message["stopReason"] = "error"
        self.message["errorMessage"] = error_message
        json_wire.scrub_in_place(self.message)
        return {"type": "error", "message": self.message}

    def _append(self, block: AssistantContent) -> int:
        self.content.append(block)
        index = len(self.content) - 1
        self._open[index] = []
        return index

    def _close(self, index: int, *, strict: bool) -> AssistantContent:
        text = "".join(self._open.pop(index)) + ("\ufffd" if self._held.release(index) else "")
        block = self.content[index]
        if block["type"] == "text":
            block["text"] = text
        elif block["type"] == "thinking":
            block["thinking"] = text
        elif strict:
            arguments, error = parse_tool_arguments(text)
            block["arguments"] = json_wire.scrub_in_place(arguments) or block["arguments"]
            if error is not None:
                block["argumentsError"] = json_wire.join_surrogates(error)
        elif text:
            block["arguments"] = json_wire.scrub_in_place(parse_partial_json(text))
        return block


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """A prepared POST: `body` is already JSON-encoded."""

    url: str
    headers: dict[str, str]
    body: bytes


class SseHandler:
    """What a provider supplies to `stream_api`: turns each SSE event into stream events."""

    builder: MessageBuilder
    screened = False
    """True while no run of 19 digits came in the body so far (set by the stream driver a read at a time): an
    event's JSON then needs no search for a number orjson would read differently (`json_wire.fast_loads`)."""

    def load(self, data: str, where: str) -> dict[str, JsonValue]:
        """An event's `data` as a JSON object (`_fields.load_object`; `where` names it in errors)."""
        return fields.load_object(data, where, screened=self.screened)

    def handle(self, event: SSEEvent) -> Iterable[Event]:
        """Events for one SSE event, as a list or tuple (made at once: what goes wrong in making them is
        worded where this is called); raise a `StreamFailure` to end the stream with an error."""
        raise NotImplementedError

    @property
    def finished(self) -> bool:
        """True once the API sent its terminal event (no more events are read)."""
        raise NotImplementedError

    def end_of_stream(self) -> Iterable[Event]:
        """Events after the body ended; the last must be the `done` event (or raise `StreamFailure`)."""
        raise NotImplementedError


async def guarded(builder: MessageBuilder, batches: AsyncIterator[Iterable[Event]],
                  options: StreamOptions | None = None) -> AsyncIterator[Event]:
    """The provider contract around `batches` (iterables of events, e.g. those of one network read; together
    they end with `done`), one event at a time: `start` first, then theirs, or an `error` event for any
    exception (never raised), its text with `options`' secrets masked (`ai.redaction`). On cancellation or
    close, `batches` is closed (so is its HTTP response), the message finalized in place, and
    `CancelledError`/`GeneratorExit` propagates. The only generator an event passes through: a layer per
    event cost ~0.4 us in every one of the thousands of deltas of an answer."""
    yield {"type": "start", "message": builder.message}
    try:
        async with aclosing(batches) as inner:
            async for batch in inner:
                for event in batch:
                    yield event
    except Exception as exc:  # noqa: BLE001 - the contract turns every failure into an error event
        secrets = secret_values(options.api_key, builder.model.get("headers"), options.headers) if options else ()
        failed = builder.fail(redact(describe_error(exc), secrets))
        if getattr(exc, "retry_after_ms", None) is not None:
            builder.message["retryAfterMs"] = exc.retry_after_ms  # type: ignore[attr-defined, typeddict-unknown-key]
        yield failed
    except BaseException:
        builder.finalize()
        raise


def sse_post(model: Model, options: StreamOptions, url: str, auth: dict[str, str], body: object) -> HttpRequest:
    """A streaming JSON POST to `url`: JSON and SSE headers, `auth` headers, then the model's and options'
    headers (`merged_headers`), and the body encoded by `json_wire.encode_body`."""
    base = {"content-type": "application/json", "accept": "text/event-stream", **auth}
    return HttpRequest(url, merged_headers(model, options, base), json_wire.encode_body(body))


def describe_error(exc: BaseException) -> str:
    """`errorMessage` text for a failure: our own errors verbatim, others prefixed with their class name."""
    if isinstance(exc, AIError):
        return str(exc)
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def require_api_key(model: Model, options: StreamOptions) -> str | None:
    """The API key, or None when `compat.apiKeyRequired` is false (local servers).

    Raises `MissingApiKeyError` naming `compat.apiKeyEnv` when the model's catalogue entry gives it.
    """
    if options.api_key:
        return options.api_key
    compat = model.get("compat") or {}
    if compat.get("apiKeyRequired") is False:
        return None
    env = compat.get("apiKeyEnv")
    hint = f"set {env}" if env else "set its API key in auth.json or as models.json apiKey, or pass --api-key"
    raise MissingApiKeyError(f"No API key for provider {model['provider']!r}: {hint}")


def merged_headers(model: Model, options: StreamOptions, base: dict[str, str]) -> dict[str, str]:
    """`base` < model `headers` < `options.headers` (later wins)."""
    return {**base, **(model.get("headers") or {}), **options.headers}


def max_tokens(model: Model, options: StreamOptions) -> int:
    """The request's output limit in tokens: `options.max_tokens`, else the model's `maxTokens`, which is never
    more than its current `contextWindow` (a smaller selected window, `set_context_window`, lowers it too)."""
    if options.max_tokens:
        return int(options.max_tokens)
    limit, window = int(model["maxTokens"]), int(model.get("contextWindow") or 0)
    return min(limit, window) if window > 0 else limit


def sampling_params(model: Model, options: StreamOptions) -> dict[str, JsonValue]:
    """The model's models.json `samplingParams`, with `samplingParamsByThinkingLevel[<thinking level>]` merged
    over them key by key (the reference agent's `models.md`, "Configure sampling by thinking level"). Each
    API module maps them to its request fields; values are sent as given."""
    base = model.get("samplingParams")
    merged = dict(base) if isinstance(base, dict) else {}
    by_level = model.get("samplingParamsByThinkingLevel")
    level = by_level.get(options.thinking_level) if isinstance(by_level, dict) else None
    if isinstance(level, dict):
        merged.update(level)
    return merged


_REQUEST_CONTENT = frozenset({"model", "messages", "input", "instructions", "stream", "stream_options", "tools"})


def merge_sampling(body: dict[str, object], params: dict[str, JsonValue]) -> None:
    """OpenAI-style APIs: every sampling field at the body's top level (as the reference agent does), except
    fields that carry the request itself (`_REQUEST_CONTENT`), which a sampling setting must not replace."""
    body.update({key: value for key, value in params.items() if key not in _REQUEST_CONTENT})


def token_count(value: object) -> int:
    """A token count from a usage object: positive ints up to 2**53 - 1 (the largest integer every JSON reader
    holds exactly, RFC 8259 section 6) as is; anything else (null, bool, 10**30, junk) 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 1 << 53 else 0


_LOCAL_ID = re.compile(r"call_[0-9a-f]{24}")


def new_local_id() -> str:
    """An id for a tool call the server sent without one (every API's builder): `call_` + 24 hex digits, the
    form `is_local_id` recognises, also in session files written earlier."""
    return f"call_{uuid.uuid4().hex[:24]}"


def is_local_id(call_id: object) -> bool:
    """Whether `call_id` was made by `new_local_id` (the server never saw it: Gemini does not send it back)."""
    return isinstance(call_id, str) and _LOCAL_ID.fullmatch(call_id) is not None


@dataclass(frozen=True)
class BlockWords:
    """How an API names its blocks in the errors of `open_block`: Anthropic's `("content block",
    "content_block_start", "content_block_stop")`, the Responses API's output items."""

    noun: str
    opened_by: str
    closed_by: str


def open_block(blocks: dict[int, int | None], key: int, builder: MessageBuilder, where: str,
               words: BlockWords) -> int | None:
    """The contentIndex `blocks` maps the API's block `key` to, while open; None for a block type the provider
    skips. Raises StreamProtocolError for a block the stream never opened or closed already (`where`: the event
    naming it): text for it would otherwise be lost without a word."""
    if key not in blocks:
        raise StreamProtocolError(f"{where} for {words.noun} {key}, which no {words.opened_by} opened")
    index = blocks[key]
    if index is not None and not builder.is_open(index):
        raise StreamProtocolError(f"{where} for {words.noun} {key} after its {words.closed_by}")
    return index
