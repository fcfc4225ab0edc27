"""Maps a model's `api` name to the provider module that streams it, importing that module on first use."""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from .errors import UnknownApiError
from .options import StreamOptions
if TYPE_CHECKING:
    from .types import AssistantMessageEvent, Context, Model

# collections.abc's generics keep the names as text; typing's would compile each (`ai.hosts.Host`).
StreamFunction = Callable[["Model", "Context", StreamOptions], AsyncIterator["AssistantMessageEvent"]]
"""`stream(model, context, options)`: an async generator of events (contract in `ai.types`)."""

API_MODULES: dict[str, str] = {
    "anthropic-messages": "agent_forge.ai.providers.anthropic_messages",
    "openai-completions": "agent_forge.ai.providers.openai_completions",
    "openai-responses": "agent_forge.ai.providers.openai_responses",
    "google-generative-ai": "agent_forge.ai.providers.google_generative_ai",
    "faux": "agent_forge.ai.providers.faux",
}
"""Built-in wire APIs → module defining `stream`. Hosts speaking one of them are catalogue data, not code."""

_registered: dict[str, StreamFunction] = {}


def register_api(api: str, stream_function: StreamFunction) -> None:
    """Add (or replace) the stream function of `api`, e.g. from a plugin; it takes precedence over built-ins."""
    _registered[api] = stream_function


def known_apis() -> list[str]:
    return sorted({*API_MODULES, *_registered})


def get_stream_function(api: str) -> StreamFunction:
    """The `stream` function for `api`. Raises `UnknownApiError` when no module serves it.

    Example: `get_stream_function("faux")(model, context, StreamOptions())`.
    """
    if api in _registered:
        return _registered[api]
    module_name = API_MODULES.get(api)
    if module_name is None:
        raise UnknownApiError(api)
    return importlib.import_module(module_name).stream


def stream(
    model: Model, context: Context, options: StreamOptions | None = None
) -> AsyncIterator[AssistantMessageEvent]:
    """Stream with the module of `model["api"]`; raises `UnknownApiError` at once (before any event)."""
    return get_stream_function(model["api"])(model, context, options or StreamOptions())
