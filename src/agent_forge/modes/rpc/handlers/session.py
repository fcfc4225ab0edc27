"""Handlers for queue modes, session naming, command listing and MCP servers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .registry import handler

if TYPE_CHECKING:
    from ..server import RpcServer


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
    return {"commands": server.session.get_commands()}


@handler("get_mcp_servers")
async def _get_mcp_servers(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"servers": server.session.mcp.servers()}
