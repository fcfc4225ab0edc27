"""The embedding API: `create_agent_session()` returns the same AgentSession the CLI modes drive.

Example (offline: the scripted `faux` model stands in for a provider; see `docs/sdk.md`)::

    import asyncio
    from agent_forge.sdk import FauxResponse, create_agent_session, faux_model, set_faux_responses

    async def main():
        set_faux_responses([FauxResponse(text="Hello!")])
        session = create_agent_session(cwd=".", model=faux_model(), no_session=True)
        session.subscribe(lambda e: e["type"] == "message_update"
                          and e["assistantMessageEvent"]["type"] == "text_delta"
                          and print(e["assistantMessageEvent"]["delta"], end=""))
        await session.prompt_and_wait("Say hello")
        await session.close()

    asyncio.run(main())
"""

from __future__ import annotations

import os
from typing import Any

from .ai.providers.faux import FauxProvider, FauxResponse, faux_model, faux_requests, set_faux_responses
from .coding.errors import CommandError
from .coding.agent_session import AgentSession
from .coding.factory import SessionOptions, create_session


def create_agent_session(*, cwd: str | None = None, **options: Any) -> AgentSession:
    """Build a session for `cwd` (default: the current directory).

    Keyword options are the fields of `SessionOptions`: `model` (a pattern such as `"anthropic/claude-sonnet-4-5"`
    or a Model dict such as `faux_model()`), `provider`, `api_key`, `thinking`, `session_file` (resume),
    `session_dir`, `no_session`, `name`, `tools`, `system_prompt`, `append_system_prompt`, `stream_fn`,
    `agent_dir`, `mcp_servers` (MCP servers in the `mcp.json` format: docs/mcp.md). Settings, `models.json` and `auth.json` are read from the agent dir and never written.
    `approvals` (`"full"`, the default whatever the settings say, `"ask"` or `"read-only"`; later
    `session.approvals.set_policy(...)`) and `approver` (an async function of an `ApprovalRequest` returning a
    `Decision` or its choice: `coding/approvals.py`; without one, `ask` refuses the calls it would ask about).

    `tools` is a list of built-in tool names (`["read", "bash"]`: those tools, working in `cwd`) or a list of
    tool objects (the `AgentTool` contract, `agent/types.py`); sessions are saved under `session_dir`, else
    `<agent_dir>/sessions` when `agent_dir` is given, else the default sessions dir.

    Raises `CommandError` for an unreadable session file, an unknown model, an invalid thinking level or an
    empty name; `TypeError` for an unknown option, an `approver` that is not callable and `tools` that is not
    such a list (a string, names mixed with objects); `ValueError` for an unknown tool name (the message lists
    the known ones) or approval policy.
    """
    from .coding.approvals import check_policy

    policy, approver = check_policy(options.pop("approvals", "full")), options.pop("approver", None)
    if "tools" in options:
        options.update(_tool_options(options.pop("tools")))
    if approver is not None and not callable(approver):
        raise TypeError(f"approver must be an async function of an ApprovalRequest, got {type(approver).__name__}")
    session = create_session(SessionOptions(cwd=os.path.abspath(cwd or os.getcwd()), **options))
    session.approvals.set_policy(policy)
    session.approvals.approver = approver
    return session


def _tool_options(tools: Any) -> dict[str, Any]:
    """`tools` as SessionOptions fields: names become the `--tools` allowlist (`tool_names`), objects `tools`."""
    from .coding.tools import TOOL_FACTORIES

    if tools is None:
        return {}
    if not isinstance(tools, (list, tuple)):
        raise TypeError(f"tools must be a list of tool names or tool objects, got {type(tools).__name__}"
                        + (f" (for names, pass a list: {tools.split(',')!r})" if isinstance(tools, str) else ""))
    names = [tool for tool in tools if isinstance(tool, str)]
    if names and len(names) != len(tools):
        raise TypeError("tools must be all tool names or all tool objects, not a mix")
    if not names:
        bad = next((tool for tool in tools if not (hasattr(tool, "name") and hasattr(tool, "execute"))), None)
        if bad is not None:
            raise TypeError(f"tools[{list(tools).index(bad)}] is not a tool (it needs `name` and `execute`): "
                            f"{type(bad).__name__}")
        return {"tools": list(tools)}
    unknown = [name for name in names if name not in TOOL_FACTORIES]
    if unknown:
        raise ValueError(f"Unknown tool{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; known "
                         f"tools: {', '.join(TOOL_FACTORIES)}")
    return {"tool_names": names}


__all__ = ["AgentSession", "CommandError", "FauxProvider", "FauxResponse", "SessionOptions", "create_agent_session",
           "faux_model", "faux_requests", "set_faux_responses"]
