"""How prompts enter a session: `submit` (plugin commands, plugin input handlers, then `prompt`), `prompt`,
`steer` and `follow_up`, and whether prompts can run at all (a model with a key).

A prompt is started as a run (`SessionRun.start`) or queued (steering / follow-up) while one is going on. A
prompt a plugin handled ends with one `agent_settled` like a started one (docs/rpc.md, "handled" prompts).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Awaitable, Callable, NoReturn, TypeVar

from ..agent.agent import QUEUE_MODES
from ..agent.loop import now_ms
from ..ai.catalogue import PROVIDER_ENV_KEYS
from ..ai.types import ImageContent, UserContent, UserMessage
from .errors import BusyError, CommandError
from .events import AgentSettled, Emit
from .hooks import HookCalls
from .paths import path_text
from .queue_journal import QueueJournal
from .session.stats import estimate_tokens
from .tool_sources import NoToolSource

if TYPE_CHECKING:
    from ..agent.agent import Agent
    from .compaction.controller import CompactionController
    from .models.registry import ModelRegistry
    from .session.store import SessionStore
    from .resources.loader import SessionResources
    from .run import SessionRun
    from .hooks import SessionHooks
    from .tool_sources import ToolSource

T = TypeVar("T")

INPUT_CANCEL_GRACE_S = 1.0
"""Seconds `abort` waits for the plugin input handling it cancelled to end (its prompt is answered by then)."""


class Intake:
    """The prompt side of one AgentSession (`session.intake`). `hooks()`, `resources()` and `model_problem()`
    are read at each use (the factory and the plugin runner replace them); `closed()` refuses everything once
    the session closed; `emit` sends the `agent_settled` of handled prompts. `journal` keeps the queue on disk
    (`queue_journal.py`; `store()` is the current store)."""

    def __init__(self, *, agent: Agent, run: SessionRun, compaction: CompactionController, registry: ModelRegistry,
                 hooks: Callable[[], SessionHooks], resources: Callable[[], SessionResources],
                 closed: Callable[[], bool], model_problem: Callable[[], str | None],
                 emit: Emit, store: Callable[[], SessionStore], mcp: Callable[[], ToolSource] | None = None):
        self._agent = agent
        self._run = run
        self._compaction = compaction
        self._registry = registry
        self._hooks = hooks
        self._resources = resources
        self._closed = closed
        self._model_problem = model_problem
        self._emit = emit
        self.journal = QueueJournal(agent=agent, store=store)  # queued messages on disk before their answer
        self._mcp = mcp or NoToolSource  # `/mcp:<server>:<prompt>` expansion (mcp/prompts.py)
        self._inputs: set[asyncio.Task] = set()  # prompts in plugin input handling (`abort` cancels them)
        self._open_commands: set[asyncio.Future[object]] = set()  # handled prompts' commands not yet settled
        self._held_aborted = False  # `aborted` of the work whose `agent_settled` waits for running commands
        run.settle_gate = self._settle_gate
        self._input_lock = asyncio.Lock()  # prompts pass input handlers one at a time, in arrival order
        self._changes: list[asyncio.Future[None]] = []  # session changes not yet done, in arrival order
        self._held: set[asyncio.Task] = set()  # prompts waiting for them (`abort` cancels them, a change not)
        self._turns: set[asyncio.Task] = set()  # commands waiting for their turn among the prompts (`in_turn`)
        self.change_hooks = HookCalls()  # the veto calls those changes wait on (`switching.py`; `abort` stops them)

    def submit(self, text: str, images: list[ImageContent] | None = None,
               streaming_behavior: str | None = None) -> Awaitable[str]:
        """The RPC `prompt` path (seed 000): a plugin command runs at once, even mid-run (`"handled"`); plugin
        input handlers may transform the text or handle it (`"handled"`); the rest goes to `prompt`.
        A handled prompt ends with one `agent_settled` like a started one (`_settle_handled`); a command that
        `abort` cancelled ends it with `aborted: true`. Prompts pass the input handlers one at a time, in arrival
        order; an `abort` meanwhile cancels them and the prompt is refused (`CommandError`), nothing sent.
        A prompt submitted while session changes are pending (`session_change`) waits until they are done and
        is then handled in the session that exists; an `abort` meanwhile refuses it likewise.
        The prompt takes its place now, at the call (an `abort` called later does not cancel it): await the
        result, the disposition. Raises `CommandError` (at the call when the session is closed), and at once
        `RuntimeError` outside a running event loop (`need_loop`)."""
        need_loop("submit")
        self._check_open()
        if self._changes:
            waiting = asyncio.ensure_future(asyncio.wait(list(self._changes)))
            self._held.add(waiting)
            return self._submit_held(waiting, text, images, streaming_behavior)
        return self._submit_now(text, images, streaming_behavior)

    async def _submit_held(self, waiting: asyncio.Task, text: str, images: list[ImageContent] | None,
                           streaming_behavior: str | None) -> str:
        try:
            await _refused_if_cancelled(waiting, "Aborted while the prompt waited for a session change: the "
                                                 "prompt was not sent")
        finally:
            self._held.discard(waiting)
        self._check_open()
        return await self._submit_now(text, images, streaming_behavior)

    def _submit_now(self, text: str, images: list[ImageContent] | None,
                    streaming_behavior: str | None) -> Awaitable[str]:
        command = self._hooks().run_command(text)
        if command is not None:
            self._open_commands.add(command)
            command.add_done_callback(self._command_done)
            return _result("handled")
        stage = [self._first_stage()]  # where an `abort` found it: its refusal says so
        task = asyncio.ensure_future(self._take_input(text, images, streaming_behavior, stage))
        self._inputs.add(task)
        return self._disposition(task, stage)

    def _first_stage(self) -> str:
        if self._input_lock.locked():
            return "the prompts before it were taken in"
        if self._hooks().handles_input():
            return "plugin input handlers were running"
        return "the prompt was being taken in"

    async def _disposition(self, task: asyncio.Task, stage: list[str]) -> str:
        try:
            disposition = await _refused_if_cancelled(
                task, lambda: f"Aborted while {stage[-1]}: the prompt was not sent")
        finally:
            self._inputs.discard(task)
        if disposition == "handled":
            asyncio.get_running_loop().call_soon(self._settle_handled, False)  # after the caller's answer
        return disposition

    async def _take_input(self, text: str, images: list[ImageContent] | None,
                          streaming_behavior: str | None, stage: list[str]) -> str:
        """Plugin input handlers, then `prompt`, under the input lock: runs start and queue in arrival order.
        `stage` gets what it is waiting for at each step (the refusal an `abort` gets names it)."""
        async with self._input_lock:
            self._check_open()
            hooks = self._hooks()
            if hooks.handles_input():
                stage.append("plugin input handlers were running")
            else:
                stage.append("the prompt was being taken in")
            accepted = await hooks.input(text, images, streaming_behavior)
            if accepted is None:
                return "handled"
            expansion = self._mcp().expand_prompt(accepted[0])  # a server prompt: asked for, in arrival order
            if expansion is not None:
                stage.append("the MCP server's prompt was being fetched")
                text, extra = await expansion
                return self.prompt(text, [*(accepted[1] or []), *extra] or None, streaming_behavior, expand=False)
            return self.prompt(accepted[0], accepted[1], streaming_behavior)

    @property
    def taking_in(self) -> bool:
        """Whether prompts submitted are still being taken in (in plugin input handlers, or waiting for them or
        for a session change): their disposition has not come yet."""
        return bool(self._inputs or self._held)

    @property
    def running_commands(self) -> frozenset[asyncio.Future[object]]:
        """The plugin commands of handled prompts still running (one submitted just now is among them)."""
        return frozenset(self._open_commands)

    def _command_done(self, command: asyncio.Future[object]) -> None:
        if command in self._open_commands:  # not yet settled by `terminate`
            self._open_commands.discard(command)
            self._settle_handled(command.cancelled())

    def settle_open_commands(self) -> None:
        """Termination: commands that ignored their cancellation still end their prompts (one `agent_settled`
        `aborted: true`) before the process exits; their own end later emits nothing."""
        if self._open_commands:
            self._open_commands.clear()
            self._settle_handled(True)

    def _settle_handled(self, aborted: bool) -> None:
        """A handled prompt's command is over: `agent_settled` once nothing is left going on, no run and no
        other command (a run still going sends it at its end, `_settle_gate`). Clients wait for it after every
        accepted prompt, and it comes after all the command did (docs/rpc.md, "handled" prompts)."""
        self._held_aborted = self._held_aborted or aborted
        if not self._open_commands and not self._run.is_streaming:
            aborted, self._held_aborted = self._held_aborted, False
            self._emit(AgentSettled(type="agent_settled", aborted=aborted))

    def _settle_gate(self, aborted: bool) -> bool | None:
        """A run's end: the `aborted` its `agent_settled` sends, or None while handled prompts' commands still
        run (the last one to end sends it, so a prompt is never closed before its command is over)."""
        aborted = self._held_aborted or aborted
        if self._open_commands:
            self._held_aborted = aborted
            return None
        self._held_aborted = False
        return aborted

    def prompt(self, text: str, images: list[ImageContent] | None = None,
               streaming_behavior: str | None = None, *, expand: bool = True) -> str:
        """Accept a prompt: start a run, or queue it while one is going on. Returns the disposition
        (`"started"` or `"queued"`). Raises `CommandError` when it cannot be accepted. A leading
        `/skill:<name>` or `/<template>` is expanded unless `expand` is False. Starting a run outside a running
        event loop raises `RuntimeError` instead: the run could never go on (`need_loop`)."""
        self._check_open()
        message = self._fitting(user_message(self._resources().expand(text) if expand else text, images))
        if self._run.is_streaming or self._compaction.is_compacting:  # sent after it (`SessionRun.idle_work`)
            streaming_behavior = streaming_behavior or self._after_run_behavior()
            if streaming_behavior not in ("steer", "followUp"):
                raise BusyError(
                    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue "
                    "the message.")
            self.queue(message, streaming_behavior)
            return "queued"
        self.check_ready()
        need_loop("prompt")
        self._run.start([message])
        return "started"

    def _after_run_behavior(self) -> str | None:
        """A client that finishes on `agent_end` (SPEC-NOTES: older clients do) may prompt while the session
        still compacts after the run; that prompt is queued as a follow-up instead of refused."""
        after_run = self._run.is_streaming and not self._agent.is_streaming and self._compaction.is_compacting
        return "followUp" if after_run else None

    def queue(self, message: UserMessage, behavior: str) -> None:
        """Queue `message` as `behavior` ("steer" or "followUp"), its pending entry written first."""
        self._check_open()
        self.journal.record(message, behavior)
        if behavior == "steer":
            self._agent.steer(message)
        else:
            self._agent.follow_up(message)

    def set_queue_mode(self, queue: str, mode: str) -> None:
        """`queue` is "steering" or "followUp"; `mode` is "all" or "one-at-a-time". Raises `CommandError`."""
        if queue not in ("steering", "followUp"):
            raise CommandError(f"Invalid queue: {queue!r}. Valid queues: steering, followUp")
        if mode not in QUEUE_MODES:
            raise CommandError(f"Invalid mode: {path_text(mode)}. Valid modes: all, one-at-a-time")
        if queue == "steering":
            self._agent.steering_mode = mode
        else:
            self._agent.follow_up_mode = mode

    def steer(self, text: str, images: list[ImageContent] | None = None) -> str:
        """Queue a message for delivery after the current turn's tool calls; returns the disposition."""
        self._refuse_plugin_command(text, "steer")
        self._refuse_during_change("steer")
        self.queue(self._fitting(user_message(self._resources().expand(text), images)), "steer")
        return "queued"

    def follow_up(self, text: str, images: list[ImageContent] | None = None) -> str:
        """Queue a message for delivery when the agent would otherwise stop; returns the disposition."""
        self._refuse_plugin_command(text, "follow_up")
        self._refuse_during_change("follow_up")
        self.queue(self._fitting(user_message(self._resources().expand(text), images)), "followUp")
        return "queued"

    def _fitting(self, message: UserMessage) -> UserMessage:
        """`message`, unless its own estimated tokens (chars/4, images at their fixed estimate: the estimate
        compaction uses) exceed the model's context window: then `CommandError`, before anything is queued,
        sent or written. No request could carry it, and retries and compaction would only fail the same way."""
        model = self._agent.model
        window = int(model.get("contextWindow") or 0) if model is not None else 0
        tokens = estimate_tokens(message)
        if 0 < window < tokens:
            raise CommandError(
                f"The prompt is too large for the context window of {model['provider']}/{model['id']}: about "
                f"{tokens:,} tokens (estimated) against a window of {window:,} tokens; shorten it, attach less, "
                "or choose a model (or context window) that fits it. Nothing was sent.")
        return message

    def names_command(self, text: str) -> bool:
        """Whether `text` starts with a `/name` that `submit` runs or expands: a plugin command, a prompt
        template, a `/skill:` command or an MCP server's prompt."""
        return self._hooks().command_name(text) is not None or self._resources().expand(text) != text \
            or self._mcp().names_prompt(text)

    def _refuse_plugin_command(self, text: str, command: str) -> None:
        name = self._hooks().command_name(text)
        if name is not None:  # seed 000: plugin commands are not allowed here (they run at once from prompt)
            raise CommandError(f"Plugin command /{name} cannot be sent with {command}: send it with prompt, "
                               "which runs it at once even while the agent is working")
        if self._mcp().names_prompt(text):  # its expansion asks the server: only `prompt` waits for that
            raise CommandError(f"MCP prompts ({text.split()[0]}) cannot be sent with {command}: send them with "
                               "prompt and streamingBehavior")

    def _refuse_during_change(self, command: str) -> None:
        if self._changes:  # it would be queued in the session being left, whose queue the change drops
            raise CommandError(f"A session change is pending: {command} is refused (the message would be dropped "
                               "with the session's queue); send it with prompt, which waits for the change")

    def _check_open(self) -> None:
        if self._closed():  # its file may belong to another session by now: nothing may be appended to it
            raise CommandError("session is closed")

    def readiness_problem(self) -> str | None:
        """One line for a front end to show at start-up when a prompt would fail for want of a model or key:
        the model it would use and the key it lacks (with where to set one), or that no model is configured
        and how to set one up. None when prompts can run."""
        try:
            self.check_ready()
        except CommandError as exc:
            model = self._agent.model
            where = f"model {model['provider']}/{model['id']}: " if model is not None else ""
            return f"prompts will fail until this is fixed: {where}{exc}".replace("\n", " ")
        return None

    def check_ready(self) -> None:
        model = self._agent.model
        if model is None:
            raise CommandError(self._model_problem() or no_model_message(self._registry))
        if not self._registry.has_auth(model):
            raise CommandError(self._registry.auth_error_message(model))

    def session_change(self, change: Awaitable[T]) -> Awaitable[T]:
        """`change` (a session change: new_session, switch_session, fork, clone), marked pending from this call
        until it is done: prompts submitted meanwhile wait for it (`submit`). Call it when the change arrives;
        await the result. `RuntimeError` outside a running event loop (`change` is closed unstarted)."""
        try:
            need_loop(getattr(change, "__name__", "a session change"))  # the coroutine's: new_session, fork, ...
        except RuntimeError:
            getattr(change, "close", lambda: None)()  # a coroutine never started: no "never awaited" warning
            raise
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._changes.append(done)
        return self._change(change, done)

    async def _change(self, change: Awaitable[T], done: asyncio.Future[None]) -> T:
        try:
            return await change
        finally:
            self._changes.remove(done)
            done.set_result(None)

    @property
    def holds_prompts(self) -> bool:
        """Whether a prompt submitted now would wait for a session change."""
        return bool(self._changes)

    def in_turn(self, act: Callable[[], Awaitable[T]], aborted: Callable[[], T]) -> Awaitable[T]:
        """`act()` at its turn among the prompts, for a command acting on what those sent before it did (`compact`;
        docs/rpc.md, "What a command stops or holds follows arrival order"): now when none (nor another such
        command) is being taken in, else once those taken in before the call have their outcome; prompts submitted
        after it wait until `act` returned. A client's `abort` before that turn cancels it: `act` is never called,
        the result is `aborted()`. Await the result. `RuntimeError` outside a running event loop."""
        need_loop("compact")
        if not self._turns and all(task.done() for task in self._inputs):
            return act()
        waiting = asyncio.ensure_future(self._in_line(act))
        self._turns.add(waiting)
        return _or_if_cancelled(waiting, aborted)

    async def _in_line(self, act: Callable[[], Awaitable[T]]) -> T:
        try:
            async with self._input_lock:  # behind the prompts taken in before it: the lock is first come first served
                work = act()
        finally:
            self._turns.discard(asyncio.current_task())  # from here on an abort stops the work itself
        return await work

    def begin_abort(self, *, held: bool = True, inputs: bool = True) -> Awaitable[None]:
        """`abort` in two parts: what it stops is stopped now (plugin dialogs and commands, prompts in plugin
        input handlers unless `inputs` is False and, when `held` (a client's abort, not a change's or a `compact`'s
        own), the prompts waiting for a session change, the veto calls such changes wait on (`change_hooks`) and
        the `compact` commands not begun (waiting for their turn or for the run's hand-over: they answer aborted);
        the run or its retry wait); the returned awaitable (await it) ends when the session settled or handed over
        to queued messages (the run side: `SessionRun.begin_abort`) and the cancelled plugin work ended (bounded
        waits), so after the answers of the changes it cancelled. `RuntimeError` outside a running event loop."""
        need_loop("abort")
        calls = self.change_hooks.stop() if held else []  # first: a dialog's default must not reach the hook
        if held:
            self._compaction.abort_requests()
        self._hooks().abort()
        cancelled = list(self._inputs) if inputs else []
        for task in [*cancelled, *((*self._held, *self._turns) if held else ())]:
            task.cancel()
        return self._aborted([*cancelled, *calls], self._run.begin_abort())

    def abort_for_compact(self) -> Awaitable[None]:
        """A `compact`'s own abort of the run (`begin_abort`): the run and plugin dialogs stop, no prompt is
        cancelled (one being taken in is queued, for after the compaction), nor another `compact`."""
        return self.begin_abort(held=False, inputs=False)

    async def _aborted(self, inputs: list[asyncio.Task], settled: Awaitable[None]) -> None:
        await settled
        await self.plugins_aborted(inputs)

    async def plugins_aborted(self, inputs: list[asyncio.Task]) -> None:
        if inputs:
            await asyncio.wait(inputs, timeout=INPUT_CANCEL_GRACE_S)
        await self._hooks().wait_aborted()


