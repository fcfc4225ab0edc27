"""Handlers for compaction: compact, set_auto_compaction."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable

from .registry import handler

if TYPE_CHECKING:
    from ..server import RpcServer


@handler("compact", background=True)
def _compact(server: RpcServer, command: dict[str, Any]) -> Awaitable[Any]:
    """Takes its place on arrival (a plain function: `registry.py`), behind the prompts sent before it and ahead
    of those sent after it (`AgentSession.compact`): the run it aborts is stopped before a prompt sent after it is
    taken in, so that prompt is queued for after the compaction, and an `abort` sent right after it stops it
    even before its compaction began. Answered in the background, so `abort` (and every other command) is answered while the summary
    is written; the response comes after `compaction_end` (or at once when it never began)."""
    return server.session.compact(command.get("customInstructions") or None)


@handler("set_auto_compaction")
async def _set_auto_compaction(server: RpcServer, command: dict[str, Any]) -> Any:
    """Turn automatic (threshold and overflow) compaction on or off for this session only."""
    server.session.compaction.enabled = command["enabled"]
    return None
