"""Handlers for the session's lifecycle and accounting: new_session, get_session_stats."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .registry import handler

if TYPE_CHECKING:
    from ..server import RpcServer


@handler("new_session", background=True)
async def _new_session(server: RpcServer, command: dict[str, Any]) -> Any:
    cancelled = await server.session.new_session(command.get("parentSession"))
    return {"cancelled": cancelled}


@handler("get_session_stats")
async def _session_stats(server: RpcServer, command: dict[str, Any]) -> Any:
    return server.session.get_session_stats()
