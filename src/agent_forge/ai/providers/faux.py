"""The `faux` API: a scripted in-process model that streams queued responses like a real provider.

For tests and SDK users: a `FauxProvider` is one scripted model; queue replies on it, give its `model()` to a
session and its `stream` as the session's stream function (or use the `faux` API name: a model's
`compat.fauxKey` finds its provider). Each call plays the next reply with the event sequence a real provider
produces, and is recorded in `requests`.

    faux = FauxProvider()
    faux.respond([FauxResponse(tool_calls=[("read", {"path": "a.txt"})]), FauxResponse(text="Done.")])
    async for event in faux.stream(faux.model(), context, StreamOptions()): ...

The module functions (`set_faux_responses`, `faux_requests`, `faux_model(key=...)`) address providers by key,
for code that has no object to pass (the `default` key when none is given).
"""

from __future__ import annotations

import asyncio
import itertools
import weakref
from collections import deque
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable, Union

from ..errors import StreamFailure
from ..options import StreamOptions
from ..types import AssistantMessageEvent, Context, Model
from ..usage import update_cost
from ._common import MessageBuilder, dumps, guarded

DEFAULT_KEY = "default"


@dataclass(kw_only=True)
class FauxResponse:
    """One scripted reply, streamed as thinking, then text, then tool calls.

    `tool_calls`: (name, arguments) pairs; arguments is a dict, or a raw JSON string streamed verbatim
    (e.g. broken JSON, to test `argumentsError`). `input_tokens`/`output_tokens`: reported usage; None
    estimates chars/4 of the context/reply. `error`: after streaming the content, end with an `error` event
    carrying this `errorMessage`. `stop_reason`: override of the stop reason ("stop", "length", "toolUse";
    default toolUse when there are tool calls). `chunk_size`: characters per delta. `hang_after`: after
    that many deltas, wait for `release` (forever when None) so a test can cancel mid-stream.
    """

    text: str = ""
    thinking: str = ""
    thinking_signature: str | None = None
    tool_calls: list[tuple[str, Union[dict[str, Any], str]]] = field(default_factory=list)
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int = 0
    error: str | None = None
    stop_reason: str | None = None
    chunk_size: int = 8
    hang_after: int | None = None
    release: asyncio.Event | None = None


Script = Union[FauxResponse, Callable[[Context], FauxResponse]]
"""A queued reply: a response, or a function of the request's context that returns one."""


@dataclass(frozen=True)
class FauxRequest:
    """What one `stream()` call received; `context` is a shallow snapshot (its lists are copied)."""

    model: Model
    context: Context
    options: StreamOptions


