"""Assembles an AgentSession from `SessionOptions`: settings, model registry, session store, tools, agent.

`create_session(options)` is the entry point (the SDK's `create_agent_session` wraps it)."""

from __future__ import annotations

from typing import Any, TYPE_CHECKING

from ..agent.agent import Agent
from ..agent.types import ToolError, ToolResult
from .agent_session import AgentSession
from .messages import convert_to_llm
from .models.registry import ModelRegistry
from .mcp.setup import attach_mcp
from .prelude import SessionOptions, prepare_session
from .resources.setup import load_session_resources
from .session.store import SessionStore
from .tools.environment import ToolEnvironment

if TYPE_CHECKING:
    from .settings import Settings
    from .resources.loader import SessionResources
    from .tools.selection import ToolSelection


def create_session(options: SessionOptions) -> AgentSession:
    """Build an AgentSession from options: settings, registry, store (new, resumed or in memory), agent.

    Raises `CommandError` for a `--session` file that cannot be opened and for an invalid `thinking` level.
    """
    return build_session(options)


def build_session(options: SessionOptions) -> AgentSession:
    prelude = options.prelude or prepare_session(options)  # settings, registry, store, model: `prelude.py`
    options, agent_dir, settings, policy = prelude.options, prelude.agent_dir, prelude.settings, prelude.policy
    resources, tool_selection = load_session_resources(options, agent_dir, settings, policy)
    registry, store = prelude.registry, prelude.store
    session = _new_session(options, store, registry, settings, resources, tool_selection)
    session.warnings.extend(map(str, store.load_warnings))  # on stderr as `Warning: <message>`
    session.warnings.extend(f"{e}" for e in getattr(settings, "errors", []))
    session.warnings.extend(resources.warnings)
    session.warnings.extend(getattr(registry, "errors", []))
    session.warnings.extend(registry.auth.warnings())  # a broken auth.json would only show as "no key"
    if not options.no_mcp:
        attach_mcp(session, agent_dir, policy, options.mcp_servers,  # servers start in the background
                   unattended=options.unattended)
    prelude.hand_over(session)
    if store.entries:
        _restore(session)
    if options.name is not None:
        session.set_session_name(options.name)  # strips; an empty name is a CommandError
    session.announcer.reset()  # the start-up level and name are what get_state says: no event for them
    return session


def _new_session(options: SessionOptions, store: SessionStore, registry: ModelRegistry, settings: Settings, resources: SessionResources,
                 tool_selection: Any) -> AgentSession:
    from ..ai.registry import stream as registry_stream

    from ..ai.surrogate_stream import surrogate_safe

    # a caller's transport gets the built-in providers' handling of UTF-16 pairs split across deltas
    stream_fn = surrogate_safe(options.stream_fn) if options.stream_fn else registry_stream
    agent = Agent(model=None, stream_fn=stream_fn, emit=lambda e: None,
                  get_api_key=registry.resolve_api_key, get_headers=registry.resolve_request_headers,
                  convert_to_llm=convert_to_llm)
    session = AgentSession(store=store, agent=agent, registry=registry, settings=settings, cwd=options.cwd,
                           system_prompt_override=resources.custom_prompt,
                           append_system_prompt=resources.append_prompt)
    session.resources = resources
    session.tool_selection = tool_selection
    agent._emit = session.on_agent_event  # the session persists before it forwards
    session.switching.session_dir = options.session_dir
    agent.session_id = store.session_id
    # The one switch of the tool layer: every tool the session ever holds gets it (the bash tool's full outputs
    # belong to the session; ACP points files and commands at the editor's)
    session.tool_environment = ToolEnvironment(lambda: agent.tools, session.output_dir)
    agent.prepare_tools = session.tool_environment.apply
    agent.check_result, agent.check_error = _checked_result, _checked_error  # every tool's: SDK objects' too
    agent.tools = options.tools if options.tools is not None else _default_tools(options.cwd, tool_selection,
                                                                                 settings)
    agent.idle_timeout_s = settings.http_idle_timeout_s
    agent.steering_mode = settings.steering_mode
    agent.follow_up_mode = settings.follow_up_mode
    return session


def _checked_result(value: object) -> ToolResult:
    """What a tool returned as the `ToolResult` kept; raises `ToolError` naming the bad part (`tool_results.py`)."""
    from .tool_results import to_tool_result  # at the first tool result: start-up does not import it

    return to_tool_result(value)


def _checked_error(error: ToolError) -> ToolError:
    """`error`, or a copy without the `details` a session file cannot hold (`tool_results.py`)."""
    from .tool_results import checked_tool_error

    return checked_tool_error(error)


def _default_tools(cwd: str, tool_selection: ToolSelection, settings: Settings) -> list:
    from .tools import create_tools
    from .tools.shell import ShellConfig

    shell = ShellConfig(settings.shell_path, settings.shell_command_prefix)
    return create_tools(cwd, tool_selection.builtin, {"bash": {"shell": shell}})


def _restore(session: AgentSession) -> None:
    """The branch's messages, then user bash results a kill before the run settled left pending, then the
    messages it left queued (queued again, for the next prompt: `queue_journal.py`)."""
    context = session.store.build_context()
    session.agent.messages.extend(context.messages)
    session.user_bash.restore_pending()
    session.intake.journal.restore()
