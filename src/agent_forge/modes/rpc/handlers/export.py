"""Handler for export_html: the session as one self-contained HTML file."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .registry import handler

if TYPE_CHECKING:
    from ..server import RpcServer


@handler("export_html", background=True)
async def _export_html(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"path": await server.session.export_html(command.get("outputPath"))}