class FauxProvider:
    """One scripted model: its queue of replies and the requests it served. `key` names it for the `faux` API
    (a model's `compat.fauxKey`); a fresh unique one by default. Providers are found by key while referenced."""

    def __init__(self, key: str | None = None):
        self.key = key if key is not None else f"faux-{next(_serial)}"
        self.requests: list[FauxRequest] = []
        self._scripts: deque[Script] = deque()
        _providers[self.key] = self

    def respond(self, responses: list[Script]) -> "FauxProvider":
        """Replace the queue of replies and forget the recorded requests; returns self."""
        self._scripts = deque(responses)
        self.requests = []
        return self

    def model(self, id: str = "faux-1", **options: Any) -> Model:
        """A `Model` dict reading this provider's replies (`faux_model` options: reasoning, context_window...)."""
        return faux_model(id, key=self.key, **options)

    async def stream(self, model: Model, context: Context,
                     options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        """Play the next reply queued here, whatever the model's key (an `error` event when none is left)."""
        builder = MessageBuilder(model)
        async with aclosing(guarded(builder, _play(self, builder, context, options), options)) as events:
            async for event in events:
                yield event

    def _next(self, model: Model, context: Context, options: StreamOptions) -> FauxResponse:
        if not self._scripts:
            raise StreamFailure(f"faux: no scripted response left for key {self.key!r}")
        snapshot: Any = {**context, "messages": list(context["messages"]), "tools": list(context.get("tools") or [])}
        self.requests.append(FauxRequest(model, snapshot, options))
        script = self._scripts.popleft()
        return script(snapshot) if callable(script) else script


_serial = itertools.count(1)
_providers: "weakref.WeakValueDictionary[str, FauxProvider]" = weakref.WeakValueDictionary()
_by_name: dict[str, FauxProvider] = {}  # providers made by key through the module functions stay


def faux_provider(key: str = DEFAULT_KEY) -> FauxProvider:
    """The provider named `key` (made, and kept, when there is none)."""
    provider = _providers.get(key)
    if provider is None:
        provider = _by_name[key] = FauxProvider(key)
    return provider


def set_faux_responses(responses: list[Script], key: str = DEFAULT_KEY) -> None:
    """Replace the queue of replies under `key` and forget its recorded requests."""
    faux_provider(key).respond(responses)


def faux_requests(key: str = DEFAULT_KEY) -> list[FauxRequest]:
    """The requests served under `key` since its last `set_faux_responses`, oldest first."""
    return faux_provider(key).requests


def faux_model(
    id: str = "faux-1", *, key: str = DEFAULT_KEY, reasoning: bool = False, context_window: int = 128_000,
    max_tokens: int = 16_384, provider: str = "faux",
) -> Model:
    """A `Model` dict for the faux API, reading replies queued under `key`. Costs are zero."""
    return {
        "id": id, "name": f"Faux {id}", "api": "faux", "provider": provider, "baseUrl": "",
        "reasoning": reasoning, "input": ["text", "image"], "contextWindow": context_window,
        "maxTokens": max_tokens, "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0},
        "compat": {"fauxKey": key, "apiKeyRequired": False},
    }


async def stream(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
    """The `faux` API: play the next reply of the provider named by the model's `compat.fauxKey`."""
    key = (model.get("compat") or {}).get("fauxKey", DEFAULT_KEY)
    async with aclosing(faux_provider(key).stream(model, context, options)) as events:
        async for event in events:
            yield event


async def _play(provider: FauxProvider, builder: MessageBuilder, context: Context,
                options: StreamOptions) -> AsyncIterator[list[AssistantMessageEvent]]:
    """The reply's events in lists, as `guarded` takes them (an SSE provider's are those of a network read)."""
    response = provider._next(builder.model, context, options)
    builder.message["responseId"] = f"faux-{provider.key}-{len(provider.requests)}"
    player = _Player(builder, response)
    async for events in player.content():
        yield events
    _set_usage(builder, response, context)
    if response.error is not None or response.stop_reason == "error":
        yield [builder.fail(response.error or "faux: scripted error")]
        return
    default = "toolUse" if response.tool_calls else "stop"
    yield [builder.done(response.stop_reason or default, response.stop_reason or default)]


class _Player:
    """Streams one response's blocks in chunks, yielding control between deltas."""

    def __init__(self, builder: MessageBuilder, response: FauxResponse):
        self.builder, self.response = builder, response
        self._deltas = 0

    async def content(self) -> AsyncIterator[list[AssistantMessageEvent]]:
        response = self.response
        if response.thinking:
            index, start = self.builder.start_thinking(signature=response.thinking_signature)
            async for events in self._block(index, start, response.thinking):
                yield events
        if response.text:
            index, start = self.builder.start_text()
            async for events in self._block(index, start, response.text):
                yield events
        for position, (name, arguments) in enumerate(response.tool_calls):
            raw = arguments if isinstance(arguments, str) else dumps(arguments)
            call_id = f"faux_call_{self.builder.message['responseId']}_{position}"
            index, start = self.builder.start_tool_call(call_id, name)
            async for events in self._block(index, start, raw):
                yield events

    async def _block(self, index: int, start: AssistantMessageEvent,
                     text: str) -> AsyncIterator[list[AssistantMessageEvent]]:
        yield [start]
        size = max(1, self.response.chunk_size)
        for offset in range(0, len(text), size):
            await self._pace()
            yield [self.builder.delta(index, text[offset : offset + size])]
        yield self.builder.finish(index)

    async def _pace(self) -> None:
        if self.response.hang_after is not None and self._deltas == self.response.hang_after:
            await (self.response.release or asyncio.Event()).wait()
        self._deltas += 1
        await asyncio.sleep(0)  # a real stream awaits the network here: let other tasks (and cancellation) in


def _set_usage(builder: MessageBuilder, response: FauxResponse, context: Context) -> None:
    usage = builder.message["usage"]
    usage["input"] = response.input_tokens if response.input_tokens is not None else _estimate_context(context)
    reply = len(response.text) + len(response.thinking) + sum(len(str(a)) + len(n) for n, a in response.tool_calls)
    usage["output"] = response.output_tokens if response.output_tokens is not None else -(-reply // 4)
    usage["cacheRead"] = response.cache_read_tokens
    update_cost(builder.model, usage)


def _estimate_context(context: Context) -> int:
    chars = len(context.get("systemPrompt") or "") + len(dumps(context["messages"]))
    return -(-chars // 4)
