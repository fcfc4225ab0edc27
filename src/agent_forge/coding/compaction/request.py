"""One summarisation request to the session's model, retried after transient provider errors.

Retries follow the session's retry settings (`retry.maxRetries`, `retry.baseDelayMs`, `retry.maxAgentDelayMs`;
none when `set_auto_retry` turned retries off) and are reported as (seeds 000/003):

    summarization_retry_scheduled{attempt, maxAttempts, delayMs, errorMessage}
      → backoff wait → summarization_retry_attempt_start{source, reason?} → the request again ...
    → summarization_retry_finished   (once, after the last attempt, only when a retry was scheduled)

`source` is `"compaction"` (with the compaction's `reason`) or `"branchSummary"` (no `reason`). Cancelling the
task running `complete` aborts the request or the wait at once. Once `closed` is set (stdin EOF in RPC mode) no
new retry starts and a waiting one ends: the last attempt's error stands (docs/rpc.md, "End of input").
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from ...ai.options import StreamOptions
from ...ai.types import Model
from ...ai.usage import add_usage, empty_usage
from ..events import (Emit, SummarizationRetryAttemptStart, SummarizationRetryFinished,
                      SummarizationRetryScheduled)
from ..retry_policy import backoff_delay_ms, is_retryable_error
from ..settings import RetrySettings
from ..errors import CompactionError


@dataclass(kw_only=True)
class Requester:
    """Everything a summarisation request needs from the session.

    `stream_fn(model, context, options)`: the provider call (the agent's); `options()`: fresh StreamOptions, awaited
    (key, headers, thinking level); `retry()`: the retry settings, None when retries are off; `emit`: the
    session's event sink; `source` / `reason`: what `summarization_retry_attempt_start` reports; `closed`: set
    when no client is left (stdin EOF): no more retries.
    """

    model: Model
    stream_fn: Callable[..., Any]
    options: Callable[[], Awaitable[StreamOptions]]
    retry: Callable[[], RetrySettings | None]
    emit: Emit
    source: str = "compaction"
    reason: str | None = None
    closed: asyncio.Event | None = None

    async def complete(self, system_prompt: str, prompt: str, max_tokens: int) -> tuple[str, dict[str, Any]]:
        """The model's answer text and the summed usage of every attempt. Raises `CompactionError` holding the
        last attempt's error text when the request fails for good (a permanent error, retries exhausted, an empty
        answer); the caller adds what failed (`Compaction failed: `, `Branch summary failed: `)."""
        usage = empty_usage()
        attempt = 0
        try:
            while True:
                text, error, used = await self._once(system_prompt, prompt, max_tokens)
                add_usage(usage, used)
                if error is None:
                    return text, usage
                settings = self.retry()
                if settings is None or attempt >= settings.max_retries or not is_retryable_error(error) \
                        or self._closed():
                    raise CompactionError(error)  # the provider's text: callers say what failed
                attempt += 1
                await self._wait(attempt, settings, error)
                if self._closed():  # the input closed during the wait: no new attempt
                    raise CompactionError(error)
        finally:
            if attempt:
                self.emit(SummarizationRetryFinished(type="summarization_retry_finished"))

    async def _wait(self, attempt: int, settings: RetrySettings, error: str) -> None:
        delay = backoff_delay_ms(attempt, settings.base_delay_ms, settings.max_delay_ms)
        self.emit(SummarizationRetryScheduled(type="summarization_retry_scheduled", attempt=attempt,
                                              maxAttempts=settings.max_retries, delayMs=delay, errorMessage=error))
        if self.closed is None:
            await asyncio.sleep(delay / 1000)
        else:
            try:
                await asyncio.wait_for(self.closed.wait(), delay / 1000)
                return  # closed: `complete` ends the retries
            except asyncio.TimeoutError:
                pass
        start = SummarizationRetryAttemptStart(type="summarization_retry_attempt_start", source=self.source)
        if self.reason is not None:
            start["reason"] = self.reason
        self.emit(start)

    def _closed(self) -> bool:
        return self.closed is not None and self.closed.is_set()

    async def _once(self, system_prompt: str, prompt: str, max_tokens: int) -> tuple[str, str | None, Any]:
        """(text, errorMessage or None, usage) of one request."""
        context = {"systemPrompt": system_prompt,
                   "messages": [{"role": "user", "content": [{"type": "text", "text": prompt}], "timestamp": 0}]}
        message = None
        try:
            options = await self.options()  # may run a key command, or fail saying why there is no key
            options.max_tokens = max_tokens
            async for event in self.stream_fn(self.model, context, options):
                if event.get("type") in ("done", "error"):
                    message = event["message"]
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a provider must not raise; if one does, it is a failed attempt
            return "", f"{type(exc).__name__}: {exc}", empty_usage()
        return _outcome(message)


def _outcome(message: Any) -> tuple[str, str | None, Any]:
    if not isinstance(message, dict):
        return "", "The provider stream ended without a final message", empty_usage()
    usage = message.get("usage") or empty_usage()
    if message.get("stopReason") == "aborted":
        raise asyncio.CancelledError
    if message.get("stopReason") == "error":
        return "", str(message.get("errorMessage") or "Request failed"), usage
    text = "".join(b.get("text", "") for b in message.get("content", []) if b.get("type") == "text").strip()
    if not text:
        return "", "The model returned an empty answer", usage
    return text, None, usage
