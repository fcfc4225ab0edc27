"""The embedding API: `create_agent_session()` returns the same AgentSession the CLI modes drive.

Example::

    import asyncio
    from agent_forge import create_agent_session

    async def main():
        session = create_agent_session(cwd=".", model="anthropic/claude-sonnet-4-5", no_session=True)
        session.subscribe(lambda e: e["type"] == "message_update" and print(
            e["assistantMessageEvent"].get("delta", ""), end=""))
        await session.prompt_and_wait("List the files here")
        await session.close()

    asyncio.run(main())
"""

from __future__ import annotations

import os
from typing import Any

from .coding.agent_session import AgentSession, SessionOptions, create_session


def create_agent_session(*, cwd: str | None = None, **options: Any) -> AgentSession:
    """Build a session. Keyword options are the fields of `SessionOptions` (provider, model, api_key, thinking,
    session_file, session_dir, no_session, name, tools, system_prompt, append_system_prompt, stream_fn,
    agent_dir). Raises `CommandError` for an unreadable session file or an invalid thinking level."""
    return create_session(SessionOptions(cwd=os.path.abspath(cwd or os.getcwd()), **options))


__all__ = ["AgentSession", "SessionOptions", "create_agent_session"]
