"""AgentSession: the hub every mode drives (RPC commands, print mode, the SDK): public API plus delegation to
collaborators that get what they need (agent, current store, settings, `emit`), never the hub: `intake.py`
(prompts), `run.py` (the session-level run), `persistence.py` (entries on disk before their events),
`compaction/`, `models/control.py`, `switching.py`, `user_bash.py`, `state.py` (reports)."""

from __future__ import annotations

import traceback
from typing import Any, Awaitable, Callable, TYPE_CHECKING

from ..agent.agent import Agent
from ..agent.types import AgentMessage
from ..ai.types import ImageContent, Model
from .announcer import StateAnnouncer
from .approvals import Approvals
from .compaction.controller import CompactionController
from .errors import CommandError
from .events import AgentEvent, Emit as Listener, SessionEvent
from .intake import Intake, key_setup_hint, no_model_message, user_message
from .messages import last_assistant_text
from .models.control import ModelControl
from .persistence import Persistence, entries_text, release
from .resources.loader import SessionResources
from .run import SessionRun
from .hooks import SessionHooks
from .session.store import SessionStore
from .switching import SessionSwitch
from .state import export_store, session_name, session_state, stats_report
from .system_prompt import build_system_prompt
from .tool_sources import NoToolSource, ToolSource
from .tools.output_files import OutputDir, SessionOutputs, start_pruning
from .tools.sanitize import print_warning
from .tools.selection import ToolSelection
from .user_bash import UserBash

if TYPE_CHECKING:
    from .models.registry import ModelRegistry
    from .settings import Settings

__all__ = ["AgentSession", "CommandError", "entries_text", "key_setup_hint", "no_model_message", "user_message"]


