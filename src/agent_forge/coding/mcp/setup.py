"""Giving a session its MCP servers (the factory's step): the configuration files, the SDK's `mcp_servers`, and
the manager started in the background when a loop is running (else at the first prompt)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from .config import McpServerConfig, has_project_file, load_mcp_config, parse_servers

if TYPE_CHECKING:
    from ..agent_session import AgentSession
    from ..resources.trust import ProjectPolicy


UNATTENDED_CALL_LIMIT_S = 300.0
"""Print and JSON mode: how long one MCP call may run for a server without `toolTimeoutMs` (nobody can abort)."""


def attach_mcp(session: AgentSession, agent_dir: Path, policy: ProjectPolicy | None,
               mcp_servers: object = None, *, unattended: bool = False) -> None:
    """Read `<agent dir>/mcp.json`, the project's `mcp.json` when the project is trusted, and `mcp_servers`
    (`{"mcpServers": {...}}` or `{name: entry}`; these replace file entries of the same name). Problems go to
    `session.warnings`; with no server configured nothing happens (and the SDK is never imported).
    `unattended` (print and JSON mode): calls get `UNATTENDED_CALL_LIMIT_S` unless their server sets
    `toolTimeoutMs`."""
    project_allowed = policy is not None and policy.code_allowed
    servers, warnings = load_mcp_config(session.cwd, agent_dir, project_allowed=project_allowed)
    if policy is not None and policy.enabled and not project_allowed and has_project_file(session.cwd, agent_dir):
        warnings.append(policy.skipped_message("project MCP servers (.agent-forge/agent/mcp.json)"))
    if mcp_servers is not None:
        extra, problems = parse_servers(mcp_servers, cwd=session.cwd)
        warnings.extend(problems)
        servers = _replaced(servers, extra)
    session.warnings.extend(warnings)
    if not servers:
        return
    from .manager import McpManager

    session.mcp = McpManager(servers, agent=session.agent, selection=lambda: session.tool_selection,
                             emit=session.emit, output_dir=session.output_dir,
                             call_timeout=lambda: _call_timeout(session),
                             call_limit=UNATTENDED_CALL_LIMIT_S if unattended else None)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return  # started by the first prompt's `wait_ready`
    session.mcp.start_soon()


def _call_timeout(session: AgentSession) -> float:
    """`pluginHandlerTimeoutMs` of the agent dir's settings in seconds (as for plugin tools), else 10 s."""
    from ..config_values import is_number
    from .deadline import DEFAULT_TIMEOUT_S

    value = (getattr(session.settings, "global_raw", None) or {}).get("pluginHandlerTimeoutMs")
    return value / 1000 if is_number(value) and value > 0 else DEFAULT_TIMEOUT_S


def _replaced(servers: list[McpServerConfig], extra: list[McpServerConfig]) -> list[McpServerConfig]:
    names = {server.name for server in extra}
    return [server for server in servers if server.name not in names] + extra

