"""Vetting a server's tool before it is offered: a tool whose input schema providers reject is withheld, since
one such tool makes every request fail (`ai/tool_schema.py`); a description over its limit is reported (it is
cut where the tool is built, `tools.py`). See `docs/mcp.md`, "Limits"."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from ...ai.tool_schema import schema_problem
from .errors import validation_summary
from .limits import MAX_DESCRIPTION_CHARS, shown_name
from .tools import offered_schema

if TYPE_CHECKING:
    from mcp_types import Tool


def screen_tool_listing(server: str, result: object, version: str | None) -> list[str]:
    """Make a raw `tools/list` result (`{"tools": [...]}`, a JSON-RPC response's `result`) one the SDK's
    client accepts whatever one tool is like, in place, and return the notices (complete sentences) for what
    was changed. The client validates the whole listing and refuses it, and so the server, for one bad tool.
    An `inputSchema` object without `type` gets `"type": "object"` (silently: common and harmless); a tool
    without `inputSchema` gets `{"type": "object"}` (reported); a tool with an empty or non-string name, or
    whose fields the protocol `version` negotiated (`2025-11-25`; None or unknown: only the name is checked)
    does not allow (`inputSchema` of another type, a description that is not a string, ...) is removed and
    reported. Anything else (no `tools` list) is left for the client to judge."""
    tools = result.get("tools") if isinstance(result, dict) else None
    if not isinstance(tools, list):
        return []
    notices: list[str] = []
    kept = [tool for tool in tools if _screened(server, tool, version, notices)]
    result["tools"] = kept  # type: ignore[index]
    return notices


def _screened(server: str, tool: object, version: str | None, notices: list[str]) -> bool:
    """Whether `tool` (one raw listing item, repaired in place) stays; what is wrong goes to `notices`."""
    name = tool.get("name") if isinstance(tool, dict) else None
    if not isinstance(name, str) or not name:
        notices.append(f"MCP server {server!r} lists a tool whose name is {_described(name, tool)}; it is not "
                       "offered")
        return False
    label = f"MCP tool {shown_name(name)} of server {server!r}"
    schema = tool.get("inputSchema")  # type: ignore[union-attr]
    if "inputSchema" not in tool:  # type: ignore[operator]
        tool["inputSchema"] = {"type": "object"}  # type: ignore[index]
        notices.append(f"{label} has no inputSchema; it is offered as a tool without arguments")
    elif isinstance(schema, dict) and "type" not in schema:
        schema["type"] = "object"
    problem = _wire_problem(tool, version)
    if problem:
        notices.append(f"{label} is not offered: its listing does not follow the protocol ({problem})")
        return False
    return True


def _described(name: object, tool: object) -> str:
    if not isinstance(tool, dict):
        return f"missing (the item is {type(tool).__name__}, not an object)"
    if "name" not in tool:
        return "missing"
    return "empty" if name == "" else f"not a string ({type(name).__name__})"


def _wire_problem(tool: dict, version: str | None) -> str:
    """What the protocol's `Tool` of `version` finds wrong in `tool` (`inputSchema.type: Input should be
    'object'`), or "" (also for a version the SDK does not know: the client refuses that server anyway)."""
    from mcp_types.methods import validate_server_result  # loaded with the SDK, which is running by now

    try:
        validate_server_result("tools/list", version or "", {"tools": [tool]})
    except (ValueError, KeyError) as exc:
        if type(exc).__name__ != "ValidationError":
            return ""
        return validation_summary(exc).replace("tools.0.", "")
    return ""


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


def offered_tools(server: str, tools: list[Tool], admits: Callable[[str], bool]) -> tuple[list[Tool], list[str]]:
    """`(offered, notices)` for the SDK `Tool`s server `server` listed: those a session offers (`admits(name)`,
    its `includeTools`/`excludeTools`, says yes and `vet_tool` passes), each name once with its first tool kept,
    and the problems to report. The one rule for sessions (`manager.py`) and `agent-forge mcp list` alike."""
    seen: dict[str, Tool] = {}
    notices: list[str] = []
    for tool in tools:
        if not admits(tool.name):
            continue
        offered, problems = vet_tool(server, tool)
        notices += problems
        if offered and tool.name in seen:
            notices.append(f"MCP server {server!r} lists the tool {shown_name(tool.name)} more than once; only "
                           "the first is offered")
        elif offered:
            seen[tool.name] = tool
    return list(seen.values()), notices
