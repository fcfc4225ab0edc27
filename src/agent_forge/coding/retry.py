"""Automatic retry of assistant turns that failed with a transient provider error (seed 000, `auto_retry_*`).

A session-level run may span several agent runs. When a run ends with a retryable error and retries are left,
its `agent_end` says `willRetry: true` (the loop asks `will_retry` first), then:

    agent_end{willRetry:true} → auto_retry_start{attempt, maxAttempts, delayMs, errorMessage}
      → backoff wait (cancellable; the failed attempt is the turn's outcome meanwhile)
      → the failed message leaves the agent's context (a `context_edit` entry records that in the session file)
      → a new run continuing from the context: agent_start ... agent_end

The chain ends with `auto_retry_end{success:true, attempt}` right after the first assistant `message_end`
that did not fail, or `auto_retry_end{success:false, attempt, finalError}` after the `agent_end` of a run
that will not be retried (retries exhausted, a non-retryable error, an abort; `finalError` is the last attempt's
error with ` (after N attempts)`, N counting the first request) or when the wait is cancelled.
The session emits the single `agent_settled` after all of it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Callable, TYPE_CHECKING

from .events import AutoRetryEnd, AutoRetryStart, Emit
from .retry_policy import backoff_delay_ms, hinted_delay_ms, is_retryable_message
from .settings import RetrySettings
from ..words import counted

if TYPE_CHECKING:
    from ..agent.events import AgentEvent
    from ..agent.types import AgentMessage
    from .session.store import SessionStore

RETRY_CANCELLED = "Retry cancelled"
"""`finalError` of the `auto_retry_end` that ends a chain cancelled during its backoff wait."""


def with_attempts(error: str, attempts: int) -> str:
    """`error` followed by ` (after N attempts)`: the final error of a retry chain, N counting the requests made
    (the first one included). Every mode says it so: `finalError`, print mode, the terminal UI."""
    return f"{error} (after {counted(attempts, 'attempt')})"


def requests_made(end: Mapping[str, object]) -> int:
    """How many requests the chain that the `auto_retry_end` event `end` closes made: its `attempt` counts the
    retries announced, and each was made but for one whose wait was cancelled (`Retry cancelled`)."""
    attempt = end.get("attempt")
    return (attempt if isinstance(attempt, int) else 0) + (0 if end.get("finalError") == RETRY_CANCELLED else 1)


class AutoRetry:
    """Retry state of one session: the loop hook, the event observer and the backoff wait; `SessionRun`
    (`run.py`) drives the chain.

    `settings()` is read at each decision; `enabled` starts from `retry.enabled` and is changed by
    `set_auto_retry` for this session only. `forget(message)` removes a failed attempt from the model's
    context, when its retry begins (`begin_attempt`): until then, and for good when the wait is cancelled or the
    process is killed meanwhile, the failure is the outcome, as when retries run out. `emit` sends `auto_retry_*`
    events to the session's listeners.
    """

    def __init__(self, settings: Callable[[], RetrySettings], emit: Emit, forget: Callable[[AgentMessage], None]):
        self._settings = settings
        self._emit = emit
        self._forget = forget
        self._replaced: AgentMessage | None = None  # the failed attempt the waiting retry is to replace
        self.enabled = settings().enabled
        self.attempt = 0  # retries started in the current chain; 0 when no chain is going on
        self._failed: AgentMessage | None = None  # the message whose retry `will_retry` promised
        self._delay_ms = 0
        self._stopped = False  # `abort_retry` while a retried run streams: its failure is final
        self._wake: asyncio.Event | None = None  # set while waiting; setting it cancels the wait
        self._cancelled_by_abort = False

    @property
    def waiting(self) -> bool:
        """True from `auto_retry_start` until the retried run starts (the backoff wait)."""
        return self._wake is not None or self._failed is not None

    # -- hooks -----------------------------------------------------------------------------------------

    def will_retry(self, new_messages: list[AgentMessage]) -> bool:
        """The loop's question before `agent_end`: is this run's failure retried? Counts the attempt if so."""
        settings = self._settings()
        failed = new_messages[-1] if new_messages else None
        if not (self.enabled and not self._stopped and is_retryable_message(failed)):
            return False
        if self.attempt >= settings.max_retries or _asks_too_long(failed, settings.max_delay_ms):
            return False
        self.attempt += 1
        self._failed = failed
        self._delay_ms = hinted_delay_ms(failed, backoff_delay_ms(self.attempt, settings.base_delay_ms),
                                         settings.max_delay_ms)
        return True

    def observe(self, event: AgentEvent) -> None:
        """See every agent event after listeners got it; emits `auto_retry_start`/`auto_retry_end` in place."""
        kind = event.get("type")
        if kind == "message_end" and self.attempt and _succeeded(event["message"]):
            self._end(success=True)
        elif kind == "agent_end" and event.get("willRetry") and self._failed is not None:
            self._announce(self._failed)
        elif kind == "agent_end" and self.attempt:
            last = event["messages"][-1] if event.get("messages") else {}
            self._end(success=False, error=with_attempts(str(last.get("errorMessage") or "Request failed"),
                                                         self.attempt + 1))

    def _announce(self, failed: AgentMessage) -> None:
        self._emit(AutoRetryStart(type="auto_retry_start", attempt=self.attempt,
                                  maxAttempts=self._settings().max_retries, delayMs=self._delay_ms,
                                  errorMessage=str(failed.get("errorMessage") or "")))
        self._replaced = failed

    def _end(self, *, success: bool, error: str | None = None) -> None:
        event = AutoRetryEnd(type="auto_retry_end", success=success, attempt=self.attempt)
        if not success:
            event["finalError"] = error
        self.attempt, self._failed, self._stopped, self._replaced = 0, None, False, None
        self._emit(event)

    # -- the chain, driven by `SessionRun` ---------------------------------------------------------------

    def start_chain(self) -> None:
        """A session-level run follows a new agent run: no abort has cut its chain yet."""
        self._cancelled_by_abort = False

    @property
    def cancelled_by_abort(self) -> bool:
        """`cancel(aborted=True)` ended the chain (during its wait, or before the wait began)."""
        return self._cancelled_by_abort

    def take_promised(self) -> bool:
        """Whether the agent run that just ended was promised a retry (`will_retry`); the promise is used up."""
        promised, self._failed = self._failed is not None, None
        return promised

    async def backoff(self) -> bool:
        """Sleep `delayMs`; False when `cancel` cut the wait short."""
        self._wake = asyncio.Event()
        try:
            await asyncio.wait_for(self._wake.wait(), self._delay_ms / 1000)
        except TimeoutError:
            return True
        finally:
            self._wake = None
        return False

    def begin_attempt(self) -> None:
        """The wait is over and the retried run starts: the failed attempt it replaces leaves the context."""
        if self._replaced is not None:
            self._forget(self._replaced)
            self._replaced = None

    def end_failed(self, error: str) -> None:
        """The retried run could not start (e.g. the model was removed meanwhile): the chain ends."""
        self._end(success=False, error=error)

    def cancel(self, *, aborted: bool = False) -> bool:
        """Stop retrying (`abort_retry`; `abort` passes `aborted=True`). During a backoff wait the wait ends at
        once with `auto_retry_end{success:false}` and True is returned; while a retried run streams, its failure
        becomes final. Otherwise nothing happens. A wait already cut short is not ended again (one
        `auto_retry_end` per chain, however many cancellations arrive before the wait wakes); an abort among
        them still makes the run settle `aborted: true`."""
        if self._wake is not None and self._wake.is_set():  # cancelled already; the wait has yet to wake
            self._cancelled_by_abort = self._cancelled_by_abort or aborted
            return True
        if self._wake is not None or self._failed is not None:  # waiting, or about to wait
            self._cancelled_by_abort = aborted
            self._failed = None
            if self._wake is not None:
                self._wake.set()
            self._end(success=False, error=RETRY_CANCELLED)
            return True
        if self.attempt:
            self._stopped = True
        return False


def _succeeded(message: AgentMessage) -> bool:
    return message.get("role") == "assistant" and message.get("stopReason") not in ("error", "aborted")


def forget_failed_attempt(messages: list[AgentMessage], store: SessionStore, failed: AgentMessage) -> None:
    """Remove `failed` (the last failed assistant message) from `messages` and append a `context_edit` entry
    `{targetId, replacement: null}` (`ContextEdit`) to `store` hiding its session entry from future context (the
    reference session format's omission edit), so a resumed session leaves it out too. The message entry itself
    stays in the append-only file."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index] is failed:
            del messages[index]
            break
    entry_id = _message_entry_id(store, failed)
    if entry_id is not None:
        store.append_context_edit(entry_id, None)  # read back by session_context


def _message_entry_id(store: SessionStore, message: AgentMessage, max_steps: int = 64) -> str | None:
    """Id of the session entry holding `message`, searched from the leaf back (it was appended moments ago)."""
    entry_id = store.leaf_id
    for _ in range(max_steps):
        entry = store.get_entry(entry_id) if entry_id is not None else None
        if entry is None:
            return None
        stored = entry.get("message")
        if (entry["type"] == "message" and isinstance(stored, dict) and stored.get("role") == "assistant"
                and stored.get("timestamp") == message.get("timestamp")):
            return entry_id
        entry_id = entry.get("parentId")
    return None


def _asks_too_long(failed: object, max_delay_ms: int) -> bool:
    """The server's `retry-after` asks for a longer wait than `retry.maxAgentDelayMs` (when that is positive):
    retrying sooner would only be refused again, so the failure is final at once (its `retryAfterMs` says
    when the server expects the next request)."""
    hint = failed.get("retryAfterMs") if isinstance(failed, dict) else None
    return max_delay_ms > 0 and isinstance(hint, int) and not isinstance(hint, bool) and hint > max_delay_ms
