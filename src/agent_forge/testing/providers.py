"""The provider contract, as checks a provider's tests can run (`tests/ai/test_provider_contract.py` runs
them over the four wire APIs against loopback fakes). A stream function `(model, context, options)` yielding
`AssistantMessageEvent`s keeps it when:

1. the first event is `start`, before any network wait can fail;
2. it never raises after `start` (any failure is one final `error` event with `stopReason: "error"` and an
   `errorMessage`); exactly one terminal event (`done` or `error`) ends the stream, nothing comes after it;
3. closing the stream early (a consumer that stops, a cancelled task) closes the HTTP body: the server sees
   the client go away;
4. an HTTP error status ends with an `error` event naming the status, carrying the server's `retry-after`
   hint as `retryAfterMs` when there was one.

Each check raises `ContractViolation` (an AssertionError) with what was wrong. No pytest needed.
"""

from __future__ import annotations

from contextlib import aclosing
from typing import Any, AsyncIterator, Awaitable, Callable

TERMINAL = ("done", "error")

StreamFunction = Callable[[Any, Any, Any], AsyncIterator[dict[str, Any]]]


class ContractViolation(AssertionError):
    """A stream function broke the provider contract (the message says which rule and how)."""


async def collect(stream_fn: StreamFunction, model: Any, context: Any, options: Any) -> list[dict[str, Any]]:
    """Every event of one call, checked against rules 1 and 2 (`check_events`). Raises ContractViolation,
    also for an exception that escaped the stream."""
    events: list[dict[str, Any]] = []
    try:
        async with aclosing(stream_fn(model, context, options)) as stream:
            async for event in stream:
                events.append(event)
    except Exception as exc:
        where = "after start" if events else "before any event"
        raise ContractViolation(f"the stream raised {where}: {type(exc).__name__}: {exc}") from exc
    check_events(events)
    return events


def check_events(events: list[dict[str, Any]]) -> None:
    """Rules 1 and 2 over a finished stream's events."""
    if not events or events[0].get("type") != "start":
        raise ContractViolation(f"the first event must be start, got {_types(events)[:1]}")
    terminal = [i for i, event in enumerate(events) if event.get("type") in TERMINAL]
    if terminal != [len(events) - 1]:
        raise ContractViolation(f"exactly one terminal event must end the stream: {_types(events)}")
    last = events[-1]
    if last["type"] == "error":
        message = last.get("message") or {}
        if message.get("stopReason") != "error" or not message.get("errorMessage"):
            raise ContractViolation(f"an error event needs stopReason error and an errorMessage: {message}")


async def close_early(stream_fn: StreamFunction, model: Any, context: Any, options: Any,
                      after: int = 2) -> list[dict[str, Any]]:
    """Read `after` events, then close the stream as a consumer that stops would (rule 3); the events read.
    The caller checks its server saw the client go away (`wait_for_disconnect`)."""
    events: list[dict[str, Any]] = []
    async with aclosing(stream_fn(model, context, options)) as stream:
        async for event in stream:
            events.append(event)
            if len(events) >= after:
                break
    if not events or events[0].get("type") != "start":
        raise ContractViolation(f"the first event must be start, got {_types(events)[:1]}")
    return events


async def wait_for_disconnect(disconnected: Callable[[], bool | Awaitable[bool]], what: str = "the body") -> None:
    """Rule 3: raise ContractViolation unless `disconnected()` (the fake server's view) is true."""
    seen = disconnected()
    if not isinstance(seen, bool):
        seen = await seen
    if not seen:
        raise ContractViolation(f"closing the stream did not close {what}: the server still sends")


def check_http_error(events: list[dict[str, Any]], status: int, retry_after_ms: int | None = None) -> None:
    """Rule 4 over the events of a call the server answered with `status`."""
    check_events(events)
    message = events[-1].get("message") or {}
    if events[-1]["type"] != "error" or str(status) not in str(message.get("errorMessage")):
        raise ContractViolation(f"HTTP {status} must end with an error event naming it: {message}")
    if message.get("retryAfterMs") != retry_after_ms:
        raise ContractViolation(f"retryAfterMs must be {retry_after_ms}, got {message.get('retryAfterMs')}")


def _types(events: list[dict[str, Any]]) -> list[str]:
    return [str(event.get("type")) for event in events]
