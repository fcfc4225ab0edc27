"""Handlers for the session's lifecycle and accounting: new_session, get_session_stats."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable

from .registry import handler
from .tree import cancelled

if TYPE_CHECKING:
    from ..server import RpcServer


@handler("new_session", background=True)
def _new_session(server: RpcServer, command: dict[str, Any]) -> Awaitable[Any]:
    """Pending from its arrival: prompts sent after it wait for it (`Intake.session_change`)."""
    return cancelled(server.session.new_session(command.get("parentSession")))


@handler("get_session_stats")
async def _session_stats(server: RpcServer, command: dict[str, Any]) -> Any:
    return server.session.get_session_stats()
