"""AgentSession: the hub every mode drives — agent, session file, model registry and settings in one object.

Modes stay thin: RPC commands, print mode and the SDK call the methods here. Every entry is appended to the
session file before the event that reports it reaches a listener, so a client that saw `message_end` can trust
the entry is on disk, unless a `session_write_error` came first: the entry then waits in memory, in order,
until a write succeeds (`session_write_resumed`).
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from ..agent.agent import QUEUE_MODES, Agent
from ..agent.loop import now_ms
from ..agent.types import AgentTool
from ..ai.types import Model
from .events import AgentSettled, SessionEvent, SessionWriteError, SessionWriteResumed
from .message_persist import persist_message
from .retry import AutoRetry, forget_failed_attempt
from .session_entries import OMIT
from .session_hooks import SessionHooks, change_session
from .session_store import SessionStore

if TYPE_CHECKING:
    from .tools.output_files import OutputDir

Listener = Callable[[SessionEvent], None]
INPUT_CANCEL_GRACE_S = 1.0
"""Seconds `abort` waits for the plugin input handling it cancelled to end (its prompt is answered by then)."""

WRITE_RETRY_S = 2.0
"""While session entries wait after a failed write, a write is retried this often (besides every new append),
so a freed disk is noticed while the session is idle."""


class CommandError(Exception):
    """A command was rejected before it changed anything; the message is shown to the client as is."""


@dataclass(kw_only=True)
class SessionOptions:
    """How to build a session. `session_file` resumes that file; `no_session` keeps everything in memory.
    `model` is a pattern (`provider/id[:thinking]`) or, from the SDK, a Model dict used as is (`faux_model()`).
    `stream_fn` replaces the provider registry (tests, SDK users with a custom transport)."""

    cwd: str
    agent_dir: Path | None = None
    provider: str | None = None
    model: str | Model | None = None
    api_key: str | None = None
    thinking: str | None = None
    session_file: str | None = None
    fork_from: str | None = None
    """`--fork`: start a new session (in `cwd`) holding a copy of this file's active branch."""
    session_id: str | None = None
    """`--session-id` of a new session (else a fresh uuid); the CLI opens an existing one of that id instead."""
    session_dir: str | None = None
    no_session: bool = False
    name: str | None = None
    tools: list[AgentTool] | None = None
    system_prompt: str | None = None
    append_system_prompt: str | list[str] | None = None
    stream_fn: Any = None
    scoped_models: str | list[str] | None = None
    """`--models`: patterns `cycle_model` walks through (else settings `enabledModels`); see model_control."""
    context_window: str | int | None = None
    """`--context-window`: `400k`, `1m` or a token count, for the start-up model."""
    # Resources, tools and project trust (coding/resources/, coding/tools/selection.py): the CLI flags of the
    # same names. `system_prompt` and `append_system_prompt` items are text or the path of a file.
    no_context_files: bool = False
    no_skills: bool = False
    no_prompt_templates: bool = False
    skill_paths: list[str] | tuple[str, ...] = ()
    prompt_template_paths: list[str] | tuple[str, ...] = ()
    tool_names: list[str] | None = None
    """`--tools`: plain names (or `*` patterns) are an allowlist; only `+name`/`-name` entries change the defaults."""
    no_tools: bool = False
    no_builtin_tools: bool = False
    exclude_tools: list[str] | tuple[str, ...] = ()
    """`--exclude-tools`: names or `*` patterns disabled after every other selection, plugin tools included."""
    approve: bool | None = None
    """`--approve` (True) / `--no-approve` (False): this run's project-trust decision."""
    no_project_resources: bool = False
    """`--no-project-resources`: ignore `<cwd>/.agent-forge/agent/` entirely."""
    start_without_model: bool = False
    """RPC mode: a `--model` / `--provider` that matches nothing is a warning, not a `CommandError`; the session
    starts without a model, and prompts answer why (`AgentSession.model_problem`)."""


