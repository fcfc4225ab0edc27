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

from .ai.providers.faux import FauxResponse, faux_model, faux_requests, set_faux_responses
from .coding.agent_session import AgentSession, CommandError
from .coding.factory import SessionOptions, create_session


def create_agent_session(*, cwd: str | None = None, **options: Any) -> AgentSession:
    """Build a session for `cwd` (default: the current directory).

    Keyword options are the fields of `SessionOptions`: `model` (a pattern such as `"anthropic/claude-sonnet-4-5"`
    or a Model dict such as `faux_model()`), `provider`, `api_key`, `thinking`, `session_file` (resume),
    `session_dir`, `no_session`, `name`, `tools`, `system_prompt`, `append_system_prompt`, `stream_fn`,
    `agent_dir`, `mcp_servers` (MCP servers in the `mcp.json` format: docs/mcp.md). Settings, `models.json` and `auth.json` are read from the agent dir and never written.

    Raises `CommandError` for an unreadable session file, an unknown model, an invalid thinking level or an
    empty name, and `TypeError` for an unknown option.
    """
    return create_session(SessionOptions(cwd=os.path.abspath(cwd or os.getcwd()), **options))


__all__ = ["AgentSession", "CommandError", "FauxResponse", "SessionOptions", "create_agent_session", "faux_model",
           "faux_requests", "set_faux_responses"]
