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
from ..ai.catalogue import PROVIDER_ENV_KEYS
from ..ai.types import Model
from .compaction.branch import navigate_tree
from .compaction.controller import CompactionController
from .errors import CommandError
from .export_html import ExportError, SessionSnapshot, write_export
from .model_control import ModelControl
from .resources.loader import SessionResources
from .run import SessionRun
from .session_hooks import SessionHooks
from .session_stats import session_stats
from .session_store import SessionStore
from .session_switch import SessionSwitch
from .system_prompt import build_system_prompt
from .tools.output_files import OutputDir, start_pruning
from .tools.selection import ToolSelection
from .user_bash import UserBash

__all__ = ["AgentSession", "CommandError", "SessionOptions", "user_message"]

Listener = Callable[[dict[str, Any]], None]
_CUSTOM_FIELDS = ("customType", "content", "display", "details")

INPUT_CANCEL_GRACE_S = 1.0
"""Seconds `abort` waits for the plugin input handling it cancelled to end (its prompt is answered by then)."""

WRITE_RETRY_S = 2.0
"""While session entries wait after a failed write, a write is retried this often (besides every new append),
so a freed disk is noticed while the session is idle."""


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
        self.write_failures: list[str] = []
        """Each distinct session-file write error of this process, in order (print mode exits 1 when any)."""
        self._write_retry: asyncio.TimerHandle | None = None
        self.model_problem: str | None = None
        """Why the start-up model is missing (an unresolved `--model` in RPC mode): the answer to prompts."""
        self._system_prompt_override = system_prompt_override
        self._append_system_prompt = append_system_prompt
        current_store = lambda: self.store  # noqa: E731 (read at each use: the store is swapped)
        self.user_bash = UserBash(cwd=cwd, agent=agent, settings=settings, store=current_store,
                                  busy=lambda: self.is_streaming, output_dir=self.output_dir)
        self.model_control = ModelControl(agent=agent, store=current_store, registry=registry, settings=settings,
                                          warnings=self.warnings, emit=self._emit)
        self.compaction = CompactionController(  # manual, threshold and overflow compaction
            agent=agent, store=current_store, settings=settings, emit=self._emit, system_prompt=self.system_prompt,
            retry_enabled=lambda: self.retry.enabled)
        agent.before_turn = self.compaction.before_turn
        self.run = SessionRun(agent=agent, compaction=self.compaction, settings=settings, store=current_store,
                              hooks=lambda: self.hooks, system_prompt=self.system_prompt,
                              flush_held=self.user_bash.flush_held, emit=self._emit)
        """The session-level run: start, retries, overflow recovery, queued continuations, abort (`run.py`)."""
        self.retry = self.run.retry
        self.switching = SessionSwitch(cwd=cwd, agent=agent, model_control=self.model_control,
                                       hooks=lambda: self.hooks, store=current_store,
                                       replace_store=self.replace_store, stop_work=self._stop_work)
        self.hooks: SessionHooks = SessionHooks()
        """Plugin hook points (`session_hooks.py`); the plugin runner replaces the no-op default."""
        self.resources = SessionResources()
        """Context files, skills, templates, prompt files and the project policy (`resources/loader.py`)."""
        self.tool_selection = ToolSelection()
        """Which tools are active (`tools/selection.py`; the factory resolves it): `admits(name)` for plugin tools."""
        self.closed = False
        """Set by `close` and `terminate`: `prompt`, `submit`, `steer` and `follow_up` then raise `CommandError`."""
        self._inputs: set[asyncio.Task] = set()  # prompts in plugin input handling (`abort` cancels them)
        self._open_commands: set[asyncio.Future[Any]] = set()  # handled prompts' commands not yet settled
        self._input_lock = asyncio.Lock()  # prompts pass input handlers one at a time, in arrival order
        self._watch_writes(store)
        self._output_dirs: list[OutputDir] = []  # one for each session this process ran commands for, latest last
        start_pruning()  # stale full-output files of earlier runs go, in the background

    # -- events --------------------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(event)` for every event, synchronously and in order. Returns an unsubscribe function.
        An exception raised by a listener is printed to stderr; the run and the other listeners go on."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def emit(self, event: dict[str, Any]) -> None:
        """Send `event` to every listener (plugins report `extension_error` and interaction requests so)."""
        self._emit(event)

    def _emit(self, event: dict[str, Any]) -> None:
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
            self.store.append_entry("custom_message", **{k: message[k] for k in _CUSTOM_FIELDS if k in message})
        else:
            self.store.append_message(message)

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
            self._emit({"type": "session_write_resumed", "path": str(store.path)})
            return
        if state["error"] not in self.write_failures:
            self.write_failures.append(state["error"])
        print(f"agent-forge: the session file could not be written: {state['path']}: {state['error']} "
              f"({entries_text(state['pendingEntries'], 'wait')} in memory)", file=sys.stderr)
        self._emit({"type": "session_write_error", **state})
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
        return self.run.is_streaming

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
        return session_stats(session_file=str(self.store.path) if self.store.path else None,
                             session_id=self.store.session_id, entries=self.store.entries,
                             branch=self.store.branch(), messages=self.agent.messages, model=self.model,
                             context_tokens=self.compaction.context_tokens())

    async def export_html(self, output_path: str | None = None) -> str:
        """Write the session as one self-contained HTML file (seed 000 `export_html`); returns its absolute
        path. Relative and default paths are under `cwd`. Raises `CommandError` for an in-memory or empty
        session and for a path that cannot be written. Rendering runs in a thread on a snapshot taken now."""
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
            self._emit({"type": "agent_settled", "aborted": aborted})

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
        self.run.start([message])
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

    async def prompt_and_wait(self, text: str, images: list[dict[str, Any]] | None = None) -> None:
        """SDK convenience: prompt (queueing as a follow-up when busy) and wait until the session settles."""
        await self.submit(text, images, streaming_behavior="followUp")
        await self.wait_for_idle()

    async def wait_for_idle(self) -> None:
        """Return once no run and no compaction (or branch summary) is going on."""
        await self.run.wait_for_idle()

    async def abort(self) -> None:
        """Abort the running step (or a retry's backoff wait); returns once the session settled or, when
        messages were still queued, once the aborted run handed over to them (seed 000: abort continues them).
        Pending plugin dialogs resolve with their defaults; plugin commands and prompts still in plugin input
        handlers are cancelled (bounded waits: plugin code cannot hold the answer)."""
        self.hooks.abort()
        inputs = list(self._inputs)
        for task in inputs:
            task.cancel()
        await self.run.abort()
        await self._plugins_aborted(inputs)

    async def abort_retry(self) -> None:
        """Cancel a retry's backoff wait and stop retrying; returns at the next hand-over (`SessionRun`)."""
        await self.run.abort_retry()

    async def _plugins_aborted(self, inputs: list[asyncio.Task]) -> None:
        if inputs:
            await asyncio.wait(inputs, timeout=INPUT_CANCEL_GRACE_S)
        await self.hooks.wait_aborted()

    # -- compaction ----------------------------------------------------------------------------------

    async def compact(self, custom_instructions: str | None = None) -> dict[str, Any]:
        """Compact the context now (seed 000 `compact`; strategy from `compaction.strategy`, `reason: "manual"`).
        Returns the result; raises `CommandError` when it fails or is aborted. During a run it aborts the run
        and compacts at its hand-over, before queued messages continue, on the session it was sent to (else
        `SESSION_CHANGED`). Messages queued meanwhile are sent once it is over. Logic: `compaction/controller.py`."""
        return await self.run.compact(custom_instructions, self.store.session_id, self.abort)

    async def navigate_tree(self, target_id: str, *, summarize: bool = False,
                            custom_instructions: str | None = None) -> dict[str, Any]:
        """Move the leaf to entry `target_id`, optionally summarising the branch left behind into a
        `branch_summary` entry: `{cancelled, summaryEntry}`. The model, thinking level and context window become
        those of the new branch (`context_window_changed` when the budget changes; nothing is written for them).
        Raises `CommandError`. See `compaction/branch.py`."""
        outcome = await navigate_tree(self.store, self.agent, self.compaction, target_id, busy=self.is_streaming,
                                      summarize=summarize, custom_instructions=custom_instructions)
        self.model_control.restore(self.store.build_context(), announce=True)  # the new branch's configuration
        return outcome

    def system_prompt(self) -> str:
        """The default prompt (or the `--system-prompt` / SYSTEM.md text in its place), the appended text,
        context files and skills, then the date and working directory (`system_prompt.py`)."""
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
        self.store.append_entry("session_info", name=name.strip())

    # -- session lifecycle ---------------------------------------------------------------------------

    async def new_session(self, parent_session: str | None = None) -> bool:
        """Start a fresh session (seed 000 `new_session`); returns `cancelled` (True when a plugin vetoed it).
        Work in progress belongs to the old conversation: queued messages are dropped, a run and user shell
        commands are aborted and settle first. The new store keeps the old one's persistence (file or memory),
        records `parent_session` in its header, and starts with the current model, thinking level and context
        window."""
        self.check_written()
        return await self.switching.new_session(parent_session)

    async def _stop_work(self) -> None:
        """The work in progress belongs to the session being left: queued messages are dropped, user shell
        commands and the run are aborted and settle first."""
        if self.agent.steering_queue or self.agent.follow_up_queue:
            self.agent.clear_queues()  # emits queue_update: clients see the queued messages go
        await self.user_bash.abort()
        await self.abort()

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
        return await self.switching.switch_session(session_path)

    async def fork(self, entry_id: str) -> dict[str, Any]:
        """Continue in a new session holding the branch before user message `entry_id`: `{text, cancelled}`."""
        self.check_written()
        return await self.switching.fork(entry_id)

    async def clone(self) -> bool:
        """Continue in a new session holding a copy of the active branch; returns `cancelled`."""
        self.check_written()
        return await self.switching.clone()

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


def no_model_message(registry: Any) -> str:
    return f"No model available: no provider has an API key. {key_setup_hint(registry)}"


def key_setup_hint(registry: Any) -> str:
    """How to give a provider a key (environment, auth.json, models.json), with any models.json problem."""
    keys = ", ".join(PROVIDER_ENV_KEYS[p] for p in ("anthropic", "openai") if p in PROVIDER_ENV_KEYS)
    return (f"Set {keys}, add a key to {registry.agent_dir / 'auth.json'}, or configure a provider in "
            f"{registry.agent_dir / 'models.json'}."
            + (registry.errors_note() if hasattr(registry, "errors_note") else ""))


def entries_text(count: int, verb: str = "") -> str:
    """`1 session entry`, `3 session entries`; with `verb` (`wait`) also its agreeing form (`waits`)."""
    text = f"{count} session {'entry' if count == 1 else 'entries'}"
    return f"{text} {verb + 's' if count == 1 else verb}" if verb else text
