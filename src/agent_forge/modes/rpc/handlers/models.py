"""Handlers for models and thinking levels."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .registry import handler

if TYPE_CHECKING:
    from ..server import RpcServer


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
