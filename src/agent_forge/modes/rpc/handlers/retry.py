"""Handlers for automatic retry: set_auto_retry, abort_retry."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .registry import handler

if TYPE_CHECKING:
    from ..server import RpcServer


@handler("set_auto_retry")
async def _set_auto_retry(server: RpcServer, command: dict[str, Any]) -> Any:
    """Turn retries on or off for this session only (settings.json is never written, SPEC-NOTES)."""
    server.session.retry.enabled = command["enabled"]
    return None


@handler("abort_retry", background=True)
async def _abort_retry(server: RpcServer, command: dict[str, Any]) -> Any:
    """Cancel a backoff wait at once and stop retrying (`AgentSession.abort_retry`)."""
    await server.session.abort_retry()
    return None
