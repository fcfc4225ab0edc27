"""SessionRun: one session-level run, from its start to `agent_settled`.

A session-level run may span several agent runs (`agent.start`):

    start(prompts) → MCP servers still starting, plugins' `before_run` (STARTING) → agent run (RUNNING)
      → retry waits (RETRY_WAIT; `retry.py` decides and reports `auto_retry_*`) and retried runs (RUNNING; a
        failed turn ends its run with messages still queued, and the retried run repeats the failed request)
      → HANDING_OVER: overflow recovery (`compaction.after_run`: compact, continue once: RUNNING) or the
        threshold check, then `compact` requests sent during the run (`compaction.at_hand_over`)
      → messages still queued: a new agent run (RUNNING), the run boundary passes (an `abort` returns here)
      → user bash commands held during the run join the conversation → `agent_settled{aborted}` → IDLE

`abort` moves the run to ABORTING: a run still starting starts aborted (its pre-run waits, MCP servers still
starting and plugins' `before_run`, are cancelled; the prompt is recorded all the same), a retry wait ends, the
agent and any compaction stop; messages still queued continue (seed 000).
"""

from __future__ import annotations

import asyncio
from enum import Enum
from functools import partial
from typing import TYPE_CHECKING, Any, Awaitable, Callable, TypeVar

from ..agent.loop import abortable_step
from .events import AgentSettled, Emit
from .retry import AutoRetry, forget_failed_attempt

if TYPE_CHECKING:
    from .settings import Settings
    from ..agent.agent import Agent
    from ..agent.types import AgentMessage
    from .compaction.controller import CompactionController, Outcome
    from .hooks import SessionHooks
    from .intake import Intake
    from .session.store import SessionStore

T = TypeVar("T")


class Phase(Enum):
    """Where the session-level run is."""

    IDLE = "idle"
    """No run: the next prompt starts one."""
    STARTING = "starting"
    """The pre-run waits: MCP servers still starting, plugins' `before_run`; the agent has not started yet."""
    RUNNING = "running"
    """An agent run is going on (the first, a retried one, an overflow recovery or queued messages)."""
    RETRY_WAIT = "retry_wait"
    """The backoff wait before a retry (`auto_retry_start` was sent); `abort` and `abort_retry` cut it short."""
    HANDING_OVER = "handing_over"
    """The agent run ended: overflow recovery, the threshold check and `compact` requests, then queued messages
    continue (RUNNING) or the run settles (IDLE)."""
    ABORTING = "aborting"
    """`abort` came during this run: it starts aborted (or not at all); it lasts until queued messages continue
    or the run settled."""


