"""Handlers for prompting and the message queues: prompt, steer, follow_up, abort, clear_queue."""

from __future__ import annotations

import binascii
from typing import TYPE_CHECKING, Any

from ....agent.agent import message_text
from ....coding.agent_session import CommandError
from .registry import handler

if TYPE_CHECKING:
    from ..server import RpcServer


IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
"""The image media types every supported provider API accepts."""


def _images(command: dict[str, Any]) -> list[dict[str, Any]] | None:
    """Validate `images`: each an ImageContent `{type:"image", data: base64, mimeType}` of a supported type.
    A bad image is refused here: once in the conversation it would make every later request fail."""
    images = command.get("images")
    if images is None:
        return None
    for i, image in enumerate(images):
        if not (isinstance(image, dict) and image.get("type") == "image" and isinstance(image.get("data"), str)
                and isinstance(image.get("mimeType"), str)):
            raise CommandError(f"Field 'images[{i}]' must be an image: {{type: \"image\", data, mimeType}}")
        if image["mimeType"] not in IMAGE_TYPES:
            raise CommandError(f"Field 'images[{i}].mimeType' must be one of {', '.join(IMAGE_TYPES)}")
        if not _is_base64(image["data"]):
            raise CommandError(f"Field 'images[{i}].data' must be base64-encoded image data")
    return images


def _is_base64(data: str) -> bool:
    try:
        return bool(data) and bool(binascii.a2b_base64(data.encode("ascii"), strict_mode=True))
    except (ValueError, UnicodeEncodeError):
        return False


def _waits_for_plugins(server: RpcServer, command: dict[str, Any]) -> bool:
    """`prompt` is long only while plugin input handlers are registered: it answers when they are done."""
    return server.session.hooks.handles_input()


@handler("prompt", background=_waits_for_plugins)
async def _prompt(server: RpcServer, command: dict[str, Any]) -> Any:
    behavior = command.get("streamingBehavior")
    if behavior is not None and behavior not in ("steer", "followUp"):
        raise CommandError("Field 'streamingBehavior' must be 'steer' or 'followUp'")
    disposition = await server.session.submit(command["message"], _images(command), behavior)
    return {"disposition": disposition}


@handler("steer")
async def _steer(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"disposition": server.session.steer(command["message"], _images(command))}


@handler("follow_up")
async def _follow_up(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"disposition": server.session.follow_up(command["message"], _images(command))}


@handler("abort", background=True)
async def _abort(server: RpcServer, command: dict[str, Any]) -> Any:
    await server.session.abort()
    return None


@handler("clear_queue")
async def _clear_queue(server: RpcServer, command: dict[str, Any]) -> Any:
    steering, follow_up = server.session.agent.clear_queues()
    return {"steering": [message_text(m) for m in steering], "followUp": [message_text(m) for m in follow_up]}
