"""Handlers of session state: get_state, set_approvals, get_messages, get_last_assistant_text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .registry import handler

if TYPE_CHECKING:
    from ..server import RpcServer


@handler("get_state")
async def _get_state(server: RpcServer, command: dict[str, Any]) -> Any:
    return server.session.get_state()


@handler("set_approvals")
async def _set_approvals(server: RpcServer, command: dict[str, Any]) -> Any:
    from ....coding.errors import CommandError

    try:
        server.session.approvals.set_policy(command["policy"])
    except ValueError as exc:
        raise CommandError(str(exc)) from None


@handler("get_messages")
async def _get_messages(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"messages": server.session.messages}


@handler("get_last_assistant_text")
async def _last_text(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"text": server.session.last_assistant_text()}
