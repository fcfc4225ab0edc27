"""One handler per RPC command: read the validated command, call the session, return the response `data`.

A handler returns the `data` object (None for responses without data) or raises `CommandError`; the server
turns either into exactly one response carrying the request's `id`. Handlers marked `background` (long-running
commands such as `bash`) run as tasks so other commands are still answered meanwhile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable

from ...agent.agent import message_text
from ...coding.agent_session import CommandError, user_message

if TYPE_CHECKING:
    from .server import RpcServer

Handler = Callable[["RpcServer", dict[str, Any]], Awaitable[Any]]
HANDLERS: dict[str, Handler] = {}


def handler(name: str, *, background: bool = False) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        fn.background = background  # type: ignore[attr-defined]
        HANDLERS[name] = fn
        return fn

    return register


def _images(command: dict[str, Any]) -> list[dict[str, Any]] | None:
    """Validate `images`: each an ImageContent `{type:"image", data, mimeType}`."""
    images = command.get("images")
    if images is None:
        return None
    for i, image in enumerate(images):
        if not (isinstance(image, dict) and image.get("type") == "image" and isinstance(image.get("data"), str)
                and isinstance(image.get("mimeType"), str)):
            raise CommandError(f"Field 'images[{i}]' must be an image: {{type: \"image\", data, mimeType}}")
    return images


# -- prompting ---------------------------------------------------------------------------------------


@handler("prompt")
async def _prompt(server: RpcServer, command: dict[str, Any]) -> Any:
    behavior = command.get("streamingBehavior")
    if behavior is not None and behavior not in ("steer", "followUp"):
        raise CommandError("Field 'streamingBehavior' must be 'steer' or 'followUp'")
    disposition = server.session.prompt(command["message"], _images(command), behavior)
    return {"disposition": disposition}


@handler("steer")
async def _steer(server: RpcServer, command: dict[str, Any]) -> Any:
    server.session.queue(user_message(command["message"], _images(command)), "steer")
    return {"disposition": "queued"}


@handler("follow_up")
async def _follow_up(server: RpcServer, command: dict[str, Any]) -> Any:
    server.session.queue(user_message(command["message"], _images(command)), "followUp")
    return {"disposition": "queued"}


@handler("abort")
async def _abort(server: RpcServer, command: dict[str, Any]) -> Any:
    await server.session.abort()
    return None


@handler("clear_queue")
async def _clear_queue(server: RpcServer, command: dict[str, Any]) -> Any:
    steering, follow_up = server.session.agent.clear_queues()
    return {"steering": [message_text(m) for m in steering], "followUp": [message_text(m) for m in follow_up]}


# -- state -------------------------------------------------------------------------------------------


@handler("get_state")
async def _get_state(server: RpcServer, command: dict[str, Any]) -> Any:
    return server.session.get_state()


@handler("get_messages")
async def _get_messages(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"messages": server.session.messages}


@handler("get_last_assistant_text")
async def _last_text(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"text": server.session.last_assistant_text()}


# -- model and thinking ------------------------------------------------------------------------------


@handler("set_model")
async def _set_model(server: RpcServer, command: dict[str, Any]) -> Any:
    return server.session.set_model(command["provider"], command["modelId"])


@handler("get_available_models")
async def _available_models(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"models": server.session.available_models()}


@handler("set_thinking_level")
async def _set_thinking(server: RpcServer, command: dict[str, Any]) -> Any:
    server.session.set_thinking_level(command["level"])
    return None


@handler("get_available_thinking_levels")
async def _thinking_levels(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"levels": server.session.available_thinking_levels()}


# -- queue modes and session -------------------------------------------------------------------------


@handler("set_steering_mode")
async def _steering_mode(server: RpcServer, command: dict[str, Any]) -> Any:
    server.session.set_queue_mode("steering", command["mode"])
    return None


@handler("set_follow_up_mode")
async def _follow_up_mode(server: RpcServer, command: dict[str, Any]) -> Any:
    server.session.set_queue_mode("followUp", command["mode"])
    return None


@handler("set_session_name")
async def _session_name(server: RpcServer, command: dict[str, Any]) -> Any:
    server.session.set_session_name(command["name"])
    return None


@handler("get_commands")
async def _get_commands(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"commands": []}
