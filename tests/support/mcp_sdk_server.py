"""The test MCP server written with the SDK's server API (`MCPServer`, once FastMCP): the real SDK on the other
end, for the tests about meeting it (the first connection, streamable HTTP, the SDK's own sessions) and for
`test_mcp_lite.py`, which checks that `mcp_server.py` (no SDK, ~30 ms to start instead of ~1.3 s of CPU)
answers as this one does.

`python mcp_sdk_server.py [MODE] [--http PORT_FILE [--json]]`: stdio by default; with `--http` it serves streamable HTTP
on a free loopback port and writes the port to PORT_FILE. MODE is `normal`, `twin NAME` or `annotated`, as
described in `mcp_server.py`. It writes `pid <pid>` to `$MCP_TEST_LOG` when it starts, and the `slow` tool
writes `cancelled <marker>` there when its call is cancelled.
"""

from __future__ import annotations

import base64
import os
import sys

import anyio
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image

MODE = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else "normal"

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

    @server.tool(description="Reports progress, then waits a long time, deaf to cancellation")
    async def deaf(ctx: Context) -> str:
        await ctx.report_progress(1, None, "started")
        with anyio.CancelScope(shield=True):  # its answer stream stays open after notifications/cancelled
            await anyio.sleep(600)
        return "deaf done"

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
