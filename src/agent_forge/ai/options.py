"""Options bundle passed to every provider's `stream()` function, and the thinking levels it takes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..records import Record, factory

THINKING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
"""Every thinking level, lowest first (`ai.types.ThinkingLevel`). Here, not in `ai.types`, so that what only
checks a level (settings, the start-up model of RPC mode's early `get_state`) does not import the wire shapes
(20 TypedDicts: ~2 ms, issue 15)."""

if TYPE_CHECKING:
    import httpx2


class StreamOptions(Record, kw_only=True):
    """Per-request options.

    `api_key`: credential for the provider (None: the provider module reports a clear error event).
    `thinking_level`: one of `THINKING_LEVELS`; mapped to each API's request parameters by its module.
    `max_tokens`: output budget; None means the model's `maxTokens`.
    `headers`: extra HTTP headers, merged over the model's `headers`.
    `session_id`: stable id for provider-side prompt caching where the API supports it.
    `transport`: an `httpx2` transport to use instead of the network (tests pass `httpx2.MockTransport`).
    `timeout_s`: connect, write and connection-pool timeout in seconds.
    `idle_timeout_s`: longest wait for the next bytes of the response (its headers, then each chunk), in
    seconds, before the request fails with `StreamIdleTimeout` (settings `httpIdleTimeoutMs`); None: no limit.
    """

    api_key: str | None = None
    thinking_level: str = "off"
    max_tokens: int | None = None
    temperature: float | None = None
    headers: dict[str, str] = factory(dict)
    session_id: str | None = None
    transport: httpx2.AsyncBaseTransport | None = None
    timeout_s: float = 600.0
    idle_timeout_s: float | None = 120.0
