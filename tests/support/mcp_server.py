"""A real MCP server for the end-to-end tests, written with the SDK's server API (`MCPServer`, once FastMCP).

`python mcp_server.py [MODE] [--http PORT_FILE [--json]]`: stdio by default; with `--http` it serves streamable
HTTP on a free loopback port and writes the port to PORT_FILE (answers as server-sent events, or with `--json` as
JSON responses). MODE is one of:

- `normal`: tools `echo`, `add` (structured), `picture` (an image), `readme` (an embedded resource), `fail`
  (`isError`), `slow` (progress, then waits; cancellable), `huge` (`size` bytes of text), `grow` (adds the
  tool `extra` and the prompt `later`, then announces both changed lists), `crash` (the process exits during the call),
  `environ` (the names of its environment variables);
  prompts `review` (`path` required, `focus` optional) and `pair` (user, assistant, user-with-image messages);
  resources `file:///notes.txt` (text), `file:///logo.png` (an image), `file:///data.bin` (binary),
  `file:///big.txt` (3 MB of text), `file:///slow.txt` (answers after 60 s) and the template `note://{topic}`
- `exit`: exits at once, before reading anything
- `chatty-exit`: writes 3 MB to stderr, then `the last words`, and exits
- `hang-init`: reads requests and never answers (so `initialize` hangs)
- `stubborn`: as `hang-init`, but ignores SIGTERM and stdin EOF (only SIGKILL ends it)
- `malformed`: a hand-written JSON-RPC server with one tool `bad` whose result is not a `CallToolResult`
- `twice`: a hand-written JSON-RPC server whose tool list names the tool `echo` twice (then `other`); a
  call answers `called <name>`; calling `other` drops the second `echo` and announces the changed list
- `prompts-twice`: a hand-written JSON-RPC server with no tools and the prompts `dup` (listed twice), `a b` and
  `a_b`; `prompts/get` answers `got <name> <arguments as JSON>`; `hang` never answers
- `garbage`: prints a line that is not JSON-RPC on stdout, then serves as `normal`
- `twin NAME`: one tool NAME (servers `a` with `x_y` and `a_x` with `y` both export the agent tool `a_x_y`)
- `annotated`: tools `peek` (annotated `readOnlyHint: true`) and `poke` (`readOnlyHint: false`), each answering
  `peeked`/`poked`

The server writes `pid <pid>` to the file named by `$MCP_TEST_LOG` when it starts, and the `slow` tool writes
`cancelled <marker>` there when its call is cancelled.
"""

from __future__ import annotations

import os
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "normal"

if MODE == "exit":
    sys.exit(3)
if MODE == "chatty-exit":
    for _ in range(3000):
        sys.stderr.write("chatter " * 128 + "\n")
    sys.stderr.write("the last words\n")
    sys.exit(4)
if MODE == "stubborn":
    import signal
    import time

    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with open(os.environ["MCP_TEST_LOG"], "a", encoding="utf-8") as started:
        started.write(f"pid {os.getpid()}\n")
    for _line in sys.stdin:
        pass
    while True:
        time.sleep(60)
if MODE == "hang-init":
    if os.environ.get("MCP_TEST_LOG"):
        with open(os.environ["MCP_TEST_LOG"], "a", encoding="utf-8") as started:
            started.write(f"pid {os.getpid()}\n")
    for _line in sys.stdin:  # never answers; exits on EOF
        pass
    sys.exit(0)
if MODE == "malformed":
    import json

    TOOL = {"name": "bad", "description": "Answers nonsense", "inputSchema": {"type": "object"}}
    ANSWERS = {"initialize": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                              "serverInfo": {"name": "malformed", "version": "1"}},
               "tools/list": {"tools": [TOOL]}, "tools/call": {"content": "not a list", "isError": "maybe"}}
    for raw in sys.stdin:
        request = json.loads(raw)
        if "id" in request:
            answer = ANSWERS.get(request["method"], {})
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": answer}) + "\n")
            sys.stdout.flush()
    sys.exit(0)
if MODE == "twice":
    import json

    TOOLS = [{"name": "echo", "description": "The first echo", "inputSchema": {"type": "object"}},
             {"name": "echo", "description": "The second echo", "inputSchema": {"type": "object"}},
             {"name": "other", "inputSchema": {"type": "object"}}]
    INIT = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "t", "version": "1"}}
    for raw in sys.stdin:
        request = json.loads(raw)
        if "id" in request:
            method = request["method"]
            answer = INIT if method == "initialize" else {"tools": TOOLS} if method == "tools/list" else \
                {"content": [{"type": "text", "text": f"called {request['params']['name']}"}]}
            if method == "tools/call" and request["params"]["name"] == "other":  # "fixes" the list
                del TOOLS[1]
                sys.stdout.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}) + "\n")
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": answer}) + "\n")
            sys.stdout.flush()
    sys.exit(0)
