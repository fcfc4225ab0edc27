"""Handlers of session state: get_state, set_approvals, get_messages, get_last_assistant_text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable

from ..raw_json import BIG, list_answer
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


@handler("get_messages", background=lambda server, command: len(server.session.messages) > BIG)
def _get_messages(server: RpcServer, command: dict[str, Any]) -> Awaitable[Any]:
    """The snapshot now (arrival order); a long one encoded in a worker thread (`raw_json.py`)."""
    messages = list(server.session.messages)
    return _messages(messages)


async def _messages(messages: list[Any]) -> dict[str, Any]:
    return {"messages": await list_answer(messages)}


@handler("get_last_assistant_text")
async def _last_text(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"text": server.session.last_assistant_text()}
