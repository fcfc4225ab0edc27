"""The part of building a session that comes before its agent (`factory.build_session` goes on from it):
settings and the project policy, the model registry, the store (new, resumed, forked or in memory) and the
start-up model, thinking level and context window, with the warnings they give.

Nothing here imports asyncio or the agent: RPC mode answers a first `get_state` from a prelude before the event
loop is imported (`modes/rpc/early.py`), and the session is then built on that same prelude, so the early answer
is the one the session gives.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..ai.catalogue import clamp_thinking_level
from ..ai.options import THINKING_LEVELS
from ..records import Record, replace
from .errors import CommandError, SessionFileError
from .models.control import ModelControl
from .models.registry import ModelRegistry
from .paths import agent_dir as default_agent_dir, path_text, sessions_dir
from .session.store import SessionStore

if TYPE_CHECKING:
    from ..agent.types import AgentTool
    from ..ai.types import Model


class SessionOptions(Record, kw_only=True):
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
    mcp_servers: Any = None
    """MCP servers in code: `{"mcpServers": {...}}` or `{name: entry}` in the `mcp.json` format (`docs/mcp.md`);
    they join those of the `mcp.json` files, replacing entries of the same name."""
    no_mcp: bool = False
    """`--no-mcp`: no MCP server at all (neither the `mcp.json` files' nor `mcp_servers`)."""
    unattended: bool = False
    """Print and JSON mode: nobody can abort, so MCP calls get a time limit (`docs/mcp.md`)."""
    start_without_model: bool = False
    """RPC mode: a `--model` / `--provider` that matches nothing is a warning, not a `CommandError`; the session
    starts without a model, and prompts answer why (`AgentSession.model_problem`)."""
    prelude: SessionPrelude | None = None
    """What `prepare_session` made of these options before (RPC mode's early `get_state`): the session is built
    on it instead of reading settings and opening the store a second time."""


class StartupAgent:
    """The agent's start-up configuration before the agent exists: what `ModelControl` reads and sets."""

    def __init__(self) -> None:
        self.model: Model | None = None
        self.thinking_level = "off"  # the agent's own default (`agent/agent.py`)


class SessionPrelude:
    """Settings, policy, registry, store and the start-up model choice of one session to be built. `options` are
    those given, with `session_dir` set when an explicit agent dir holds the sessions; `warnings` are the
    model scope's and model choice's (the session lists them after its other start-up warnings)."""

    def __init__(self, options: SessionOptions, agent_dir: Path, settings: Any, policy: Any,
                 registry: ModelRegistry, store: SessionStore):
        self.options, self.agent_dir, self.settings, self.policy = options, agent_dir, settings, policy
        self.registry, self.store = registry, store
        self.warnings: list[str] = []
        self.model_problem: str | None = None  # why the start-up model is missing (RPC): what prompts answer
        self.agent = StartupAgent()
        self.model_control = ModelControl(agent=self.agent, store=lambda: self.store, registry=registry,
                                          settings=settings, warnings=self.warnings, emit=_no_event)

    @property
    def model(self) -> Model | None:
        return self.agent.model

    def hand_over(self, session: Any) -> None:
        """Give `session` (an `AgentSession` built on this prelude) the model choice made here."""
        session.agent.model, session.agent.thinking_level = self.agent.model, self.agent.thinking_level
        session.model_control.scope = self.model_control.scope
        session.model_problem = self.model_problem
        session.warnings.extend(self.warnings)


def prepare_session(options: SessionOptions) -> SessionPrelude:
    """Settings, registry, store and the start-up model of `options`. Raises `CommandError` for a `--session`
    file that cannot be opened, an invalid `thinking` level, a `--context-window` the model does not support and
    (outside RPC mode) flags naming no model."""
    from .resources.setup import load_project_settings

    agent_dir = options.agent_dir or default_agent_dir()
    if options.agent_dir and not options.session_dir:  # an explicit agent dir holds the sessions too
        options = replace(options, session_dir=str(sessions_dir(None, agent=options.agent_dir)))
    settings, policy = load_project_settings(options, agent_dir)  # project trust: resources/trust.py
    registry = ModelRegistry(agent_dir, cli_api_key=options.api_key, cli_provider=options.provider)
    prelude = SessionPrelude(options, agent_dir, settings, policy, registry, _open_store(options))
    prelude.model_control.configure_scope(options.scoped_models)
    _select_model(prelude, options)
    prelude.model_control.start(options.context_window)  # the model's context window, --context-window
    return prelude


def _no_event(event: Any) -> None:
    """Start-up emits no event (`ModelControl` announces context windows only on tree moves)."""


def _open_store(options: SessionOptions) -> SessionStore:
    if options.no_session:
        return SessionStore.in_memory(options.cwd, session_id=options.session_id)
    try:
        if options.fork_from:
            from .switching import fork_file

            return fork_file(options.fork_from, options.cwd, options.session_dir)
        if options.session_file:
            return SessionStore.open(options.session_file, lock=True)  # one writer per file
        return SessionStore.create(options.cwd, options.session_dir, lock=True, session_id=options.session_id)
    except SessionFileError as exc:
        raise CommandError(str(exc)) from exc


def _select_model(session: SessionPrelude, options: SessionOptions) -> None:
    """A resumed session (`--session`, `--continue`, `--fork`) continues with its branch's model, thinking level
    and context window (`_resume_model`); a new one takes CLI flags, then settings, then the first model with
    auth, and records them."""
    if options.thinking is not None and options.thinking not in THINKING_LEVELS:
        raise CommandError(f"Invalid thinking level: {path_text(options.thinking)}. Valid levels: {', '.join(THINKING_LEVELS)}")
    if isinstance(options.model, dict):
        _use_model_object(session, options.model, options.thinking)
        return
    resumed = session.store.build_context(repair=False) if session.store.entries else None
    if resumed is not None and session.model_control.restore(resumed):
        _resume_model(session, options)
        return
    model, thinking, _ = _initial_model(session, options)
    if model is None:
        return
    if resumed is not None:  # the branch's model is gone (models.json changed): its thinking level still holds
        if resumed.model is not None and not (options.model or options.provider):
            session.warnings.append(f"The session's model {resumed.model[0]}/{resumed.model[1]} is not available: "
                                    f"continuing with {model['provider']}/{model['id']}")
        if resumed.thinking_level and _explicit_level(session, options) is None:
            thinking = clamp_thinking_level(model, resumed.thinking_level)
    session.agent.model = model
    session.store.append_model_change(model["provider"], model["id"])
    session.agent.thinking_level = thinking
    session.store.append_thinking_level_change(thinking)


def _initial_model(session: SessionPrelude, options: SessionOptions) -> tuple[Any, str, list[str]]:
    """`ModelRegistry.initial_model` for the flags: (model or None, thinking level, warnings). Flags that name no
    model raise `CommandError`, except with `start_without_model` (RPC), which records why in `model_problem`."""
    model, thinking, warnings = session.registry.initial_model(
        provider=options.provider, model_pattern=options.model, settings=session.settings, thinking=options.thinking,
        scope=session.model_control.scope)
    if model is None and (options.provider or options.model):
        problem = "; ".join(warnings) or f"Model not found: {path_text(options.model or options.provider)}"
        if not options.start_without_model:
            raise CommandError(session.registry.explain_missing(problem))
        session.model_problem = session.registry.explain_missing(problem)  # what prompts answer
        session.warnings.append(f"{problem}; starting without a model (choose one with set_model)")
        return None, thinking, warnings
    session.warnings.extend(warnings)
    return model, thinking, warnings


def _resume_model(session: SessionPrelude, options: SessionOptions) -> None:
    """Flags on a resumed session (the branch's configuration is active): a `--model` / `--provider` naming
    another model switches to it, `--thinking` or a `:<level>` suffix sets the level; only what changes is
    recorded, so flags that restate the branch write nothing (reference: resuming appends nothing)."""
    current = session.model
    level = _explicit_level(session, options)
    chosen = current
    if options.model or (options.provider and options.provider.lower() != current["provider"].lower()):
        model, clamped, _ = _initial_model(session, options)  # it warned of a level the model does not support
        if model is not None:  # unresolved (RPC): the branch's model stays
            chosen, level = model, (clamped if level is not None else None)
    control = session.model_control
    if (chosen["provider"], chosen["id"]) != (current["provider"], current["id"]):
        control.switch(chosen, level)
    elif level is not None:
        control.request_level(level)  # clamped to the model, with the warning
    registry = session.registry
    if registry.cli_api_key and registry.cli_provider is None:  # as `initial_model` binds it for a new session:
        registry.cli_provider = current["provider"]  # `--api-key` never goes to another provider after a switch


def _explicit_level(session: SessionPrelude, options: SessionOptions) -> str | None:
    """The thinking level the flags ask for: `--thinking`, else the `--model` pattern's `:<level>` suffix."""
    if options.thinking is not None or not options.model:
        return options.thinking
    return session.registry.resolve_model_pattern(options.model, options.provider)[1]


def _use_model_object(session: SessionPrelude, model: Any, thinking: str | None) -> None:
    """SDK: a Model dict given as is (e.g. `faux_model()`), not looked up in the registry; recorded like any
    start-up model. The thinking level is clamped to what the model supports (a warning when it had to be)."""
    from ..ai.catalogue import default_thinking_level
    from .models.selection import supported_level

    level, warning = supported_level(model, thinking) if thinking else (default_thinking_level(model), None)
    session.warnings.extend([warning] if warning else [])
    session.agent.model = model
    session.store.append_model_change(model["provider"], model["id"])
    session.agent.thinking_level = level
    session.store.append_thinking_level_change(level)
