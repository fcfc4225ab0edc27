"""Handlers that read session state: get_state, get_messages, get_last_assistant_text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .registry import handler

if TYPE_CHECKING:
    from ..server import RpcServer


@handler("get_state")
async def _get_state(server: RpcServer, command: dict[str, Any]) -> Any:
    return server.session.get_state()


@handler("get_messages")
async def _get_messages(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"messages": server.session.messages}


@handler("get_last_assistant_text")
async def _last_text(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"text": server.session.last_assistant_text()}
