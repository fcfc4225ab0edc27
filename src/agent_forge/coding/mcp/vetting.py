"""Vetting a server's tool before it is offered: a tool whose input schema providers reject is withheld, since
one such tool makes every request fail (`ai/tool_schema.py`); a description over its limit is reported (it is
cut where the tool is built, `tools.py`). See `docs/mcp.md`, "Limits"."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...ai.tool_schema import schema_problem
from .limits import MAX_DESCRIPTION_CHARS, shown_name
from .tools import offered_schema

if TYPE_CHECKING:
    from mcp_types import Tool


def fill_schema_types(result: object) -> None:
    """Give each tool of a raw `tools/list` result (`{"tools": [...]}`, a JSON-RPC response's `result`) whose
    `inputSchema` is an object without `type` the default `"type": "object"`, in place. The SDK's client
    requires the field and would refuse the whole listing (and so the server) for one tool without it."""
    tools = result.get("tools") if isinstance(result, dict) else None
    for tool in tools if isinstance(tools, list) else ():
        schema = tool.get("inputSchema") if isinstance(tool, dict) else None
        if isinstance(schema, dict) and "type" not in schema:
            schema["type"] = "object"


def vet_tool(server: str, tool: Tool) -> tuple[bool, list[str]]:
    """`(offered, notices)` for the SDK `Tool` `tool` of server `server`: whether it may be offered, and the
    problems to report (each a complete sentence naming the server and the tool)."""
    name = f"MCP tool {shown_name(tool.name)} of server {server!r}"
    problem = schema_problem(offered_schema(tool.input_schema))
    if problem:
        return False, [f"{name} is not offered: providers would reject its input schema, and with it every "
                       f"request ({problem})"]
    size = len(tool.description or "")
    if size > MAX_DESCRIPTION_CHARS:
        return True, [f"{name}: its description has {size:,} characters; the first {MAX_DESCRIPTION_CHARS:,} "
                      "are offered"]
    return True, []