if MODE == "prompts-twice":
    import json

    PROMPTS = [{"name": "dup", "description": "The first dup"}, {"name": "dup", "description": "The second dup"},
               {"name": "a b", "arguments": [{"name": "x"}]}, {"name": "a_b"}, {"name": "hang"}]
    INIT = {"protocolVersion": "2025-06-18", "capabilities": {"prompts": {}},
            "serverInfo": {"name": "p", "version": "1"}}
    for raw in sys.stdin:
        request = json.loads(raw)
        if "id" not in request:
            continue
        method, params = request["method"], request.get("params") or {}
        if method == "prompts/get" and params["name"] == "hang":
            continue
        text = f"got {params.get('name')} {json.dumps(params.get('arguments') or {})}"
        answer = INIT if method == "initialize" else {"prompts": PROMPTS} if method == "prompts/list" else \
            {method.split("/")[0]: []} if method.endswith("/list") else \
            {"messages": [{"role": "user", "content": {"type": "text", "text": text}}]}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": answer}) + "\n")
        sys.stdout.flush()
    sys.exit(0)
if MODE == "garbage":
    sys.stdout.write("this is not JSON-RPC\n")
    sys.stdout.flush()

import base64  # noqa: E402

import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.server.mcpserver.utilities.types import Image  # noqa: E402

server = MCPServer("test-server", instructions="Tools for the agent-forge tests.")
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c63f8ffff3f0005fe02fea7d6a4e70000000049454e44ae426082")


def _log(text: str) -> None:
    path = os.environ.get("MCP_TEST_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(text + "\n")


if MODE == "twin":
    @server.tool(name=sys.argv[2], description="The twin tool")
    def twin() -> str:
        return "twin"
elif MODE == "annotated":
    @server.tool(description="Looks", annotations=types.ToolAnnotations(read_only_hint=True))
    def peek() -> str:
        return "peeked"

    @server.tool(description="Changes", annotations=types.ToolAnnotations(read_only_hint=False))
    def poke() -> str:
        return "poked"
else:
    @server.tool(description="Echo the text back")
    def echo(text: str) -> str:
        return f"echo: {text}"

    @server.tool(description="Add two numbers")
    def add(a: int, b: int) -> dict[str, int]:
        return {"sum": a + b}

    @server.tool(description="A tiny picture")
    def picture() -> Image:
        return Image(data=PNG, format="png")

    @server.tool(description="The readme as an embedded resource")
    def readme() -> types.EmbeddedResource:
        return types.EmbeddedResource(type="resource", resource=types.TextResourceContents(
            uri="file:///readme.md", mime_type="text/markdown", text="# Readme\nhello"))

    @server.tool(description="Always fails")
    def fail() -> str:
        raise ToolError("this tool always fails")

    @server.tool(description="Reports progress, then waits a long time")
    async def slow(marker: str, ctx: Context) -> str:
        await ctx.report_progress(1, 2, "half way")
        try:
            await anyio.sleep(60)
        except anyio.get_cancelled_exc_class():
            _log(f"cancelled {marker}")
            raise
        return "slow done"

    @server.tool(description="Returns a lot of text")
    def huge(size: int) -> str:
        line = "x" * 99 + "\n"
        return line * (size // 100)

    @server.tool(description="Adds the tool `extra` and announces the changed tool list")
    async def grow(ctx: Context) -> str:
        def extra() -> str:
            """A tool added while connected"""
            return "extra!"

        def later() -> str:
            """A prompt added while connected"""
            return "the later prompt"

        from mcp.server.mcpserver.prompts.base import Prompt

        server.add_tool(extra)
        server.add_prompt(Prompt.from_function(later))
        await ctx.session.send_tool_list_changed()
        await ctx.session.send_prompt_list_changed()
        return "grown"

    @server.tool(description="Kills the server in the middle of the call")
    def crash() -> str:
        os._exit(9)

    @server.tool(description="The names of the server's environment variables")
    def environ() -> str:
        return " ".join(sorted(os.environ))

    @server.prompt(description="Review a file")
    def review(path: str, focus: str = "bugs") -> str:
        return f"Review {path}, looking for {focus}."

    @server.prompt(description="A user and an assistant message with a picture")
    def pair() -> list:
        from mcp.server.mcpserver.prompts.base import AssistantMessage, UserMessage

        return [UserMessage("First, the question."), AssistantMessage("Then, the answer."),
                UserMessage(content=types.ImageContent(type="image", data=base64.b64encode(PNG).decode(),
                                                       mime_type="image/png"))]

    @server.resource("file:///notes.txt", name="notes", mime_type="text/plain")
    def notes() -> str:
        return "the notes"

    @server.resource("file:///logo.png", name="logo", mime_type="image/png")
    def logo() -> bytes:
        return PNG

    @server.resource("file:///data.bin", name="data", mime_type="application/octet-stream")
    def data() -> bytes:
        return bytes(3000)

    @server.resource("file:///big.txt", name="big", mime_type="text/plain")
    def big() -> str:
        return ("z" * 99 + "\n") * 30_000

    @server.resource("file:///slow.txt", name="slow", mime_type="text/plain")
    async def slow_resource() -> str:
        await anyio.sleep(60)
        return "late"

    @server.resource("note://{topic}", name="topic note", mime_type="text/plain")
    def topic(topic: str) -> str:
        return f"a note about {topic}"


if __name__ == "__main__":
    _log(f"pid {os.getpid()}")
    if "--http" in sys.argv:
        import socket

        port_file = sys.argv[sys.argv.index("--http") + 1]
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        with open(port_file + ".tmp", "w") as out:
            out.write(str(port))
        os.replace(port_file + ".tmp", port_file)
        server.run("streamable-http", host="127.0.0.1", port=port, json_response="--json" in sys.argv)
    else:
        server.run()
