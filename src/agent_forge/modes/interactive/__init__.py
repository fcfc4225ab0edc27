"""Interactive mode: the terminal UI a person works in (prompt_toolkit live region + rich scrollback).

Imported only when stdin and stdout are terminals (`cli.py`); RPC, print and JSON mode never import
prompt_toolkit or rich (`tests/e2e/test_startup_imports.py`). Modules, one concern each:
`render` (rich to ANSI, cleaning), `blocks` (transcript renderables), `tool_blocks` (tool call blocks),
`stream` (the bounded tail of a streaming message), `footer`, `editor` (buffer, history, pastes), `keys`,
`commands` (`/` commands and `!` shell), `view` (session events to screen), `app` (the whole mode).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...coding.agent_session import AgentSession


async def run_interactive_mode(session: AgentSession, first_prompt: str | None = None) -> int:
    """Run the terminal UI on `session` until the user exits; the exit code (0 for Ctrl+D, `/quit`)."""
    from .app import InteractiveMode

    return await InteractiveMode(session).run(first_prompt)