class AgentSession:
    """One conversation: its agent, store, model and listeners. Build it with `create_session(options)`."""

    def __init__(self, *, store: SessionStore, agent: Agent, registry: Any, settings: Any, cwd: str,
                 system_prompt_override: str | None = None, append_system_prompt: str | None = None):
        self.store = store
        self.agent = agent
        self.registry = registry
        self.settings = settings
        self.cwd = cwd
        self.warnings: list[str] = []
        self._listeners: list[Listener] = []
        self._settle_task: asyncio.Task | None = None
        self.write_failures: list[str] = []
        """Each distinct session-file write error of this process, in order (print mode exits 1 when any)."""
        self._write_retry: asyncio.TimerHandle | None = None
        self.model_problem: str | None = None
        """Why the start-up model is missing (an unresolved `--model` in RPC mode): the answer to prompts."""
        # Set (and replaced) when the run settles or hands over to queued messages: every `abort` waiting
        # for the current run holds this one event, so all of them wake together.
        self._run_boundary = asyncio.Event()
        self._system_prompt_override = system_prompt_override
        self._append_system_prompt = append_system_prompt
        self.retry = AutoRetry(lambda: self.settings.retry, self._emit,
                               lambda failed: forget_failed_attempt(self.agent.messages, self.store, failed))
        agent.will_retry = lambda new_messages: (self.retry.will_retry(new_messages)
                                                 or self.compaction.will_retry(new_messages))
        self.session_dir: str | None = None  # sessions root for stores this session creates later (new_session)
        from .user_bash import UserBash  # imported here: user_bash imports this module

        self.user_bash = UserBash(self)
        from .model_control import ModelControl  # imported here: model_control imports this module

        self.model_control = ModelControl(self)
        from .compaction.controller import CompactionController

        self.compaction = CompactionController(self)  # manual, threshold and overflow compaction
        agent.before_turn = self.compaction.before_turn
        self.hooks: SessionHooks = SessionHooks()
        """Plugin hook points (`session_hooks.py`); the plugin runner replaces the no-op default."""
        from .resources.loader import SessionResources

        self.resources = SessionResources()
        """Context files, skills, templates, prompt files and the project policy (`resources/loader.py`)."""
        from .tools.selection import ToolSelection

        self.tool_selection = ToolSelection()
        """Which tools are active (`tools/selection.py`; the factory resolves it): `admits(name)` for plugin tools."""
        self._abort_pending = False  # an abort that came while a run was still starting
        self.closed = False
        """Set by `close` and `terminate`: `prompt`, `submit`, `steer` and `follow_up` then raise `CommandError`."""
        self._begin_task: asyncio.Task | None = None
        self._inputs: set[asyncio.Task] = set()  # prompts in plugin input handling (`abort` cancels them)
        self._open_commands: set[asyncio.Future[Any]] = set()  # handled prompts' commands not yet settled
        self._input_lock = asyncio.Lock()  # prompts pass input handlers one at a time, in arrival order
        self._watch_writes(store)
        self._output_dirs: list[OutputDir] = []  # one for each session this process ran commands for, latest last
        from .tools.output_files import start_pruning

        start_pruning()  # stale full-output files of earlier runs go, in the background

    # -- events --------------------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(event)` for every event, synchronously and in order. Returns an unsubscribe function.
        An exception raised by a listener is printed to stderr; the run and the other listeners go on."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def emit(self, event: SessionEvent) -> None:
        """Send `event` to every listener (plugins report `extension_error` and interaction requests so)."""
        self._emit(event)

    def _emit(self, event: SessionEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # a subscriber's bug must not end the run or pose as a provider/tool error
                import traceback

                traceback.print_exc()

    def on_agent_event(self, event: dict[str, Any]) -> None:
        """Persist first, then tell listeners (the durability promise of this module)."""
        if event["type"] == "message_end":
            self._persist(event["message"])
        self._emit(event)
        self.retry.observe(event)  # auto_retry_* events follow the event that caused them

    def _persist(self, message: dict[str, Any]) -> None:
        """Append a message entry. A failing disk must not kill the run the client is watching: the store
        keeps the entry until a write succeeds and `_on_write_state` tells the client."""
        if message.get("role") == "custom":  # plugin context has its own entry type (session format)
            self.store.append_custom_message(message.get("customType", ""), message.get("content", ""),
                                             message.get("display", True), message.get("details", OMIT))
        else:
            persist_message(self.store.append_message, message)  # unencodable values must not end the run

    def _watch_writes(self, store: SessionStore) -> None:
        store.on_write_state = lambda previous: self._on_write_state(store, previous)
        if store.write_error is not None:  # a fork or clone whose first write already failed
            self._on_write_state(store, None)

    def _on_write_state(self, store: SessionStore, previous: str | None) -> None:
        """Tell listeners at once that the session file's writes failed (`session_write_error`) or caught up
        (`session_write_resumed`), note it on stderr, and retry every `WRITE_RETRY_S` while entries wait."""
        state = store.write_error
        if state is None:
            print(f"agent-forge: the session file is written again: {store.path}", file=sys.stderr)
            self._emit(SessionWriteResumed(type="session_write_resumed", path=str(store.path)))
            return
        if state["error"] not in self.write_failures:
            self.write_failures.append(state["error"])
        print(f"agent-forge: the session file could not be written: {state['path']}: {state['error']} "
              f"({entries_text(state['pendingEntries'], 'wait')} in memory)", file=sys.stderr)
        self._emit(SessionWriteError(type="session_write_error", **state))
        self._schedule_write_retry()

    def _schedule_write_retry(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop (SDK use outside asyncio): the next append retries
        if self._write_retry is None:
            self._write_retry = loop.call_later(WRITE_RETRY_S, self._retry_writes)

    def _retry_writes(self) -> None:
        self._write_retry = None
        if not self.closed and not self.store.flush():
            self._schedule_write_retry()

    # -- state ---------------------------------------------------------------------------------------

    @property
    def model(self) -> Model | None:
        return self.agent.model

    @property
    def is_streaming(self) -> bool:
        return self._settle_task is not None and not self._settle_task.done()

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.agent.messages

    def get_state(self) -> dict[str, Any]:
        """The `get_state` response data (seed 000)."""
        state: dict[str, Any] = {
            "model": self.model,
            "thinkingLevel": self.agent.thinking_level,
            "isStreaming": self.is_streaming,
            "isCompacting": self.compaction.is_compacting,
            "steeringMode": self.agent.steering_mode,
            "followUpMode": self.agent.follow_up_mode,
            "sessionFile": str(self.store.path) if self.store.path else None,
            "sessionId": self.store.session_id,
            "autoCompactionEnabled": self.compaction.enabled,
            "messageCount": len(self.agent.messages),
            "pendingMessageCount": len(self.agent.steering_queue) + len(self.agent.follow_up_queue),
        }
        name = self.store.session_name
        if name:
            state["sessionName"] = name
        write_error = self.store.write_error
        if write_error is not None:
            state["sessionWriteError"] = write_error
        return state

    def get_session_stats(self) -> dict[str, Any]:
        """The `get_session_stats` response data (seed 000); what each number covers: `session_stats.py`."""
        from .session_stats import session_stats

        return session_stats(session_file=str(self.store.path) if self.store.path else None,
                             session_id=self.store.session_id, entries=self.store.entries,
                             branch=self.store.branch(), messages=self.agent.messages, model=self.model,
                             context_tokens=self.compaction.context_tokens())

    async def export_html(self, output_path: str | None = None) -> str:
        """Write the session as one self-contained HTML file (seed 000 `export_html`); returns its absolute
        path. Relative and default paths are under `cwd`. Raises `CommandError` for an in-memory or empty
        session and for a path that cannot be written. Rendering runs in a thread on a snapshot taken now."""
        from .export_html import ExportError, SessionSnapshot, write_export

        try:
            snapshot = SessionSnapshot.of_store(self.store)
            return str(await asyncio.to_thread(write_export, snapshot, output_path, self.cwd))
        except ExportError as exc:
            raise CommandError(str(exc)) from None

    def last_assistant_text(self) -> str | None:
        for message in reversed(self.agent.messages):
            if message.get("role") == "assistant":
                content = message.get("content")
                blocks = content if isinstance(content, list) else []
                texts = [b["text"] for b in blocks
                         if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)]
                return "".join(texts) if texts else None
        return None

    # -- prompting -----------------------------------------------------------------------------------

    async def submit(self, text: str, images: list[dict[str, Any]] | None = None,
                     streaming_behavior: str | None = None) -> str:
        """The RPC `prompt` path (seed 000): a plugin command runs at once, even mid-run (`"handled"`); plugin
        input handlers may transform the text or handle it (`"handled"`); the rest goes to `prompt`.
        A handled prompt ends with one `agent_settled` like a started one (`_settle_handled`); a command that
        `abort` cancelled ends it with `aborted: true`. Prompts pass the input handlers one at a time, in arrival
        order; an `abort` meanwhile cancels them and the prompt is refused (`CommandError`), nothing sent."""
        self._check_open()
        command = self.hooks.run_command(text)
        if command is not None:
            self._open_commands.add(command)
            command.add_done_callback(self._command_done)
            return "handled"
        task = asyncio.ensure_future(self._take_input(text, images, streaming_behavior))
        self._inputs.add(task)
        try:
            disposition = await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not task.cancelled() or (current is not None and current.cancelling()):
                raise
            raise CommandError("Aborted while plugin input handlers were running: the prompt was not sent") \
                from None
        finally:
            self._inputs.discard(task)
        if disposition == "handled":
            asyncio.get_running_loop().call_soon(self._settle_handled, False)  # after the caller's answer
        return disposition

    async def _take_input(self, text: str, images: list[dict[str, Any]] | None,
                          streaming_behavior: str | None) -> str:
        """Plugin input handlers, then `prompt`, under the input lock: runs start and queue in arrival order."""
        async with self._input_lock:
            self._check_open()
            accepted = await self.hooks.input(text, images, streaming_behavior)
            if accepted is None:
                return "handled"
            return self.prompt(accepted[0], accepted[1], streaming_behavior)

    def _command_done(self, command: asyncio.Future[Any]) -> None:
        if command in self._open_commands:  # not yet settled by `terminate`
            self._open_commands.discard(command)
            self._settle_handled(command.cancelled())

    def _settle_open_commands(self) -> None:
        """Termination: a command that ignored its cancellation still ends its prompt (`agent_settled`
        `aborted: true`) before the process exits; its own end later emits nothing."""
        for _ in range(len(self._open_commands)):
            self._settle_handled(True)
        self._open_commands.clear()

    def _settle_handled(self, aborted: bool) -> None:
        """A handled prompt's work is over: `agent_settled` now, unless a run is going on (one the plugin
        started, or another): that run's own `agent_settled` ends it. Clients wait for it after every
        accepted prompt (docs/rpc.md, "handled" prompts)."""
        if not self.is_streaming:
            self._emit(AgentSettled(type="agent_settled", aborted=aborted))

    def prompt(self, text: str, images: list[dict[str, Any]] | None = None,
               streaming_behavior: str | None = None, *, expand: bool = True) -> str:
        """Accept a prompt: start a run, or queue it while one is going on. Returns the disposition
        (`"started"` or `"queued"`). Raises `CommandError` when it cannot be accepted. A leading
        `/skill:<name>` or `/<template>` is expanded unless `expand` is False."""
        self._check_open()
        message = user_message(self.resources.expand(text) if expand else text, images)
        if self.is_streaming or self.compaction.is_compacting:  # a manual compaction sends queued ones after
            streaming_behavior = streaming_behavior or self._after_run_behavior()
            if streaming_behavior not in ("steer", "followUp"):
                raise CommandError(
                    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue "
                    "the message.")
            self.queue(message, streaming_behavior)
            return "queued"
        self._check_ready()
        self._start([message])
        return "started"

    def _after_run_behavior(self) -> str | None:
        """A client that finishes on `agent_end` (SPEC-NOTES: older clients do) may prompt while the session
        still compacts after the run; that prompt is queued as a follow-up instead of refused."""
        after_run = self.is_streaming and not self.agent.is_streaming and self.compaction.is_compacting
        return "followUp" if after_run else None

    def queue(self, message: dict[str, Any], behavior: str) -> None:
        self._check_open()
        if behavior == "steer":
            self.agent.steer(message)
        else:
            self.agent.follow_up(message)

    def steer(self, text: str, images: list[dict[str, Any]] | None = None) -> str:
        """Queue a message for delivery after the current turn's tool calls; returns the disposition."""
        self._refuse_plugin_command(text, "steer")
        self.queue(user_message(self.resources.expand(text), images), "steer")
        return "queued"

    def follow_up(self, text: str, images: list[dict[str, Any]] | None = None) -> str:
        """Queue a message for delivery when the agent would otherwise stop; returns the disposition."""
        self._refuse_plugin_command(text, "follow_up")
        self.queue(user_message(self.resources.expand(text), images), "followUp")
        return "queued"

    def names_command(self, text: str) -> bool:
        """Whether `text` starts with a `/name` that `submit` runs or expands: a plugin command, a prompt
        template or a `/skill:` command."""
        return self.hooks.command_name(text) is not None or self.resources.expand(text) != text

    def _refuse_plugin_command(self, text: str, command: str) -> None:
        name = self.hooks.command_name(text)
        if name is not None:  # seed 000: plugin commands are not allowed here (they run at once from prompt)
            raise CommandError(f"Plugin command /{name} cannot be sent with {command}: send it with prompt, "
                               "which runs it at once even while the agent is working")

    def _check_open(self) -> None:
        if self.closed:  # its file may belong to another session by now: nothing may be appended to it
            raise CommandError("session is closed")

    def readiness_problem(self) -> str | None:
        """One line for a front end to show at start-up when a prompt would fail for want of a model or key:
        the model it would use and the key it lacks (with where to set one), or that no model is configured
        and how to set one up. None when prompts can run."""
        try:
            self._check_ready()
        except CommandError as exc:
            model = self.agent.model
            where = f"model {model['provider']}/{model['id']}: " if model is not None else ""
            return f"prompts will fail until this is fixed: {where}{exc}".replace("\n", " ")
        return None

    def _check_ready(self) -> None:
        model = self.agent.model
        if model is None:
            raise CommandError(self.model_problem or no_model_message(self.registry))
        if not self.registry.has_auth(model):
            raise CommandError(self.registry.auth_error_message(model))

    def _start(self, prompts: list[dict[str, Any]]) -> None:
        self._abort_pending = False
        self._settle_task = asyncio.ensure_future(self._settle(self._begin(prompts)))

    async def _begin(self, prompts: list[dict[str, Any]]) -> asyncio.Task:
        """Start the run once plugins have seen it (they may add context messages or change the system prompt)."""
        self.agent.system_prompt = await self.hooks.before_run(prompts, self.system_prompt())
        run = self.agent.start(prompts)
        if self._abort_pending:  # the abort came while the run was starting: it starts aborted
            self.agent.abort()
        return run

    async def _settle(self, starting: Awaitable[asyncio.Task]) -> None:
        retry_aborted = False
        try:
            run = await self._started(starting)
            if run is None:
                retry_aborted = True  # aborted while plugins prepared the run: it never started
                return
            while True:
                retry_aborted = await self.retry.follow(run, restart=lambda: self.agent.start([]))
                recovery = await self.compaction.after_run()  # overflow recovery, threshold check
                if recovery is not None:
                    run = recovery
                    continue
                await self.compaction.at_hand_over()  # a `compact` sent during the run, before the queue goes on
                queued = self.agent.take_queued()
                if queued is None:
                    break
                run = self.agent.start(queued)  # seed 000: abort continues messages still queued
                self._pass_boundary()
        finally:
            self.user_bash.flush_held()  # user commands that finished mid-run join the conversation now
            aborted = retry_aborted or self.agent.was_aborted
            self._emit(AgentSettled(type="agent_settled", aborted=self.compaction.take_aborted() or aborted))
            self._pass_boundary()

    def _pass_boundary(self) -> None:
        """Wake every `abort` waiting for the current run; later ones wait for the next boundary."""
        boundary, self._run_boundary = self._run_boundary, asyncio.Event()
        boundary.set()

    async def _started(self, starting: Awaitable[asyncio.Task]) -> asyncio.Task | None:
        """The run once `_begin` returns it; None when an abort cancelled a slow or hung plugin `before_run`."""
        self._begin_task = asyncio.ensure_future(starting)
        try:
            return await self._begin_task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not self._abort_pending or (current is not None and current.cancelling()):
                raise
            return None
        finally:
            self._begin_task = None

    async def prompt_and_wait(self, text: str, images: list[dict[str, Any]] | None = None) -> None:
        """SDK convenience: prompt (queueing as a follow-up when busy) and wait until the session settles."""
        await self.submit(text, images, streaming_behavior="followUp")
        await self.wait_for_idle()

    async def wait_for_idle(self) -> None:
        while (self._settle_task is not None and not self._settle_task.done()) or self.compaction.is_compacting:
            await asyncio.wait({t for t in (self._settle_task, self.compaction.task) if t and not t.done()})

    async def abort(self) -> None:
        """Abort the running step (or a retry's backoff wait); returns once the session settled or, when
        messages were still queued, once the aborted run handed over to them (seed 000: abort continues them).
        Pending plugin dialogs resolve with their defaults; plugin commands and prompts still in plugin input
        handlers are cancelled (bounded waits: plugin code cannot hold the answer)."""
        self.hooks.abort()
        inputs = list(self._inputs)
        for task in inputs:
            task.cancel()
        if not self.is_streaming:
            await self.compaction.cancel_and_wait()  # a manual compaction or branch summary
            await self._plugins_aborted(inputs)
            return
        boundary = self._run_boundary  # taken first: the run may settle during any await below
        self.retry.cancel(aborted=True)
        self._abort_pending = True
        if self._begin_task is not None:
            self._begin_task.cancel()  # plugins still preparing the run: it will not start
        self.agent.abort()
        await self.compaction.cancel_and_wait()  # one between turns (the loop stops) or after the run
        await boundary.wait()  # settled, or the aborted run handed over to queued messages
        await self._plugins_aborted(inputs)

    async def abort_retry(self) -> None:
        """Cancel a retry's backoff wait and stop retrying; returns at the next hand-over, like `abort`: once
        the session settled or the cut-short chain handed over to queued messages (not after their run). At
        once when no wait is going on (a retried run still streaming then ends the chain when it fails)."""
        boundary = self._run_boundary  # taken first: the chain may hand over during the await below
        if self.retry.cancel():
            await boundary.wait()

    async def _plugins_aborted(self, inputs: list[asyncio.Task]) -> None:
        if inputs:
            await asyncio.wait(inputs, timeout=INPUT_CANCEL_GRACE_S)
        await self.hooks.wait_aborted()

    def start_queued(self) -> None:
        """Start a run with the messages queued while the session was busy without a run (a manual compaction)."""
        if not self.is_streaming:
            queued = self.agent.take_queued()
            if queued is not None:
                self._start(queued)

    # -- compaction ----------------------------------------------------------------------------------

    async def compact(self, custom_instructions: str | None = None) -> dict[str, Any]:
        """Compact the context now (seed 000 `compact`; strategy from `compaction.strategy`), aborting a running
        turn first. Returns the result; raises `CommandError`. Logic: `compaction/controller.py`."""
        return await self.compaction.compact(custom_instructions)

    async def navigate_tree(self, target_id: str, *, summarize: bool = False,
                            custom_instructions: str | None = None) -> dict[str, Any]:
        """Move the leaf to entry `target_id`, optionally summarising the branch left behind into a
        `branch_summary` entry: `{cancelled, summaryEntry}`. The model, thinking level and context window become
        those of the new branch (`context_window_changed` when the budget changes; nothing is written for them).
        Raises `CommandError`. See `compaction/branch.py`."""
        from .compaction.branch import navigate_tree

        outcome = await navigate_tree(self, target_id, summarize=summarize, custom_instructions=custom_instructions)
        self.model_control.restore(self.store.build_context(), announce=True)  # the new branch's configuration
        return outcome

    def system_prompt(self) -> str:
        """The default prompt (or the `--system-prompt` / SYSTEM.md text in its place), the appended text,
        context files and skills, then the date and working directory (`system_prompt.py`)."""
        from .system_prompt import build_system_prompt

        return build_system_prompt(cwd=self.cwd, tools=self.agent.tools, custom=self._system_prompt_override,
                                   append=self._append_system_prompt,
                                   sections=self.resources.prompt_sections(t.name for t in self.agent.tools))

    def get_commands(self) -> list[dict[str, Any]]:
        """The `get_commands` items: plugin commands (`hooks.commands()`), prompt templates, skills."""
        return self.resources.commands([self.hooks.commands])

    # -- model ---------------------------------------------------------------------------------------

    # Model, thinking level and context window live in `self.model_control` (coding/model_control.py).

    def set_model(self, provider: str, model_id: str) -> Model:
        """Switch model (a `model_change` entry; thinking level clamped). Raises `CommandError` when unknown."""
        return self.model_control.set_model(provider, model_id)

    def set_thinking_level(self, level: str) -> None:
        """Raises `CommandError` for an invalid level or one the current model does not support."""
        self.model_control.set_thinking_level(level)

    def available_thinking_levels(self) -> list[str]:
        return self.model_control.available_thinking_levels()

    def set_queue_mode(self, queue: str, mode: str) -> None:
        """`queue` is "steering" or "followUp"; `mode` is "all" or "one-at-a-time". Raises `CommandError`."""
        if queue not in ("steering", "followUp"):
            raise CommandError(f"Invalid queue: {queue!r}. Valid queues: steering, followUp")
        if mode not in QUEUE_MODES:
            raise CommandError(f"Invalid mode: {mode}. Valid modes: all, one-at-a-time")
        if queue == "steering":
            self.agent.steering_mode = mode
        else:
            self.agent.follow_up_mode = mode

    def set_session_name(self, name: str) -> None:
        """Raises `CommandError` for a name that is not a string or is blank."""
        if not isinstance(name, str):
            raise CommandError(f"Session name must be a string, got {type(name).__name__}")
        if not name.strip():
            raise CommandError("Session name cannot be empty")
        self.store.append_session_info(name.strip())

    # -- session lifecycle ---------------------------------------------------------------------------

    async def new_session(self, parent_session: str | None = None) -> bool:
        """Start a fresh session (seed 000 `new_session`); returns `cancelled` (True when a plugin vetoed it)."""
        self.check_written()
        cancelled, _ = await change_session(self, "new_session", lambda: self._new_session(parent_session),
                                            parentSession=parent_session)
        return cancelled

    async def _new_session(self, parent_session: str | None) -> None:
        """Work in progress belongs to the old conversation: queued messages are dropped, a run and user
        shell commands are aborted and settle first. The new store keeps the old one's persistence (file or
        memory), records `parent_session` in its header, and starts with the current model, thinking level and
        context window.
        """
        if self.agent.steering_queue or self.agent.follow_up_queue:
            self.agent.clear_queues()  # emits queue_update: clients see the queued messages go
        await self.user_bash.abort()
        await self.abort()
        from .session_switch import successor_store

        store = successor_store(self, parent_session)  # `--no-session` holds for the whole process
        self.replace_store(store)
        self.model_control.record_configuration()  # model, thinking level, a selected context window

    def replace_store(self, store: SessionStore, messages: list[dict[str, Any]] | None = None) -> None:
        """Make `store` this session's store (the old one is closed) and `messages` the agent's transcript.
        Call it while idle: a running turn would append to the wrong session."""
        self._release_store()
        self.store = store
        self._watch_writes(store)
        self.agent.session_id = store.session_id
        self.agent.messages = list(messages or [])

    def _release_store(self) -> None:
        """Close the current store (its last try at writing waiting entries); when entries are still not on
        disk, save the whole session to a recovery file and say on stderr where (or that they are lost). Once
        per store: SIGTERM during a close reaches here twice."""
        store = self.store
        if store.released:
            return
        store.close()  # a last write that succeeds still reports `session_write_resumed`
        store.on_write_state = None
        state = store.write_error
        if state is not None:
            rescued = store.rescue()
            fate = (f"the whole session is saved to {rescued}" if rescued is not None else "they are lost")
            print(f"agent-forge: {entries_text(state['pendingEntries'])} could not be written to "
                  f"{state['path']} ({state['error']}): {fate}", file=sys.stderr)

    def check_written(self) -> None:
        """Raise `CommandError` while entries of the current session wait after a failed write and still cannot
        be written: leaving the session (new, switch, fork, clone) would lose them."""
        if not self.store.flush():
            state = self.store.write_error or {}
            raise CommandError(f"The session file cannot be written ({state.get('error')}): "
                               f"{entries_text(state.get('pendingEntries', 0))} of {state.get('path')} are not on "
                               "disk yet. "
                               "Free some space (or make the path writable again) and try again.")

    async def switch_session(self, session_path: str) -> bool:
        """Continue the session in `session_path`; returns `cancelled`. Raises `CommandError` (missing,
        unreadable or locked file, or an empty path) leaving this session as it was. Logic: `session_switch.py`."""
        if not session_path.strip():  # "" would resolve to the cwd and fail as "Is a directory"
            raise CommandError("The session path is empty: give the path of a session file")
        self.check_written()
        from .session_switch import switch_session

        cancelled, _ = await change_session(self, "switch_session", lambda: switch_session(self, session_path),
                                            targetSessionFile=session_path)
        return cancelled

    async def fork(self, entry_id: str) -> dict[str, Any]:
        """Continue in a new session holding the branch before user message `entry_id`: `{text, cancelled}`."""
        from .session_hooks import vetoable_fork

        self.check_written()
        return await vetoable_fork(self, entry_id)

    async def clone(self) -> bool:
        """Continue in a new session holding a copy of the active branch; returns `cancelled`."""
        from .session_switch import clone

        self.check_written()
        cancelled, _ = await change_session(self, "clone", lambda: clone(self))
        return cancelled

    def available_models(self) -> list[Model]:
        return self.registry.available_models()

    async def terminate(self) -> None:
        """Stop everything now (SIGTERM): drop queued messages, abort the run and user bash commands, then
        release the session file."""
        self.closed = True
        self.agent.clear_queues()
        await self.abort()
        await self.user_bash.abort()
        await self.hooks.shutdown(graceful=False)
        self._settle_open_commands()
        self._stop_write_retries()
        self._release_store()
        self._remove_memory_outputs()

    async def close(self) -> None:
        """Finish the running work (plugin commands included) and release the session file."""
        await self.wait_for_idle()
        await self.hooks.shutdown()
        await self.wait_for_idle()  # a plugin command may have started a run while finishing
        self._settle_open_commands()
        self.closed = True
        self._stop_write_retries()
        self._release_store()
        self._remove_memory_outputs()

    def output_dir(self) -> OutputDir:
        """The current session's directory of full command outputs (`tools/output_files.py`): tools and user
        bash commands put their files there, so they live and go with the session."""
        from .tools.output_files import OutputDir

        current = self._output_dirs[-1] if self._output_dirs else None
        if current is None or current.session_id != self.store.session_id:
            path = self.store.path
            current = OutputDir(self.store.session_id, str(path) if path is not None else None)
            self._output_dirs.append(current)
        return current

    def _remove_memory_outputs(self) -> None:
        """In-memory sessions end with the process: their full outputs go with them."""
        for directory in self._output_dirs:
            if directory.session_file is None:
                directory.remove()

    def _stop_write_retries(self) -> None:
        if self._write_retry is not None:
            self._write_retry.cancel()
            self._write_retry = None


def user_message(text: str, images: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A user message; raises `CommandError` for text that is not a string, or blank text without images (a
    request with no user content is refused by providers)."""
    if not isinstance(text, str):
        raise CommandError(f"A prompt must be a string, got {type(text).__name__}")
    if not text.strip() and not images:
        raise CommandError("Empty prompt: send some text or an image")
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    content.extend(images or [])
    return {"role": "user", "content": content, "timestamp": now_ms()}


def create_session(options: SessionOptions) -> AgentSession:
    """Build an AgentSession from options: settings, registry, store (new, resumed or in memory), agent.

    Raises `CommandError` for a `--session` file that cannot be opened and for an invalid `thinking` level.
    """
    from .factory import build_session

    return build_session(options)


def no_model_message(registry: Any) -> str:
    return f"No model available: no provider has an API key. {key_setup_hint(registry)}"


def key_setup_hint(registry: Any) -> str:
    """How to give a provider a key (environment, auth.json, models.json), with any models.json problem."""
    from ..ai.catalogue import PROVIDER_ENV_KEYS

    keys = ", ".join(PROVIDER_ENV_KEYS[p] for p in ("anthropic", "openai") if p in PROVIDER_ENV_KEYS)
    return (f"Set {keys}, add a key to {registry.agent_dir / 'auth.json'}, or configure a provider in "
            f"{registry.agent_dir / 'models.json'}."
            + (registry.errors_note() if hasattr(registry, "errors_note") else ""))


def entries_text(count: int, verb: str = "") -> str:
    """`1 session entry`, `3 session entries`; with `verb` (`wait`) also its agreeing form (`waits`)."""
    text = f"{count} session {'entry' if count == 1 else 'entries'}"
    return f"{text} {verb + 's' if count == 1 else verb}" if verb else text
