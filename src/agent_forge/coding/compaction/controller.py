"""When and how a session compacts: the manual command, the threshold and overflow triggers, events and abort.

Triggers (seed 000 `compact`, `compaction_start/end`; reference `compaction.md`):
- `manual` (`compact`): aborts a running turn first and runs at its hand-over (before queued messages go on);
- `threshold`: context tokens > context window - `compaction.reserveTokens`, checked before each turn's model
  call (the agent loop's `before_turn` hook: before a prompt is answered and between the turns of a tool loop)
  and after a run ends;
- `overflow`: a run ended with a provider context-overflow error: its `agent_end` says `willRetry: true`, the
  session compacts and continues the run once. A second overflow is reported as unresolved:
  `compaction_start` + `compaction_end{result: null, unresolvedOverflow: true, errorMessage}` (seed 003).

Every attempt emits `compaction_start{reason}` then `compaction_end{reason, result, aborted, willRetry,
errorMessage?}` (`Compaction failed: <cause>`). An automatic attempt that failed is not made again until the
context changes (`_context_key`: a retried model call is no change). Automatic triggers are off while `enabled` is False (`set_auto_compaction`, this session only).
The compaction runs as its own task so `abort` (and `cancel_and_wait`) stop it at once: no entry is written.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Awaitable, Callable, Protocol, TypeVar

from ...agent.loop import abortable_step
from ...ai.overflow import is_context_overflow
from ..errors import AbortedError, CommandError, CompactionError, SessionFileError
from ..events import CompactionEnd, CompactionStart, Emit
from .request import Requester
from .tokens import context_tokens, estimate_messages, over_threshold, overhead_tokens

if TYPE_CHECKING:
    from ..settings import CompactionSettings, Settings
    from ...agent.agent import Agent
    from ...agent.types import AgentMessage
    from ...ai.types import Model
    from ..session.entries import CompactionEntry
    from ..session.store import SessionStore

T = TypeVar("T")


class CompactionPlan(Protocol):
    """A finished compaction before its entry is written (`summary.SummaryPlan`, `verbatim.VerbatimPlan`; the
    latter also has `before_write(session_file)`, called first when present)."""

    def append_to(self, store: SessionStore) -> CompactionEntry: ...

    def result(self, estimated_tokens_after: int) -> dict[str, object]:
        """The `compact` response data / `compaction_end.result`."""
        ...

ABORTED = "Compaction aborted"
FAILED = "Compaction failed: "  # then the cause, e.g. the provider's own error text
IN_PROGRESS = "Compaction is already in progress"
SESSION_CHANGED = ("The session changed (a new session, a switch to another, a fork or a clone) before the "
                   "compaction could run: nothing was compacted")
UNRESOLVED = "Context overflow persists after compaction: "
UNRECOVERABLE = "Context overflow cannot be resolved by compaction ({problem}): "


@dataclass
class Outcome:
    """How one compaction attempt ended: `result` on success, else `error` or `aborted`."""

    result: dict[str, object] | None = None
    error: str | None = None
    aborted: bool = False


class CompactionController:
    """The compaction side of one AgentSession (`session.compaction`); `SessionRun` drives its run hooks
    (`after_run`, `at_hand_over`, `take_aborted`) and the `compact` command."""

    def __init__(self, *, agent: Agent, store: Callable[[], SessionStore], settings: Settings, emit: Emit,
                 system_prompt: Callable[[], str], retry_enabled: Callable[[], bool]):
        """`store()` is the session's current store (read at each use); `system_prompt()` the prompt the next
        run would send; `retry_enabled()` whether summarisation requests retry (`set_auto_retry`)."""
        self._agent = agent
        self._store = store
        self._settings = settings
        self._emit = emit
        self._system_prompt = system_prompt
        self._retry_enabled = retry_enabled
        self.enabled = settings.compaction.enabled
        """Automatic compaction (threshold and overflow); starts from `compaction.enabled`."""
        self._task: asyncio.Task | None = None
        self._overflow_pending = False  # `will_retry` promised a compact-and-retry for the run that just ended
        self._overflow_retrying = False  # the run continuing after an overflow compaction is going on
        self._unrecoverable: str | None = None  # why the overflow of the run that just ended cannot be compacted
        self._aborted = False  # an automatic compaction of the current session-level run was aborted
        self._failed_on: tuple[int, object] | None = None  # `_context_key()` where an automatic attempt failed
        self._requests: list[tuple[str | None, str, asyncio.Future[Outcome]]] = []  # `compact` during a run
        self._input_closed = asyncio.Event()  # no client any more: summaries retry no more (`input_closed`)

    @property
    def task(self) -> asyncio.Task | None:
        """The compaction (or branch summary) task of the latest attempt; done when none is going on."""
        return self._task

    @property
    def is_compacting(self) -> bool:
        """True while a compaction (or a branch summary) request is going on (`get_state.isCompacting`)."""
        return self._task is not None and not self._task.done()

    # -- session hooks ---------------------------------------------------------------------------------------

    def will_retry(self, new_messages: list[AgentMessage]) -> bool:
        """The loop's question before `agent_end`: recover from this run's overflow by compacting and continuing?
        Yes once per overflow chain, when automatic compaction is on."""
        failed = new_messages[-1] if new_messages else None
        if not self.enabled or self._overflow_retrying or not is_context_overflow(failed):
            return False
        self._unrecoverable = self._plan_problem()
        self._overflow_pending = self._unrecoverable is None
        return self._overflow_pending

    async def before_turn(self, pending: list[AgentMessage]) -> None:
        """Agent-loop hook, before each turn's model call: compact when the context with `pending` (the messages
        the turn is about to add: a prompt, steering delivered with it, their images) is over the threshold, so a
        big prompt on a nearly full context compacts first instead of overflowing. Runs as an abortable loop
        step; an abort ends here with `compaction_end{aborted: true}` and the loop stops the run."""
        if not self._should_compact(estimate_messages(pending)):
            return
        try:
            await self._run("threshold")
        except asyncio.CancelledError:
            pass  # the loop's abort flag is set: the run ends after this step

    async def after_run(self) -> asyncio.Task | None:
        """Session hook, after a run and its automatic retries ended: overflow recovery (returns the continuing
        run to follow), the unresolved-overflow report, or the threshold check (returns None)."""
        if self._overflow_pending:
            self._overflow_pending = False
            return await self._recover()
        messages = self._agent.messages
        last = messages[-1] if messages else None
        if self._unrecoverable is not None:
            problem, self._unrecoverable = self._unrecoverable, None
            self._report_unresolved(UNRECOVERABLE.format(problem=problem), last)
            return None
        if self._overflow_retrying:
            self._overflow_retrying = False
            if is_context_overflow(last):
                self._report_unresolved(UNRESOLVED, last)
                return None
        if self._agent.was_aborted or (isinstance(last, dict) and last.get("stopReason") == "error"):
            return None
        if self._should_compact():
            await self._run("threshold")
        return None

    def take_aborted(self) -> bool:
        """Was an automatic compaction aborted since the last call? (`agent_settled.aborted`)"""
        aborted, self._aborted = self._aborted, False
        return aborted

    async def cancel_and_wait(self) -> None:
        """Abort the compaction in progress, if any, and return once its `compaction_end` was sent."""
        await self.cancel()

    def cancel(self) -> Awaitable[object]:
        """`cancel_and_wait` with the cancellation now (an idle `abort` on arrival): await the result."""
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            return asyncio.wait({task})
        return _value(None)

    # -- the command -----------------------------------------------------------------------------------------

    def request(self, custom_instructions: str | None, session_id: str) -> asyncio.Future[Outcome]:
        """A `compact` sent during a run: queue it for the run's hand-over (`at_hand_over`) on the session
        `session_id`. The future holds its outcome."""
        request: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self._requests.append((custom_instructions, session_id, request))
        return request

    def withdraw(self, custom_instructions: str | None, session_id: str, request: asyncio.Future[Outcome]) -> None:
        """The run was already past its hand-over: the request is run later, on the settled session."""
        self._requests.remove((custom_instructions, session_id, request))

    def abort_requests(self) -> None:
        """A client's `abort`: the `compact` requests still waiting for the run's hand-over end aborted now, none
        runs (no compaction events); one running is stopped with the compaction (`cancel`)."""
        requests, self._requests = self._requests, []
        for _, _, request in requests:
            if not request.done():
                request.set_result(Outcome(aborted=True))

    async def at_hand_over(self) -> None:
        """Session hook, where a run hands over to queued messages or settles: run the manual compactions
        `compact` requested during the run, before anything queued continues."""
        while self._requests:
            custom_instructions, session_id, request = self._requests.pop(0)
            try:
                outcome = await self.manual(custom_instructions, session_id)
            except asyncio.CancelledError:  # the session is terminating: every waiting `compact` is answered
                self._requests.insert(0, (custom_instructions, session_id, request))
                self.abort_requests()
                raise
            if not request.done():
                request.set_result(outcome)

    def manual(self, custom_instructions: str | None, session_id: str) -> Awaitable[Outcome]:
        """One manual attempt on the session `compact` was sent to, begun at the call: compacting from then on, so
        an `abort` right after stops it (`cancel`; stopped before its first step, it ends aborted without
        events). Await the outcome: an error when the session changed meanwhile or a compaction goes on."""
        if self._store().session_id != session_id:
            return _value(Outcome(error=SESSION_CHANGED))
        if self.is_compacting:
            return _value(Outcome(error=IN_PROGRESS))
        attempt = asyncio.ensure_future(self._attempt("manual", custom_instructions, False))
        self._track(attempt)
        return abortable_step(attempt, unstarted=lambda: Outcome(aborted=True), track=self._track)

    @staticmethod
    def aborted_outcome() -> Outcome:
        """The outcome of a `compact` an `abort` stopped before it asked for anything."""
        return Outcome(aborted=True)

    @staticmethod
    async def answer(outcome: Awaitable[Outcome]) -> dict[str, object]:
        """`result` of `outcome` once it is there."""
        return CompactionController.result(await outcome)

    @staticmethod
    def result(outcome: Outcome) -> dict[str, object]:
        """The `compact` answer of `outcome`; raises `CommandError` when it failed, `AbortedError` when it was
        aborted."""
        if outcome.aborted:
            raise AbortedError(ABORTED)
        if outcome.error is not None:
            raise CommandError(outcome.error)
        assert outcome.result is not None
        return outcome.result

    # -- running one compaction ------------------------------------------------------------------------------

    async def _run(self, reason: str, *, focus: str | None = None, will_retry: bool = False) -> Outcome:
        """Run one attempt as an abortable step (`task`) and wait for it. If the waiting task is cancelled, the
        attempt is cancelled too, and the cancellation goes on once the attempt has reported itself."""
        return await abortable_step(self._attempt(reason, focus, will_retry), unstarted=lambda: Outcome(aborted=True),
                                    track=self._track)

    def _track(self, task: asyncio.Task | None) -> None:
        if task is not None:  # a finished attempt stays `task` (done): `wait_for_idle` may hold it
            self._task = task

    async def _attempt(self, reason: str, focus: str | None, will_retry: bool) -> Outcome:
        """Emit `compaction_start`, compact, emit `compaction_end`; never raises."""
        self._emit(CompactionStart(type="compaction_start", reason=reason))
        end = CompactionEnd(type="compaction_end", reason=reason, result=None, aborted=False, willRetry=False)
        try:
            result = await self._compact(reason, focus)
        except asyncio.CancelledError:
            self._aborted = self._aborted or reason != "manual"
            self._emit({**end, "aborted": True})
            return Outcome(aborted=True)
        except Exception as exc:  # any failure is reported to the client; the session goes on
            detail = str(exc) if isinstance(exc, CompactionError) else f"{type(exc).__name__}: {exc}"
            if reason != "manual":
                self._failed_on = self._context_key()  # no new automatic attempt until the context changes
            message = f"{FAILED}{detail}"
            end["errorMessage"] = message
            if reason == "overflow":
                end["unresolvedOverflow"] = True
                end["errorMessage"] += self.overflow_advice()
            self._emit(end)
            return Outcome(error=detail)  # the `compact` response: the cause alone (`Already compacted`)
        self._emit({**end, "result": result, "willRetry": will_retry})
        return Outcome(result=result)

    async def _compact(self, reason: str, focus: str | None) -> dict[str, object]:
        """Plan with the configured strategy, ask the model, write the entry, rebuild the agent's context."""
        model = self._agent.model
        if model is None:
            raise CompactionError("No model selected")
        settings = self.settings_for(model)
        overhead = self._overhead()
        tokens_before = context_tokens(self._agent.messages, overhead)
        requester = self.requester(model, source="compaction", reason=reason)
        path = self._store().branch()
        if settings.strategy == "verbatim-lines":
            from .verbatim import VerbatimParams, compact_verbatim

            plan: CompactionPlan = await compact_verbatim(path, requester=requester, model=model, focus=focus,
                                               params=VerbatimParams.from_settings(self._settings),
                                               tokens_before=tokens_before, overhead=overhead)
        else:
            from .summary import summarize

            plan = await summarize(path, requester=requester, model=model, focus=focus,
                                   keep_recent_tokens=settings.keep_recent_tokens, tokens_before=tokens_before)
        return self._commit(plan, overhead)

    def _commit(self, plan: CompactionPlan, overhead: int) -> dict[str, object]:
        """Append the `compaction` entry and make the agent's messages the rebuilt context (in place: a running
        loop holds the same list). No await here, so an abort cannot land between the two."""
        if hasattr(plan, "before_write"):
            plan.before_write(self._store().path)
        try:
            plan.append_to(self._store())
        except (SessionFileError, OSError, TypeError, ValueError) as exc:
            raise CompactionError(f"Could not write the session file: {exc}") from None
        self._agent.messages[:] = self._store().build_context().messages
        return plan.result(estimate_messages(self._agent.messages) + overhead)

    def requester(self, model: Model, *, source: str, reason: str | None = None) -> Requester:
        """A summarisation requester on the session's model, retry settings and event sink."""
        return Requester(model=model, stream_fn=self._agent.stream_fn, options=self._agent.request_options,
                         retry=lambda: self._settings.retry if self._retry_enabled() else None,
                         emit=self._emit, source=source, reason=reason, closed=self._input_closed)

    def input_closed(self) -> None:
        """No client any more (RPC stdin EOF): a summary request is not retried again, a retry waiting for its
        backoff ends (the compaction fails with the last error), as a run's retries do (docs/rpc.md)."""
        self._input_closed.set()

    async def run_guarded(self, coro: Awaitable[T]) -> T:
        """Run `coro` (a branch summary) as this controller's task, so `abort` cancels it like a compaction.
        Raises CancelledError when it was aborted."""
        return await abortable_step(coro, aborted=lambda: False, track=self._track)

    # -- helpers ---------------------------------------------------------------------------------------------

    def settings_for(self, model: Model) -> CompactionSettings:
        """The compaction settings for `model`, token budgets scaled to its context window
        (`Settings.compaction_for`)."""
        window = int(model.get("contextWindow") or 0)
        return self._settings.compaction_for(model["provider"], model["id"], window)

    def context_tokens(self) -> int:
        """Tokens of the next request (`tokens.context_tokens`, the system prompt and tool definitions counted
        while no response has reported usage): the one estimate the threshold trigger, `tokensBefore` and
        `get_session_stats.contextUsage` share."""
        messages = self._agent.messages
        return context_tokens(messages, self._overhead()) if messages else 0  # 0 without building a prompt

    def overflow_advice(self) -> str:
        """What the user can do when compaction cannot bring the context under the model's window (appended,
        with a leading space, to unresolved-overflow messages)."""
        model = self._agent.model
        if model is None:
            return ""
        window = int(model.get("contextWindow") or 0)
        keep = self.settings_for(model).keep_recent_tokens
        return (f" Compaction keeps the latest messages (about {keep} tokens, compaction.keepRecentTokens) and "
                f"every request carries the system prompt and tools (about {self._overhead()} tokens); together "
                f"with the summary they must fit the model's {window}-token context window. To go on: start a "
                "new session (new_session), use a larger context window (contextWindow in models.json, "
                "--context-window, set_context_window), or lower compaction.keepRecentTokens (for this model: "
                "compaction.modelOverrides).")

    def _overhead(self) -> int:
        """The system prompt (the one the last run sent, else the one the next run will send) and tools."""
        return overhead_tokens(self._agent.system_prompt or self._system_prompt(), self._agent.tools)

    async def _recover(self) -> asyncio.Task | None:
        from ..retry import forget_failed_attempt  # imported here: retry is not needed unless a run overflowed

        messages = self._agent.messages
        if messages and is_context_overflow(messages[-1]):  # like a retried attempt: hidden live and once resumed
            forget_failed_attempt(messages, self._store(), messages[-1])
        outcome = await self._run("overflow", will_retry=True)
        if outcome.result is None:
            return None
        try:
            run = self._agent.start([], repeat=True)
        except RuntimeError:  # the model went away meanwhile
            return None
        self._overflow_retrying = True
        return run

    def _report_unresolved(self, prefix: str, failed: AgentMessage | None) -> None:
        error = prefix + str((failed or {}).get("errorMessage") or "") + self.overflow_advice()
        self._emit(CompactionStart(type="compaction_start", reason="overflow"))
        self._emit(CompactionEnd(type="compaction_end", reason="overflow", result=None, aborted=False,
                                 willRetry=False, unresolvedOverflow=True, errorMessage=error))

    def _plan_problem(self) -> str | None:
        """Why a compaction of the current branch would find nothing to do (checked before promising an
        overflow retry), or None when it has work."""
        model = self._agent.model
        if model is None:
            return "no model selected"
        settings = self.settings_for(model)
        try:
            if settings.strategy == "verbatim-lines":
                from .verbatim import VerbatimParams, check_plan

                check_plan(self._store().branch(), VerbatimParams.from_settings(self._settings))
            else:
                from .cut_points import prepare

                prepare(self._store().branch(), settings.keep_recent_tokens)
        except CompactionError as exc:
            return str(exc)
        return None

    def _context_key(self) -> tuple[int, object]:
        """What the agent's context is now: (message count, last message object). A retried model call drops
        its failed message (and writes a `context_edit`, so the leaf moves) yet gives back the same key; a new
        message, a tool result or a rebuilt context gives a new one."""
        messages = self._agent.messages
        return len(messages), _Same(messages[-1] if messages else None)

    def _should_compact(self, coming: int = 0) -> bool:
        """Over the threshold with `coming` more tokens (messages not in the context yet) and something to
        compact?"""
        model = self._agent.model
        if not self.enabled or model is None or self.is_compacting or self._failed_on == self._context_key():
            return False
        settings = self.settings_for(model)
        tokens = self.context_tokens() + coming
        if not over_threshold(tokens, int(model.get("contextWindow") or 0), settings.reserve_tokens):
            return False
        return self._plan_problem() is None  # nothing to compact yet: no attempt, no events


class _Same:
    """Equal to another `_Same` holding the very same object (identity, not value: two equal messages are
    still two messages); holding it keeps its id from being reused."""

    def __init__(self, item: object):
        self.item = item

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.item is self.item

    __hash__ = None  # type: ignore[assignment]


async def _value(value: T) -> T:
    return value
