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
- `untyped`: the same loop; tool `loose`, whose `inputSchema` has no `type`, and `fine`
- `orphan-exit`: the same loop; a call starts `sleep 300` holding the server's stdout, in its process group with
  an empty environment, writes `child <pid>` to `$MCP_TEST_LOG`, and exits with status 3 without answering (the
  stream never ends while the child lives)
- `child`: the same loop; at start it starts `sleep 300` in a session of its own (keeping the environment) and
  writes `child <pid>` to `$MCP_TEST_LOG`; it exits when its stdin closes, leaving the child
- `bad-images`: tools whose results hold images no provider takes (`svg`: `image/svg+xml`, `garbage`: data that
  is not base64, `fake`: `image/png` data that is text, `big`: a PNG over 20 MB) and `good` (a real PNG); the
  resource `file:///fake.png` (`image/png`, text bytes) and `file:///good.png`
- `reserved`: tool `mcp_resource` (configured as server `read` its name would be `read_mcp_resource`) and a
  resource `file:///r.txt`

Every call of another tool answers `called <name>`.
"""

from __future__ import annotations

import base64
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


PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c63f8ffff3f0005fe02fea7d6a4e70000000049454e44ae426082")
B64 = base64.b64encode
IMAGES = {"svg": (B64(b"<svg xmlns='http://www.w3.org/2000/svg'/>").decode(), "image/svg+xml"),
          "garbage": ("not base64 at all!", "image/png"), "fake": (B64(b"just some text").decode(), "image/png"),
          "big": (B64(PNG + b"\0" * (21 * MB)).decode(), "image/png"), "good": (B64(PNG).decode(), "image/png")}


def _tools() -> list[types.Tool]:
    fine = types.Tool(name="fine", description="An ordinary tool", input_schema=OBJECT)
    if MODE == "huge-error":
        return [types.Tool(name="boom", description="Fails with a huge error", input_schema=OBJECT), fine]
    if MODE == "huge-text":
        return [types.Tool(name="big", title="T\x1b[2J" + "t" * 300, description="D" * (5 * MB),
                           input_schema=OBJECT), fine]
    if MODE == "bad-images":
        return [types.Tool(name=name, description=f"Returns {name}", input_schema=OBJECT) for name in IMAGES]
    if MODE == "reserved":
        return [types.Tool(name="mcp_resource", description="A tool whose name clashes", input_schema=OBJECT)]
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
    if MODE == "bad-images":
        data, mime = IMAGES[params.name]
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"image {params.name}"),
                                             types.ImageContent(type="image", data=data, mime_type=mime)])
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"called {params.name}")])


async def list_prompts(ctx, params) -> types.ListPromptsResult:
    argument = types.PromptArgument(name="topic", description="A" * MB)
    return types.ListPromptsResult(prompts=[types.Prompt(name="wordy", description="W" * (5 * MB),
                                                         arguments=[argument])])


async def list_resources(ctx, params) -> types.ListResourcesResult:
    return types.ListResourcesResult(resources=[types.Resource(uri="file:///" + "u" * MB, name="N" * MB)])


async def list_small_resources(ctx, params) -> types.ListResourcesResult:
    uris = ["file:///fake.png", "file:///good.png"] if MODE == "bad-images" else ["file:///r.txt"]
    return types.ListResourcesResult(resources=[types.Resource(uri=uri, name=uri[8:]) for uri in uris])


async def read_resource(ctx, params) -> types.ReadResourceResult:
    if params.uri == "file:///r.txt":
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=params.uri, text="resource r")])
    blob = B64(b"text, not a PNG" if params.uri == "file:///fake.png" else PNG).decode()
    return types.ReadResourceResult(contents=[types.BlobResourceContents(uri=params.uri, mime_type="image/png",
                                                                         blob=blob)])


HUGE = {"on_list_prompts": list_prompts, "on_list_resources": list_resources} if MODE == "huge-text" else \
    {"on_list_resources": list_small_resources, "on_read_resource": read_resource} \
    if MODE in ("bad-images", "reserved") else {}
server = Server("hostile", **HUGE, instructions=("I" * (5 * MB)) if MODE == "huge-text" else "A hostile server.",
                on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def _sleeper(holds_stdout: bool) -> None:
    import os
    import subprocess

    where = {"stdout": sys.stdout, "env": {}} if holds_stdout else {"stdout": subprocess.DEVNULL,
                                                                    "start_new_session": True}
    child = subprocess.Popen(["/bin/sleep", "300"], stdin=subprocess.DEVNULL, **where)
    with open(os.environ["MCP_TEST_LOG"], "a", encoding="utf-8") as log:
        log.write(f"child {child.pid}\n")


def raw_main() -> None:
    import json
    import os

    if MODE == "child":
        _sleeper(holds_stdout=False)

    schemas = RAW_SCHEMAS if MODE == "raw-schema" else {"loose": {"properties": {"x": {"type": "string"}}}}
    tools = [{"name": name, "inputSchema": schema} for name, schema in schemas.items()]
    tools.append({"name": "fine", "inputSchema": OBJECT})
    init = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "1"}}
    for raw in sys.stdin:
        request = json.loads(raw)
        if "id" in request:
            method = request["method"]
            if MODE == "orphan-exit" and method == "tools/call":
                _sleeper(holds_stdout=True)
                os._exit(3)
            answer = init if method == "initialize" else {"tools": tools} if method == "tools/list" else \
                {"content": [{"type": "text", "text": f"called {request['params']['name']}"}]}
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": answer}) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    raw_main() if MODE in ("raw-schema", "untyped", "orphan-exit", "child") else anyio.run(main)
