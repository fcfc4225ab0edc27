"""A misbehaving MCP server for the end-to-end tests, written with the SDK's low-level server API (`Server`), which
sends whatever its handlers return: `python mcp_hostile_server.py MODE` (stdio). MODE is one of:

- `hang-list`: answers `initialize`, never answers `tools/list`
- `huge-error`: tool `boom`, whose call is answered by a JSON-RPC error with a 10 MB `message`
- `huge-text`: 5 MB `instructions`, tool `big` with a 5 MB description, a 300-character title holding an escape
  sequence, and a progress message of 1 MB; tool `fine` is ordinary; prompt `wordy` with a 5 MB description
  and an argument described in 1 MB; a resource with a 1 MB URI and a 1 MB name
- `bad-schema`: tools whose `inputSchema` providers reject (`wat`: a type name that does not exist, `deep`: 70
  levels of nesting, `fat`: a 200 KB schema), and the ordinary tool `fine`
- `raw-schema`: schemas the SDK's server refuses to send (`props`: `properties` not an object, `top`: not of
  type object, `req`: `required` not a list of strings) and `fine`, from a hand-written JSON-RPC loop

Every call of another tool answers `called <name>`.
"""

from __future__ import annotations

import sys

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

MODE = sys.argv[1]
MB = 1 << 20
OBJECT: dict = {"type": "object", "properties": {"x": {"type": "string"}}}


def _nested(depth: int) -> dict:
    schema: dict = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


BAD_SCHEMAS = {
    "wat": {"type": "object", "properties": {"a": {"type": "wat"}}},
    "deep": _nested(70),
    "fat": {"type": "object", "properties": {f"p{i}": {"type": "string", "description": "d" * 200}
                                             for i in range(1000)}},
}
RAW_SCHEMAS = {"props": {"type": "object", "properties": ["a"]}, "top": {"type": "string"},
               "req": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", 3]}}


def _tools() -> list[types.Tool]:
    fine = types.Tool(name="fine", description="An ordinary tool", input_schema=OBJECT)
    if MODE == "huge-error":
        return [types.Tool(name="boom", description="Fails with a huge error", input_schema=OBJECT), fine]
    if MODE == "huge-text":
        return [types.Tool(name="big", title="T\x1b[2J" + "t" * 300, description="D" * (5 * MB),
                           input_schema=OBJECT), fine]
    if MODE == "bad-schema":
        return [*(types.Tool(name=name, description=f"Bad schema {name}", input_schema=schema)
                  for name, schema in BAD_SCHEMAS.items()), fine]
    return [fine]


async def list_tools(ctx, params) -> types.ListToolsResult:
    if MODE == "hang-list":
        await anyio.sleep_forever()
    return types.ListToolsResult(tools=_tools())


async def call_tool(ctx, params) -> types.CallToolResult:
    if params.name == "boom":
        raise MCPError(-32000, "E" * (10 * MB))
    if params.name == "big":
        await ctx.session.report_progress(1, 2, "P" * MB)
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"called {params.name}")])


async def list_prompts(ctx, params) -> types.ListPromptsResult:
    argument = types.PromptArgument(name="topic", description="A" * MB)
    return types.ListPromptsResult(prompts=[types.Prompt(name="wordy", description="W" * (5 * MB),
                                                         arguments=[argument])])


async def list_resources(ctx, params) -> types.ListResourcesResult:
    return types.ListResourcesResult(resources=[types.Resource(uri="file:///" + "u" * MB, name="N" * MB)])


HUGE = {"on_list_prompts": list_prompts, "on_list_resources": list_resources} if MODE == "huge-text" else {}
server = Server("hostile", **HUGE, instructions=("I" * (5 * MB)) if MODE == "huge-text" else "A hostile server.",
                on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def raw_main() -> None:
    import json

    tools = [{"name": name, "inputSchema": schema} for name, schema in RAW_SCHEMAS.items()]
    tools.append({"name": "fine", "inputSchema": OBJECT})
    init = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "1"}}
    for raw in sys.stdin:
        request = json.loads(raw)
        if "id" in request:
            method = request["method"]
            answer = init if method == "initialize" else {"tools": tools} if method == "tools/list" else \
                {"content": [{"type": "text", "text": f"called {request['params']['name']}"}]}
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": answer}) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    raw_main() if MODE == "raw-schema" else anyio.run(main)
