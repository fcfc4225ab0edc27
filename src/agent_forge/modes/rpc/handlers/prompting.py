"""Handlers for prompting and the message queues: prompt, steer, follow_up, abort, clear_queue.

`streamingBehavior` and `images` are well formed by the time a handler runs (validation.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable

from ....agent.agent import message_text
from .registry import handler

if TYPE_CHECKING:
    from ..server import RpcServer


def _waits_for_plugins(server: RpcServer, command: dict[str, Any]) -> bool:
    """`prompt` is long only while plugin input handlers are registered: it answers when they are done."""
    return server.session.hooks.handles_input()


@handler("prompt", background=_waits_for_plugins)
async def _prompt(server: RpcServer, command: dict[str, Any]) -> Any:
    disposition = await server.session.submit(command["message"], command.get("images"),
                                              command.get("streamingBehavior"))
    return {"disposition": disposition}


@handler("steer")
async def _steer(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"disposition": server.session.steer(command["message"], command.get("images"))}


@handler("follow_up")
async def _follow_up(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"disposition": server.session.follow_up(command["message"], command.get("images"))}


@handler("abort", background=True)
def _abort(server: RpcServer, command: dict[str, Any]) -> Awaitable[None]:
    """Stops the work now, so a prompt sent right after it is not cancelled; answers once the session settled
    (`AgentSession.begin_abort`)."""
    return server.session.begin_abort()


@handler("clear_queue")
async def _clear_queue(server: RpcServer, command: dict[str, Any]) -> Any:
    steering, follow_up = server.session.agent.clear_queues()
    return {"steering": [message_text(m) for m in steering], "followUp": [message_text(m) for m in follow_up]}
