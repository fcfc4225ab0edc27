"""AgentSession: the hub every mode drives — agent, session file, model registry and settings in one object.

Modes stay thin: RPC commands, print mode and the SDK call the methods here, and the hub delegates to the
collaborators it builds, each given what it needs (the agent, the current store, settings, `emit`), never the
hub itself: prompts (`intake.py`), the session-level run (`run.py`), durability (`persistence.py`: every entry
is on disk, or reported waiting, before the event that reports it reaches a listener), compaction
(`compaction/controller.py`), model control (`model_control.py`), session changes (`session_switch.py`) and
user bash commands (`user_bash.py`).
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from ..agent.agent import QUEUE_MODES, Agent
from ..ai.types import Model
from .compaction.branch import navigate_tree
from .compaction.controller import CompactionController
from .errors import CommandError
from .export_html import ExportError, SessionSnapshot, write_export
from .intake import Intake, key_setup_hint, no_model_message, user_message
from .model_control import ModelControl
from .persistence import Persistence, entries_text, release
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

__all__ = ["AgentSession", "CommandError", "entries_text", "key_setup_hint", "no_model_message", "user_message"]

Listener = Callable[[dict[str, Any]], None]


class AgentSession:
    """One conversation: its agent, store, model and listeners. Build it with `factory.create_session`."""

    def __init__(self, *, store: SessionStore, agent: Agent, registry: Any, settings: Any, cwd: str,
                 system_prompt_override: str | None = None, append_system_prompt: str | None = None):
        self.store, self.agent, self.registry, self.settings, self.cwd = store, agent, registry, settings, cwd
        self.warnings: list[str] = []
        self._listeners: list[Listener] = []
        self.model_problem: str | None = None
        """Why the start-up model is missing (an unresolved `--model` in RPC mode): the answer to prompts."""
        self._system_prompt_override = system_prompt_override
        self._append_system_prompt = append_system_prompt
        self.hooks: SessionHooks = SessionHooks()
        """Plugin hook points (`session_hooks.py`); the plugin runner replaces the no-op default."""
        self.resources = SessionResources()
        """Context files, skills, templates, prompt files and the project policy (`resources/loader.py`)."""
        self.tool_selection = ToolSelection()
        """Which tools are active (`tools/selection.py`; the factory resolves it): `admits(name)` for plugin tools."""
        self.closed = False
        """Set by `close` and `terminate`: `prompt`, `submit`, `steer` and `follow_up` then raise `CommandError`."""
        self._build_collaborators()
        self.persistence.watch(store)
        self._output_dirs: list[OutputDir] = []  # one for each session this process ran commands for, latest last
        start_pruning()  # stale full-output files of earlier runs go, in the background

    def _build_collaborators(self) -> None:
        agent, settings, emit = self.agent, self.settings, self._emit
        store, hooks = (lambda: self.store), (lambda: self.hooks)  # read at each use: both get replaced
        self.persistence = Persistence(store=store, closed=lambda: self.closed, emit=emit)
        self.write_failures = self.persistence.write_failures
        """Each distinct session-file write error of this process, in order (print mode exits 1 when any)."""
        self.user_bash = UserBash(cwd=self.cwd, agent=agent, settings=settings, store=store,
                                  busy=lambda: self.is_streaming, output_dir=self.output_dir)
        self.model_control = ModelControl(agent=agent, store=store, registry=self.registry, settings=settings,
                                          warnings=self.warnings, emit=emit)
        self.compaction = CompactionController(  # manual, threshold and overflow compaction
            agent=agent, store=store, settings=settings, emit=emit, system_prompt=self.system_prompt,
            retry_enabled=lambda: self.retry.enabled)
        agent.before_turn = self.compaction.before_turn
        self.run = SessionRun(agent=agent, compaction=self.compaction, settings=settings, store=store, hooks=hooks,
                              system_prompt=self.system_prompt, flush_held=self.user_bash.flush_held, emit=emit)
        self.retry = self.run.retry
        self.intake = Intake(agent=agent, run=self.run, compaction=self.compaction, registry=self.registry,
                             hooks=hooks, resources=lambda: self.resources, closed=lambda: self.closed,
                             model_problem=lambda: self.model_problem, emit=emit)
        self.switching = SessionSwitch(cwd=self.cwd, agent=agent, model_control=self.model_control, hooks=hooks,
                                       store=store, replace_store=self.replace_store, stop_work=self._stop_work)

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
        """Persist first, then tell listeners (the durability promise of `persistence.py`)."""
        if event["type"] == "message_end":
            self.persistence.persist(event["message"])
        self._emit(event)
        self.retry.observe(event)  # auto_retry_* events follow the event that caused them

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

    # -- prompting (`intake.py`) and the run (`run.py`) ------------------------------------------------

    async def submit(self, text: str, images: list[dict[str, Any]] | None = None,
                     streaming_behavior: str | None = None) -> str:
        """The RPC `prompt` path: `"handled"` (a plugin command or input handler took it), `"started"` or
        `"queued"`. Raises `CommandError` (also when an `abort` cancelled its input handling)."""
        return await self.intake.submit(text, images, streaming_behavior)

    def prompt(self, text: str, images: list[dict[str, Any]] | None = None,
               streaming_behavior: str | None = None, *, expand: bool = True) -> str:
        """Start a run, or queue the prompt while one is going on: `"started"` or `"queued"`. Raises
        `CommandError`. A leading `/skill:<name>` or `/<template>` is expanded unless `expand` is False."""
        return self.intake.prompt(text, images, streaming_behavior, expand=expand)

    def queue(self, message: dict[str, Any], behavior: str) -> None:
        self.intake.queue(message, behavior)

    def steer(self, text: str, images: list[dict[str, Any]] | None = None) -> str:
        """Queue a message for delivery after the current turn's tool calls; returns the disposition."""
        return self.intake.steer(text, images)

    def follow_up(self, text: str, images: list[dict[str, Any]] | None = None) -> str:
        """Queue a message for delivery when the agent would otherwise stop; returns the disposition."""
        return self.intake.follow_up(text, images)

    def names_command(self, text: str) -> bool:
        """Whether `text` starts with a `/name` that `submit` runs or expands."""
        return self.intake.names_command(text)

    def readiness_problem(self) -> str | None:
        """One line for a front end to show at start-up when prompts would fail (no model or key), else None."""
        return self.intake.readiness_problem()

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
        inputs = self.intake.cancel_inputs()
        await self.run.abort()
        await self.intake.plugins_aborted(inputs)

    async def abort_retry(self) -> None:
        """Cancel a retry's backoff wait and stop retrying; returns at the next hand-over (`SessionRun`)."""
        await self.run.abort_retry()

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

    # -- session lifecycle (`session_switch.py`) -------------------------------------------------------

    async def new_session(self, parent_session: str | None = None) -> bool:
        """Start a fresh session (seed 000 `new_session`); returns `cancelled` (True when a plugin vetoed it)."""
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
        release(self.store)
        self.store = store
        self.persistence.watch(store)
        self.agent.session_id = store.session_id
        self.agent.messages = list(messages or [])

    def check_written(self) -> None:
        """Raise `CommandError` while entries of the current session wait after a failed write and still cannot
        be written: leaving the session (new, switch, fork, clone) would lose them."""
        self.persistence.check_written()

    async def switch_session(self, session_path: str) -> bool:
        """Continue the session in `session_path`; returns `cancelled`. Raises `CommandError` (missing,
        unreadable or locked file, or an empty path) leaving this session as it was."""
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
        self.intake.settle_open_commands()
        self._release()

    async def close(self) -> None:
        """Finish the running work (plugin commands included) and release the session file."""
        await self.wait_for_idle()
        await self.hooks.shutdown()
        await self.wait_for_idle()  # a plugin command may have started a run while finishing
        self.intake.settle_open_commands()
        self.closed = True
        self._release()

    def _release(self) -> None:
        self.persistence.stop_retries()
        release(self.store)
        for directory in self._output_dirs:  # in-memory sessions end with the process: so do their outputs
            if directory.session_file is None:
                directory.remove()

    def output_dir(self) -> OutputDir:
        """The current session's directory of full command outputs (`tools/output_files.py`): tools and user
        bash commands put their files there, so they live and go with the session."""
        current = self._output_dirs[-1] if self._output_dirs else None
        if current is None or current.session_id != self.store.session_id:
            path = self.store.path
            current = OutputDir(self.store.session_id, str(path) if path is not None else None)
            self._output_dirs.append(current)
        return current