class AgentSession:
    """One conversation: its agent, store, model and listeners. Build it with `factory.create_session`."""

    def __init__(self, *, store: SessionStore, agent: Agent, registry: ModelRegistry, settings: Settings, cwd: str,
                 system_prompt_override: str | None = None, append_system_prompt: str | None = None):
        self.store, self.agent, self.registry, self.settings, self.cwd = store, agent, registry, settings, cwd
        self.warnings: list[str] = []
        self._listeners: list[Listener] = []
        self.model_problem: str | None = None  # why the start-up model is missing (RPC): what prompts answer
        self._system_prompt_override, self._append_system_prompt = system_prompt_override, append_system_prompt
        self.hooks: SessionHooks = SessionHooks()  # plugin hook points: the plugin runner replaces the no-ops
        self.resources = SessionResources()  # context files, skills, templates, the project policy
        self.tool_selection = ToolSelection()  # active tools (the factory resolves it): `admits(name)`
        self.closed = False  # set by `close` and `terminate`: prompts are refused from then on
        self.mcp: ToolSource = NoToolSource()  # the MCP servers once `mcp/setup.py` attached them
        self._build_collaborators()
        self.persistence.watch(store)
        self._outputs = SessionOutputs()
        start_pruning()  # stale full-output files of earlier runs go, in the background

    def _build_collaborators(self) -> None:
        agent, settings, emit = self.agent, self.settings, self.emit
        store, hooks = (lambda: self.store), (lambda: self.hooks)  # read at each use: both get replaced
        self.announcer = StateAnnouncer(lambda: agent.thinking_level, lambda: store().session_name, emit)
        self.persistence = Persistence(store=store, closed=lambda: self.closed, emit=emit)
        self.write_failures = self.persistence.write_failures  # each distinct write error, in order
        self.user_bash = UserBash(cwd=self.cwd, agent=agent, settings=settings, store=store,
                                  busy=lambda: self.is_streaming, output_dir=self.output_dir)
        self.model_control = ModelControl(agent=agent, store=store, registry=self.registry, settings=settings,
                                          warnings=self.warnings, emit=emit, warn=print_warning,
                                          changed=self.announcer.announce)
        self.compaction = CompactionController(  # manual, threshold and overflow compaction
            agent=agent, store=store, settings=settings, emit=emit, system_prompt=self.system_prompt,
            retry_enabled=lambda: self.retry.enabled)
        agent.before_turn, agent.on_tool_result = self.compaction.before_turn, self.persistence.persist_early
        self.approvals = Approvals.for_session(agent, hooks)
        self.run = SessionRun(agent=agent, compaction=self.compaction, settings=settings, store=store, hooks=hooks,
                              system_prompt=self.system_prompt, flush_held=self.user_bash.flush_held, emit=emit,
                              prepare=lambda: self.mcp.wait_ready())
        self.retry = self.run.retry
        self.intake = Intake(agent=agent, run=self.run, compaction=self.compaction, registry=self.registry,
                             hooks=hooks, resources=lambda: self.resources, closed=lambda: self.closed, emit=emit,
                             model_problem=lambda: self.model_problem, store=store, mcp=lambda: self.mcp)
        self.switching = SessionSwitch(cwd=self.cwd, agent=agent, model_control=self.model_control, hooks=hooks,
                                       store=store, replace_store=self.replace_store, user_bash=self.user_bash,
                                       check_written=self.persistence.check_written, queue=self.intake.journal,
                                       abort=lambda: self.begin_abort(held=False),  # held prompts wait for it
                                       hook_calls=self.intake.change_hooks)  # a client's abort stops them

    # -- events --------------------------------------------------------------------------------------
    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(event)` for every event, in order; returns an unsubscribe function. A listener's exception
        is printed to stderr; the run and the other listeners go on."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def emit(self, event: SessionEvent) -> None:
        """Send `event` to every listener (plugins report `extension_error` and interaction requests so)."""
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # a subscriber's bug must not end the run or pose as a provider/tool error
                traceback.print_exc()

    def on_agent_event(self, event: AgentEvent) -> None:
        """Persist first, then tell listeners (the durability promise: `Persistence.before_event`)."""
        event = self.persistence.before_event(event)
        self.emit(event)
        self.retry.observe(event)  # auto_retry_* events follow the event that caused them

    # -- state ---------------------------------------------------------------------------------------
    @property
    def model(self) -> Model | None:
        return self.agent.model

    @property
    def is_streaming(self) -> bool:
        return self.run.is_streaming

    @property
    def messages(self) -> list[AgentMessage]:
        return self.agent.messages

    def get_state(self) -> dict[str, Any]:
        """The `get_state` response data (seed 000; `state.py`)."""
        return session_state(self.agent, self.store, self.compaction, self.approvals, streaming=self.is_streaming)

    def get_session_stats(self) -> dict[str, Any]:
        """The `get_session_stats` response data (seed 000); what each number covers: `session/stats.py`."""
        return stats_report(self.agent, self.store, self.compaction)

    async def export_html(self, output_path: str | None = None) -> str:
        """Write the session as one self-contained HTML file (seed 000 `export_html`); returns its absolute
        path (relative and default paths are under `cwd`). Raises `CommandError` (`state.py`)."""
        return await export_store(self.store, output_path, self.cwd)

    def last_assistant_text(self) -> str | None:
        return last_assistant_text(self.agent.messages)

    # -- prompting (`intake.py`) and the run (`run.py`) ------------------------------------------------
    def submit(self, text: str, images: list[ImageContent] | None = None,
               streaming_behavior: str | None = None) -> Awaitable[str]:
        """The RPC `prompt` path, awaited: "handled", "started" or "queued" (`Intake.submit`). Raises `CommandError`."""
        return self.intake.submit(text, images, streaming_behavior)

    def prompt(self, text: str, images: list[ImageContent] | None = None,
               streaming_behavior: str | None = None, *, expand: bool = True) -> str:
        """Start a run, or queue the prompt while one is going on: `"started"` or `"queued"`. Raises
        `CommandError`. A leading `/skill:<name>` or `/<template>` is expanded unless `expand` is False."""
        return self.intake.prompt(text, images, streaming_behavior, expand=expand)

    def steer(self, text: str, images: list[ImageContent] | None = None) -> str:
        """Queue a message for delivery after the current turn's tool calls; returns the disposition."""
        return self.intake.steer(text, images)

    def follow_up(self, text: str, images: list[ImageContent] | None = None) -> str:
        """Queue a message for delivery when the agent would otherwise stop; returns the disposition."""
        return self.intake.follow_up(text, images)

    def names_command(self, text: str) -> bool:
        """Whether `text` starts with a `/name` that `submit` runs or expands."""
        return self.intake.names_command(text)

    def readiness_problem(self) -> str | None:
        """One line for a front end to show at start-up when prompts would fail (no model or key), else None."""
        return self.intake.readiness_problem()

    async def prompt_and_wait(self, text: str, images: list[ImageContent] | None = None) -> None:
        """SDK convenience: prompt (queueing as a follow-up when busy) and wait until the session settles."""
        await self.submit(text, images, streaming_behavior="followUp")
        await self.wait_for_idle()

    async def wait_for_idle(self) -> None:
        """Return once no run and no compaction (or branch summary) is going on."""
        await self.run.wait_for_idle()

    async def abort(self) -> None:
        """Abort the running step (or a retry's wait); returns once settled or handed over to queued messages (seed
        000). Plugin dialogs get their defaults; unsent plugin commands and prompts are cancelled (`Intake`)."""
        await self.begin_abort()

    def begin_abort(self, *, held: bool = True) -> Awaitable[None]:
        """`abort` stopping the work now: prompts submitted later are not cancelled; await the result."""
        return self.intake.begin_abort(held=held)

    async def abort_retry(self) -> None:
        """Cancel a retry's backoff wait and stop retrying; returns at the next hand-over (`SessionRun`)."""
        await self.run.abort_retry()

    # -- compaction ----------------------------------------------------------------------------------
    def compact(self, custom_instructions: str | None = None) -> Awaitable[dict[str, Any]]:
        """Compact (seed 000) in arrival order among the prompts: `SessionRun.compact`; `CommandError`."""
        return self.run.compact(custom_instructions, self.store.session_id, self.intake)

    async def navigate_tree(self, target_id: str | None, *, summarize: bool = False,
                            custom_instructions: str | None = None) -> dict[str, Any]:
        """Move the leaf to entry `target_id` (None: before the first entry), optionally summarising the branch left
        into a `branch_summary` entry: `{cancelled, summaryEntry}`. The new branch's model, thinking level and context
        window apply (`context_window_changed` when the budget changes; none is written). Raises `CommandError`.
        `compaction/branch.py`. Messages queued meanwhile are sent after the move (`SessionRun.idle_work`)."""
        from .compaction.branch import navigate_tree  # start-up does not pay for summarising branches
        outcome = await self.run.idle_work(navigate_tree(
            self.store, self.agent, self.compaction, target_id, busy=self.is_streaming, summarize=summarize,
            custom_instructions=custom_instructions))
        self.model_control.restore(self.store.build_context(), announce=True)  # the new branch's configuration
        return outcome

    def system_prompt(self) -> str:
        """The default prompt (or the `--system-prompt` / SYSTEM.md text), the appended text, context files,
        skills and the connected MCP servers, then the date and working directory (`system_prompt.py`)."""
        sections = [*self.resources.prompt_sections(t.name for t in self.agent.tools), *self.mcp.prompt_sections()]
        return build_system_prompt(cwd=self.cwd, tools=self.agent.tools, custom=self._system_prompt_override,
                                   append=self._append_system_prompt, sections=sections)

    def get_commands(self) -> list[dict[str, object]]:
        """The `get_commands` items: plugin commands (`hooks.commands()`), MCP prompts, prompt templates, skills."""
        return self.resources.commands([self.hooks.commands, self.mcp.commands])

    # -- model (`models/control.py`) -------------------------------------------------------------------
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
        self.intake.set_queue_mode(queue, mode)

    def set_session_name(self, name: str) -> None:
        """Name the session (announced when it changes). Raises `CommandError` for a non-string or blank name."""
        self.store.append_session_info(session_name(name))
        self.announcer.announce()

    # -- session lifecycle (`switching.py`) -------------------------------------------------------
    def new_session(self, parent_session: str | None = None) -> Awaitable[bool]:
        """Start a fresh session (seed 000 `new_session`); returns `cancelled` (True when a plugin vetoed it)."""
        return self.intake.session_change(self.switching.new_session(parent_session))

    def replace_store(self, store: SessionStore, messages: list[AgentMessage] | None = None) -> None:
        """Make `store` this session's store (the old one is closed) and `messages` the transcript; only while idle."""
        release(self.store)
        self.store = store
        self.persistence.watch(store)
        self.agent.session_id = store.session_id
        self.agent.messages = list(messages or [])
        self.approvals.forget()  # every session change (new, switch, fork, clone) forgets "always"
        self.announcer.announce()  # the new store's name (its thinking level: `ModelControl.restore` announces it)

    def switch_session(self, session_path: str) -> Awaitable[bool]:
        """Continue the session in `session_path`; returns `cancelled`. Raises `CommandError`."""
        return self.intake.session_change(self.switching.switch_session(session_path))

    def fork(self, entry_id: str) -> Awaitable[dict[str, Any]]:
        """Continue in a new session holding the branch before user message `entry_id`: `{text, cancelled}`."""
        return self.intake.session_change(self.switching.fork(entry_id))

    def clone(self) -> Awaitable[bool]:
        """Continue in a new session holding a copy of the active branch; returns `cancelled`."""
        return self.intake.session_change(self.switching.clone())

    def available_models(self) -> list[Model]:
        return self.registry.available_models()

    async def terminate(self) -> None:
        """Stop now (SIGTERM): drop queued messages (still pending in the file), abort the run and user bash."""
        self.closed = True
        self.agent.clear_queues()
        await self.abort()
        await self.user_bash.abort()
        await self.hooks.shutdown(graceful=False)
        self.intake.settle_open_commands()
        await self._release()

    async def close(self) -> None:
        """Finish the running work (plugin commands included) and release the session file."""
        self.mcp.input_closed()  # an MCP call that never ends gets a deadline (mcp/deadline.py)
        await self.wait_for_idle()
        await self.hooks.shutdown()
        await self.wait_for_idle()  # a plugin command may have started a run while finishing
        self.intake.settle_open_commands()
        self.closed = True
        await self._release()

    async def _release(self) -> None:
        self.persistence.stop_retries()
        release(self.store)  # first: stopping a stubborn MCP server may take seconds
        self._outputs.remove_memory_outputs()
        await self.mcp.close()  # MCP servers stop (their process groups end)

    def output_dir(self) -> OutputDir:
        """The current session's directory of full tool and user bash outputs (`tools/output_files.py`)."""
        return self._outputs.current(self.store.session_id, str(self.store.path) if self.store.path else None)