def need_loop(method: str) -> None:
    """Raise `RuntimeError` unless an asyncio event loop runs in this thread: a run started without one would
    never go on (and hold the session busy for good, a later loop's prompts waiting behind it). Checked before
    anything changes, so the session is as it was (docs/sdk.md: call these from a running event loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        raise RuntimeError(f"AgentSession: {method} needs a running asyncio event loop: call it from async code "
                           "(a coroutine run by asyncio.run); nothing was done") from None


async def _result(value: T) -> T:
    return value


async def _or_if_cancelled(task: asyncio.Future[T], aborted: Callable[[], T]) -> T:
    """`task`'s result, or `aborted()` (it may raise) when `abort` cancelled it (not when the caller is cancelled)."""
    try:
        return await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if not task.cancelled() or (current is not None and current.cancelling()):
            raise
    return aborted()


async def _refused_if_cancelled(task: asyncio.Future[T], refusal: str | Callable[[], str]) -> T:
    """`_or_if_cancelled` raising `CommandError(refusal)` (or `refusal()`: the text when the cancellation came)."""
    return await _or_if_cancelled(task, lambda: _refuse(refusal if isinstance(refusal, str) else refusal()))


def _refuse(text: str) -> NoReturn:
    raise CommandError(text)


def user_message(text: str, images: list[ImageContent] | None = None) -> UserMessage:
    """A user message; raises `CommandError` for text that is not a string, or blank text without images (a
    request with no user content is refused by providers)."""
    if not isinstance(text, str):
        raise CommandError(f"A prompt must be a string, got {type(text).__name__}")
    if not text.strip() and not images:
        raise CommandError("Empty prompt: send some text or an image")
    content: list[UserContent] = [{"type": "text", "text": text}]
    content.extend(images or [])
    return {"role": "user", "content": content, "timestamp": now_ms()}


def no_model_message(registry: ModelRegistry) -> str:
    return f"No model available: no provider has an API key. {key_setup_hint(registry)}"


def key_setup_hint(registry: ModelRegistry) -> str:
    """How to give a provider a key (environment, auth.json, models.json), with any models.json problem."""
    keys = ", ".join(PROVIDER_ENV_KEYS[p] for p in ("anthropic", "openai") if p in PROVIDER_ENV_KEYS)
    auth = getattr(registry, "auth", None)
    problem = auth.file_problem() if hasattr(auth, "file_problem") else None
    unusable = f" (unusable now: {problem})" if problem else ""
    return (f"Set {keys}, add a key to {path_text(registry.agent_dir / 'auth.json')}{unusable}, or configure a "
            f"provider in {path_text(registry.agent_dir / 'models.json')}."
            + (registry.errors_note() if hasattr(registry, "errors_note") else ""))
