"""The `read_mcp_resource` tool: the model reads a connected server's resource by URI (`docs/mcp.md`, "Resources").

Offered while at least one connected server lists resources or resource templates. Its description names those
servers and their first `LISTED_PER_SERVER` resources (URI, name, MIME type) and templates, so the model knows
what to ask for. Contents map like tool results: text as text headed `[Resource <uri>]`, image blobs as images,
other blobs (and images that fail the checks `read` makes) described in a line; text over the `bash` limits is
cut the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from ...agent.types import ToolError, ToolResult, ToolUpdate
from ...ai.types import JsonValue, UserContent
from ..tools.output_files import OutputDir
from ..tools.truncate import format_size
from .deadline import CallDeadlines, CallExpired
from .limits import MAX_NAME_CHARS, MAX_URI_CHARS, one_line
from .tools import checked_image, expiry_message, truncated

if TYPE_CHECKING:
    from mcp_types import ReadResourceResult

    from .connection import ServerConnection

NAME = "read_mcp_resource"
LISTED_PER_SERVER = 20


class ReadResourceTool:
    """Reads `uri` from `server`, one of `connections` (those offering resources when it was made)."""

    name = NAME
    read_only = True  # runs unasked under the `ask` approval policy (coding/approvals.py)
    label = "MCP resource"

    def __init__(self, connections: list[ServerConnection], output_dir: Callable[[], OutputDir] | None,
                 deadlines: CallDeadlines, limit: Callable[[ServerConnection], float | None]):
        self.connections = {c.name: c for c in connections}
        self.output_dir, self.deadlines, self.limit = output_dir, deadlines, limit
        self.description = describe(connections)
        self.parameters: dict[str, JsonValue] = {
            "type": "object",
            "properties": {
                "server": {"type": "string", "enum": list(self.connections), "description": "The MCP server"},
                "uri": {"type": "string", "description": "The resource's URI (a listed one, or one a template "
                                                         "of the server describes)"}},
            "required": ["server", "uri"]}

    async def execute(self, tool_call_id: str, args: dict[str, JsonValue], on_update: ToolUpdate) -> ToolResult:
        server, uri = args.get("server"), args.get("uri")
        if not isinstance(server, str) or not isinstance(uri, str) or not uri:
            raise ToolError("read_mcp_resource needs `server` and `uri` (strings)")
        connection = self.connections.get(server)
        if connection is None:
            raise ToolError(f"No MCP server {server!r} offers resources; servers: {', '.join(self.connections)}")
        try:
            result = await self.deadlines.run(connection.read_resource(uri), self.limit(connection))
        except CallExpired as exc:
            raise ToolError(expiry_message(exc, server, f"reading {uri}")) from None
        content, details = truncated(resource_content(result), {"server": server, "uri": uri}, self.output_dir)
        return ToolResult(content=content or [{"type": "text", "text": f"[Resource {uri}: empty]"}],
                          details=details)


def resource_content(result: ReadResourceResult) -> list[UserContent]:
    """The blocks of a `ReadResourceResult`'s contents (module docstring)."""
    blocks: list[UserContent] = []
    for item in getattr(result, "contents", None) or []:
        mime = getattr(item, "mime_type", None)
        if getattr(item, "text", None) is not None:
            blocks.append({"type": "text", "text": f"[Resource {item.uri}]\n{item.text}"})
        elif (mime or "").startswith("image/") and getattr(item, "blob", None):
            blocks.append(checked_image(item.blob, mime, f"Resource {one_line(str(item.uri), MAX_URI_CHARS)}"))
        else:
            size = len(getattr(item, "blob", "") or "") * 3 // 4
            blocks.append({"type": "text", "text": f"[Resource {item.uri}: {mime or 'binary'}, about "
                                                   f"{format_size(size)}, not shown]"})
    return blocks


def describe(connections: list[ServerConnection]) -> str:
    lines = ["Read a resource of a connected MCP server by its URI. Servers and their resources:"]
    for connection in connections:
        lines.append(f"- {connection.name}:")
        for resource in connection.resources[:LISTED_PER_SERVER]:
            about = ", ".join(one_line(x, MAX_NAME_CHARS) for x in (resource.name, resource.mime_type) if x)
            lines.append(f"  - {one_line(str(resource.uri), MAX_URI_CHARS)}" + (f" ({about})" if about else ""))
        if len(connection.resources) > LISTED_PER_SERVER:
            lines.append(f"  - ... {len(connection.resources) - LISTED_PER_SERVER} more")
        for template in connection.resource_templates[:LISTED_PER_SERVER]:
            name = f" ({one_line(template.name, MAX_NAME_CHARS)})" if template.name else ""
            lines.append(f"  - template {one_line(str(template.uri_template), MAX_URI_CHARS)}{name}")
    return "\n".join(lines)
