"""What a session reports about itself: the `get_state` and `get_session_stats` response data, and the
`export_html` file. Read-only: nothing here changes the session."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from .errors import CommandError, ExportError
from .session.stats import session_stats

if TYPE_CHECKING:
    from ..agent.agent import Agent
    from .approvals import Approvals
    from .compaction.controller import CompactionController
    from .session.store import SessionStore


def session_state(agent: Agent, store: SessionStore, compaction: CompactionController, approvals: Approvals, *,
                  streaming: bool) -> dict[str, Any]:
    """The `get_state` response data (seed 000); `streaming`: a session-level run is going on."""
    state: dict[str, Any] = {
        "model": agent.model,
        "thinkingLevel": agent.thinking_level,
        "isStreaming": streaming,
        "isCompacting": compaction.is_compacting,
        "steeringMode": agent.steering_mode,
        "followUpMode": agent.follow_up_mode,
        "sessionFile": str(store.path) if store.path else None,
        "sessionId": store.session_id,
        "autoCompactionEnabled": compaction.enabled,
        "messageCount": len(agent.messages),
        "pendingMessageCount": len(agent.steering_queue) + len(agent.follow_up_queue),
        "approvals": approvals.policy,
    }
    name = store.session_name
    if name:
        state["sessionName"] = name
    write_error = store.write_error
    if write_error is not None:
        state["sessionWriteError"] = write_error
    return state


def stats_report(agent: Agent, store: SessionStore, compaction: CompactionController) -> dict[str, Any]:
    """The `get_session_stats` response data (seed 000); what each number covers: `session/stats.py`."""
    return session_stats(session_file=str(store.path) if store.path else None, session_id=store.session_id,
                         entries=store.entries, branch=store.branch(), messages=agent.messages, model=agent.model,
                         context_tokens=compaction.context_tokens())


async def export_store(store: SessionStore, output_path: str | None, cwd: str) -> str:
    """Write `store`'s session as one self-contained HTML file; returns its absolute path. Relative and default
    paths are under `cwd`. Raises `CommandError` for an in-memory or empty session and for a path that cannot
    be written. Rendering runs in a thread on a snapshot taken now."""
    try:
        from .export_html import SessionSnapshot, write_export  # only an export needs it (start-up: ~4 ms)

        snapshot = SessionSnapshot.of_store(store)
        return str(await asyncio.to_thread(write_export, snapshot, output_path, cwd))
    except ExportError as exc:
        raise CommandError(str(exc)) from None


def session_name(name: object) -> str:
    """`name` as `set_session_name` records it (stripped). Raises `CommandError` for a non-string or blank."""
    if not isinstance(name, str):
        raise CommandError(f"Session name must be a string, got {type(name).__name__}")
    if not name.strip():
        raise CommandError("Session name cannot be empty")
    return name.strip()