class SessionRun:
    """The run side of one AgentSession (`session.run`). `store()` is the current store, `hooks()` the plugin
    hooks, `system_prompt()` the prompt plugins may replace, `flush_held()` adds user bash commands held back
    during the run, `emit` sends events to the session's listeners."""

    def __init__(self, *, agent: Agent, compaction: CompactionController, settings: Settings,
                 store: Callable[[], SessionStore], hooks: Callable[[], SessionHooks],
                 system_prompt: Callable[[], str], flush_held: Callable[[], None], emit: Emit,
                 prepare: Callable[[], Awaitable[None] | None] = lambda: None):
        self._agent = agent
        self._compaction = compaction
        self._hooks = hooks
        self._system_prompt = system_prompt
        self._flush_held = flush_held
        self._emit = emit
        self._prepare = prepare  # awaited before a run starts: MCP servers still starting (abort cancels it)
        self.retry = AutoRetry(lambda: settings.retry, emit,
                               lambda failed: forget_failed_attempt(agent.messages, store(), failed))
        self._input_closed = False  # stdin EOF (RPC): no new automatic retry starts (`input_closed`)
        agent.will_retry = lambda new_messages: not self._input_closed and (
            self.retry.will_retry(new_messages) or compaction.will_retry(new_messages))
        self.phase = Phase.IDLE
        # the `aborted` to send in a run's `agent_settled`, or None to hold it back: plugin commands of handled
        # prompts still running end it later (`Intake._settle_gate`; docs/rpc.md, "handled" prompts)
        self.settle_gate: Callable[[bool], bool | None] = lambda aborted: aborted
        self._task: asyncio.Task | None = None  # from `start` until `agent_settled` was sent
        self._begin_task: asyncio.Task | None = None  # the pre-run waits (`abort` cancels them)
        # Set (and replaced) when the run settles or hands over to queued messages: every `abort` waiting
        # for the current run holds this one event, so all of them wake together.
        self._boundary = asyncio.Event()

    @property
    def is_streaming(self) -> bool:
        """True from `start` until `agent_settled` was sent (its listeners still see True)."""
        return self._task is not None and not self._task.done()

    def start(self, prompts: list[AgentMessage]) -> None:
        """Start a session-level run with `prompts` (user messages); the session must be idle."""
        self.phase = Phase.STARTING
        self._task = asyncio.ensure_future(self._settle(self._begin(prompts)))

    async def idle_work(self, work: Awaitable[T]) -> T:
        """Await `work`, a manual compaction or branch summary asked for while no run goes on. Messages queued
        while it ran start a run once it is over, however it ended (seed 000: abort continues queued messages),
        taking along those queued before it. `work` asked for while a run, a compaction or a branch summary goes
        on is expected to refuse: then nothing starts here, what is going on hands its queue over itself."""
        return await self.begin_idle_work(lambda: work)

    def begin_idle_work(self, begin: Callable[[], Awaitable[T]]) -> Awaitable[T]:
        """`idle_work` of `begin()`, called now (a compaction begun at the call: `CompactionController.manual`);
        await the result."""
        if self.is_streaming or self._compaction.is_compacting:
            return begin()
        before = self._queued()
        return self._queued_after(begin(), before)

    async def _queued_after(self, work: Awaitable[T], before: list[AgentMessage]) -> T:
        """`work`'s result; then a run for the messages queued since `before` (the queue when it began)."""
        try:
            return await work
        finally:
            queued = self._queued()
            if not self.is_streaming and any(all(m is not old for old in before) for m in queued):
                self.start(self._agent.take_queued() or [])

    def _queued(self) -> list[AgentMessage]:
        return [*self._agent.steering_queue, *self._agent.follow_up_queue]

    async def _begin(self, prompts: list[AgentMessage]) -> asyncio.Task:
        """Start the run once its pre-run waits are over (`_pre_run`). An `abort` during them cancels them and the
        run starts aborted with the system prompt as it is: the prompt is recorded (`agent_start`, its message,
        an aborted answer, `agent_end`) as when an abort comes while a `!command` key runs, and no request is
        sent."""
        if self.phase is Phase.ABORTING:  # the abort came before the waits began: none of them is started
            self._agent.system_prompt = self._system_prompt()
        else:
            self._agent.system_prompt = await abortable_step(
                self._pre_run(prompts), aborted=lambda: self.phase is Phase.ABORTING,
                unstarted=self._system_prompt, track=self._track_begin)
        run = self._agent.start(prompts)
        if self.phase is Phase.ABORTING:  # the abort came while the run was starting: it starts aborted
            self._agent.abort()
        self._enter(Phase.RUNNING)
        return run

    async def _pre_run(self, prompts: list[AgentMessage]) -> str:
        """The waits before a run: MCP servers still starting (`prepare`), then plugins' `before_run` (they may
        add context messages or change the system prompt). Returns the run's system prompt."""
        waiting = self._prepare()
        if waiting is not None:
            await waiting
        return await self._hooks().before_run(prompts, self._system_prompt())

    def _track_begin(self, task: asyncio.Task | None) -> None:
        self._begin_task = task

    async def _settle(self, starting: Awaitable[asyncio.Task]) -> None:
        retry_aborted = False
        try:
            run = await starting
            while True:
                retry_aborted = await self._follow(run)
                self._enter(Phase.HANDING_OVER)
                recovery = await self._compaction.after_run()  # overflow recovery, threshold check
                if recovery is not None:
                    run = recovery
                    self._enter(Phase.RUNNING)
                    continue
                await self._compaction.at_hand_over()  # a `compact` sent during the run, before the queue goes on
                queued = self._agent.take_queued()
                if queued is None:
                    break
                run = self._agent.start(queued)  # seed 000: abort continues messages still queued
                self.phase = Phase.RUNNING  # not aborted: an abort ended the run that handed over
                self._pass_boundary()
        finally:
            self._flush_held()  # user commands that finished mid-run join the conversation now
            aborted = self.settle_gate(self._compaction.take_aborted() or retry_aborted or self._agent.was_aborted)
            if aborted is not None:
                self._emit(AgentSettled(type="agent_settled", aborted=aborted))
            self.phase = Phase.IDLE
            self._pass_boundary()

    async def _follow(self, run: asyncio.Task) -> bool:
        """Wait for `run`, then for each retry the loop was promised (`agent_end{willRetry: true}`): the backoff
        wait, then a run continuing the context. True when `abort` ended the chain (`retry.py`)."""
        retry = self.retry
        retry.start_chain()
        await asyncio.wait({run})
        while retry.take_promised():
            self._enter(Phase.RETRY_WAIT)
            if not await retry.backoff():
                break
            try:
                run = self._agent.start([], repeat=True)  # its task reads the context once it runs
            except RuntimeError as exc:  # e.g. the model was removed meanwhile: the chain cannot go on
                retry.end_failed(str(exc))  # the failed attempt stays the outcome
                break
            retry.begin_attempt()
            self._enter(Phase.RUNNING)
            await asyncio.wait({run})
        return retry.cancelled_by_abort

    def _enter(self, phase: Phase) -> None:
        if self.phase is not Phase.ABORTING:  # an aborted run stays aborted until it hands over or settles
            self.phase = phase

    def _pass_boundary(self) -> None:
        """Wake every `abort` waiting for the current run; later ones wait for the next boundary."""
        boundary, self._boundary = self._boundary, asyncio.Event()
        boundary.set()

    async def wait_for_idle(self) -> None:
        """Return once no run and no compaction (or branch summary) is going on."""
        compaction = self._compaction
        while self.is_streaming or compaction.is_compacting:
            await asyncio.wait({t for t in (self._task, compaction.task) if t and not t.done()})

    async def abort(self) -> None:
        """Abort the running step (or a retry's backoff wait) and any compaction; returns once the run settled
        or, when messages were still queued, once the aborted run handed over to them. At once when idle
        (after stopping a manual compaction or branch summary)."""
        await self.begin_abort()

    def input_closed(self) -> None:
        """No client any more (RPC stdin EOF): the work going on finishes, but no new automatic retry (after a
        provider error or a context overflow) starts, and a retry waiting for its backoff is cancelled, so the
        agent exits after the current attempt (docs/rpc.md, "End of input")."""
        self._input_closed = True
        self.retry.cancel()
        self._compaction.input_closed()

    def begin_abort(self) -> Awaitable[None]:
        """`abort`'s immediate part: the run, its retry wait and a starting run are stopped now; the returned
        awaitable (await it) stops any compaction and ends when `abort` would return."""
        if not self.is_streaming:
            return self._compaction.cancel()  # a manual compaction or branch summary: stopped now too
        boundary = self._boundary  # taken first: the run may settle during any await below
        self.retry.cancel(aborted=True)
        self.phase = Phase.ABORTING
        if self._begin_task is not None:
            self._begin_task.cancel()  # MCP servers or plugins still holding the run: it starts aborted
        self._agent.abort()
        return self._aborted(boundary)

    async def _aborted(self, boundary: asyncio.Event) -> None:
        await self._compaction.cancel_and_wait()  # one between turns (the loop stops) or after the run
        await boundary.wait()  # settled, or the aborted run handed over to queued messages

    async def abort_retry(self) -> None:
        """Cancel a retry's backoff wait and stop retrying; returns at the next hand-over, like `abort`: once
        the run settled or the cut-short chain handed over to queued messages (not after their run). At once
        when no wait is going on (a retried run still streaming then ends the chain when it fails)."""
        boundary = self._boundary  # taken first: the chain may hand over during the await below
        if self.retry.cancel():
            await boundary.wait()

    def compact(self, custom_instructions: str | None, session_id: str, intake: Intake) -> Awaitable[dict[str, Any]]:
        """The `compact` command on session `session_id` (`AgentSession.compact`), in arrival order (docs/rpc.md,
        "What a command stops or holds follows arrival order"): it acts at its turn among the prompts
        (`intake.in_turn`: at the call, or once the prompts taken in before it have their outcome). A run going on
        then (also one such a prompt started) is aborted (`intake.abort_for_compact`: the run and plugin dialogs,
        no prompt) and compacted at its hand-over, before queued messages continue; else it compacts now. So the
        prompts sent before it are handled as they would be, and one sent after it is queued for after the
        compaction. Await the result: the compaction result (`CompactionController.result`: the `compact`
        response data); `CommandError` when it fails, `AbortedError` when it is aborted (also by a client's
        `abort` sent after it: `Intake.begin_abort`)."""
        act = partial(self._compact_at_turn, custom_instructions, session_id, intake.abort_for_compact)
        return self._compaction.answer(intake.in_turn(act, self._compaction.aborted_outcome))

    def _compact_at_turn(self, custom_instructions: str | None, session_id: str,
                         abort: Callable[[], Awaitable[None]]) -> Awaitable[Outcome]:
        """The run going on aborted now and compacted at its hand-over, or a compaction begun now: the outcome."""
        if self.is_streaming:
            request = self._compaction.request(custom_instructions, session_id)
            return self._at_hand_over(custom_instructions, session_id, request, abort())
        return self._compact_now(custom_instructions, session_id)

    async def _at_hand_over(self, custom_instructions: str | None, session_id: str,
                            request: asyncio.Future[Outcome], aborted: Awaitable[None]) -> Outcome:
        """`request`'s outcome once `aborted` (the run's abort) is over and the run handed over. A request the run
        had already passed waits for the next hand-over (of the queued messages' run) and, when none ran it, is
        withdrawn and run once the session is idle; a client's `abort` meanwhile ends it (`abort_requests`)."""
        await aborted  # the run hands over at `at_hand_over`, which runs the request
        if not request.done():
            await self.wait_for_idle()  # already past its hand-over
        if request.done():
            return request.result()
        self._compaction.withdraw(custom_instructions, session_id, request)
        return await self._compact_now(custom_instructions, session_id)

    def _compact_now(self, custom_instructions: str | None, session_id: str) -> Awaitable[Outcome]:
        """A manual compaction while no run goes on, begun now (`begin_idle_work`: messages queued meanwhile run
        after it)."""
        return self.begin_idle_work(lambda: self._compaction.manual(custom_instructions, session_id))
