"""Handlers for models, thinking levels and context windows; the logic is in `coding/models/control.py`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .registry import handler

if TYPE_CHECKING:
    from ..server import RpcServer


@handler("set_model")
async def _set_model(server: RpcServer, command: dict[str, Any]) -> Any:
    return server.session.model_control.set_model(command["provider"], command["modelId"])


@handler("cycle_model", nullable=True)
async def _cycle_model(server: RpcServer, command: dict[str, Any]) -> Any:
    return server.session.model_control.cycle_model()


@handler("get_available_models")
async def _available_models(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"models": server.session.model_control.available_models()}


@handler("logout_provider")
async def _logout_provider(server: RpcServer, command: dict[str, Any]) -> Any:
    return server.session.model_control.logout_provider(command["provider"])


@handler("set_thinking_level")
async def _set_thinking(server: RpcServer, command: dict[str, Any]) -> Any:
    server.session.model_control.set_thinking_level(command["level"])
    return None


@handler("cycle_thinking_level", nullable=True)
async def _cycle_thinking(server: RpcServer, command: dict[str, Any]) -> Any:
    return server.session.model_control.cycle_thinking_level()


@handler("get_available_thinking_levels")
async def _thinking_levels(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"levels": server.session.model_control.available_thinking_levels()}


@handler("get_available_context_windows")
async def _context_windows(server: RpcServer, command: dict[str, Any]) -> Any:
    return server.session.model_control.available_context_windows()


@handler("set_context_window")
async def _set_context_window(server: RpcServer, command: dict[str, Any]) -> Any:
    server.session.model_control.set_context_window(command["contextWindow"])
    return None
