"""Handlers for prompting and the message queues: prompt, steer, follow_up, abort, clear_queue.

`streamingBehavior` and `images` are well formed by the time a handler runs (validation.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable

from ....agent.agent import message_text
from ...dropped_images import dropped_images_warning
from .registry import handler

if TYPE_CHECKING:
    from ..server import RpcServer


def _waits_for_plugins(server: RpcServer, command: dict[str, Any]) -> bool:
    """`prompt` is long only while a session change is pending, while plugin input handlers are registered (a
    plugin command is not: it answers `handled` before the command's own events), or when it names an MCP
    server's prompt (its text comes from the server): it answers when they are done."""
    hooks = server.session.hooks
    if server.session.intake.holds_prompts or server.session.mcp.names_prompt(command["message"]):
        return True
    return hooks.handles_input() and hooks.command_name(command["message"]) is None


@handler("prompt", background=_waits_for_plugins)
def _prompt(server: RpcServer, command: dict[str, Any]) -> Awaitable[Any]:
    """Takes its place on arrival (a plain function: `registry.py`), so an `abort` sent after it cancels it
    while it is not sent yet, and one sent before it does not."""
    warning = dropped_images_warning(server.session.model, command.get("images"))  # the model now, not later
    return _disposition(server.session.submit(command["message"], command.get("images"),
                                              command.get("streamingBehavior")), warning)


async def _disposition(submitted: Awaitable[str], warning: str | None) -> dict[str, str]:
    return _answer(await submitted, warning)


@handler("steer")
async def _steer(server: RpcServer, command: dict[str, Any]) -> Any:
    warning = dropped_images_warning(server.session.model, command.get("images"))
    return _answer(server.session.steer(command["message"], command.get("images")), warning)


@handler("follow_up")
async def _follow_up(server: RpcServer, command: dict[str, Any]) -> Any:
    warning = dropped_images_warning(server.session.model, command.get("images"))
    return _answer(server.session.follow_up(command["message"], command.get("images")), warning)


def _answer(disposition: str, warning: str | None) -> dict[str, str]:
    """`{disposition}`, with `warning` when the images go to a text-only model (`dropped_images.py`); a plugin
    command that handled the prompt got them itself."""
    if warning is None or disposition == "handled":
        return {"disposition": disposition}
    return {"disposition": disposition, "warning": warning}


@handler("abort", background=True)
def _abort(server: RpcServer, command: dict[str, Any]) -> Awaitable[None]:
    """Stops the work now, so a prompt sent right after it is not cancelled; answers once the session settled
    (`AgentSession.begin_abort`)."""
    return server.session.begin_abort()


@handler("clear_queue")
async def _clear_queue(server: RpcServer, command: dict[str, Any]) -> Any:
    steering, follow_up = server.session.intake.journal.clear()
    return {"steering": [message_text(m) for m in steering], "followUp": [message_text(m) for m in follow_up]}
