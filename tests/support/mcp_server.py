"""The MCP server of the end-to-end tests, without the SDK: `python mcp_server.py [MODE]` (stdio). It starts in
~30 ms where a server written with the SDK costs ~1.3 s of CPU to import, and the tests start dozens.

In the modes `normal`, `twin` and `annotated` it answers as `mcp_sdk_server.py` (the same server written with the
SDK's `MCPServer`) does: the same tools with the schemas the SDK derives, the same results, progress,
cancellation and list-change notifications (`tests/support/test_mcp_lite.py` compares the two). The tests about
meeting the real SDK (the agent's first connection, streamable HTTP, the SDK's own sessions) use that one. MODE is
one of:

- `normal`: tools `echo`, `add` (structured), `picture` (an image), `readme` (an embedded resource), `fail`
  (`isError`), `slow` (progress, then waits; cancellable), `huge` (`size` bytes of text), `grow` (adds the
  tool `extra` and the prompt `later`, then announces both changed lists), `deaf` (progress, then waits, deaf to
  cancellation), `crash` (the process exits during the call),
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

In `normal`, `twin`, `annotated` and `garbage` it writes `pid <pid>` to the file named by `$MCP_TEST_LOG` when it
starts, and the `slow` tool writes `cancelled <marker>` there when its call is cancelled (by the client, or by
stdin's end).
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

# -- `normal`, `twin`, `annotated`: the tools, prompts and resources of mcp_sdk_server.py, by hand ----------------

import base64  # noqa: E402
import json  # noqa: E402
import threading  # noqa: E402

from mcp_lite import Request, RpcError, Server, log  # noqa: E402  (beside this file, on the script's sys.path)

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c63f8ffff3f0005fe02fea7d6a4e70000000049454e44ae426082")
B64_PNG = base64.b64encode(PNG).decode()
JSON_TYPES = {str: "string", int: "integer"}


def tool(name: str, description: str, params: dict[str, type] | None = None, *, returns: object = str,
         annotations: dict | None = None, function: str = "") -> dict:
    """A tool as the SDK lists a function `name(**params) -> returns` (registered as `name`, defined as
    `function`, default `name`): pydantic's argument and output schemas, titled after the function."""
    params, function = params or {}, function or name
    schema: dict = {"properties": {key: {"title": key.title(), "type": JSON_TYPES[kind]}
                                   for key, kind in params.items()}}
    if params:
        schema["required"] = list(params)
    listed: dict = {"description": description, "inputSchema": {**schema, "type": "object",
                                                                 "title": f"{function}Arguments"}, "name": name}
    if returns is str:
        listed["outputSchema"] = {"properties": {"result": {"title": "Result", "type": "string"}},
                                  "required": ["result"], "type": "object", "title": f"{function}Output"}
    elif returns == "dict[str, int]":
        listed["outputSchema"] = {"type": "object", "additionalProperties": {"type": "integer"},
                                  "title": f"{function}DictOutput"}
    return {"annotations": annotations, **listed} if annotations else listed


def text_result(text: str) -> dict:
    """A str-returning tool's result: the text, also as structured content."""
    return {"content": [{"text": text, "type": "text"}], "isError": False, "structuredContent": {"result": text}}


def resource(uri: str, name: str, mime: str) -> dict:
    return {"description": "", "mimeType": mime, "name": name, "uri": uri}


class Tools:
    """The state and handlers of one server (`grow` changes its lists)."""

    def __init__(self, mode: str, argv: list[str]) -> None:
        if mode == "twin":
            self.tools = [tool(argv[0], "The twin tool", function="twin")]
        elif mode == "annotated":
            self.tools = [tool("peek", "Looks", annotations={"readOnlyHint": True}),
                          tool("poke", "Changes", annotations={"readOnlyHint": False})]
        else:
            self.tools = [tool("echo", "Echo the text back", {"text": str}),
                          tool("add", "Add two numbers", {"a": int, "b": int}, returns="dict[str, int]"),
                          tool("picture", "A tiny picture", returns=None),
                          tool("readme", "The readme as an embedded resource", returns=None),
                          tool("fail", "Always fails"),
                          tool("slow", "Reports progress, then waits a long time", {"marker": str}),
                          tool("huge", "Returns a lot of text", {"size": int}),
                          tool("grow", "Adds the tool `extra` and announces the changed tool list"),
                          tool("deaf", "Reports progress, then waits a long time, deaf to cancellation"),
                          tool("crash", "Kills the server in the middle of the call"),
                          tool("environ", "The names of the server's environment variables")]
        full = mode not in ("twin", "annotated")
        self.prompts = [
            {"arguments": [{"name": "path", "required": True}, {"name": "focus", "required": False}],
             "description": "Review a file", "name": "review"},
            {"arguments": [], "description": "A user and an assistant message with a picture", "name": "pair"},
        ] if full else []
        self.resources = [resource("file:///notes.txt", "notes", "text/plain"),
                          resource("file:///logo.png", "logo", "image/png"),
                          resource("file:///data.bin", "data", "application/octet-stream"),
                          resource("file:///big.txt", "big", "text/plain"),
                          resource("file:///slow.txt", "slow", "text/plain")] if full else []
        self.templates = [{"description": "", "mimeType": "text/plain", "name": "topic note",
                           "uriTemplate": "note://{topic}"}] if full else []

    def handlers(self) -> dict:
        return {"tools/list": lambda request: {"tools": self.tools},
                "prompts/list": lambda request: {"prompts": self.prompts},
                "resources/list": lambda request: {"resources": self.resources},
                "resources/templates/list": lambda request: {"resourceTemplates": self.templates},
                "tools/call": self.call, "prompts/get": self.prompt, "resources/read": self.read}

    def call(self, request: Request) -> dict | None:
        name, args = request.params["name"], request.params.get("arguments") or {}
        if name not in {listed["name"] for listed in self.tools}:
            return {"content": [{"text": f"Unknown tool: {name}", "type": "text"}], "isError": True}
        if name == "slow":
            request.progress(1, 2, "half way")
            request.background(lambda: None if request.cancelled.wait(60) else text_result("slow done"),
                               on_cancel=lambda: log(f"cancelled {args['marker']}"))
            return None
        if name == "deaf":  # the answer stays due after notifications/cancelled (as the SDK twin's shielded wait)
            request.progress(1, None, "started")
            request.background(lambda: None if threading.Event().wait(600) else text_result("deaf done"))
            return None
        if name == "crash":
            os._exit(9)
        if name == "add":
            total = {"sum": args["a"] + args["b"]}
            return {"content": [{"text": json.dumps(total, indent=2), "type": "text"}], "isError": False,
                    "structuredContent": total}
        if name == "picture":
            return {"content": [{"data": B64_PNG, "mimeType": "image/png", "type": "image"}], "isError": False}
        if name == "readme":
            return {"content": [{"resource": {"mimeType": "text/markdown", "text": "# Readme\nhello",
                                              "uri": "file:///readme.md"}, "type": "resource"}], "isError": False}
        if name == "fail":
            return {"content": [{"text": "Error executing tool fail: this tool always fails", "type": "text"}],
                    "isError": True}
        if name == "grow":
            self._grow(request)
        return text_result(self._text(name, args))

    def _text(self, name: str, args: dict) -> str:
        texts = {"echo": lambda: f"echo: {args['text']}", "huge": lambda: ("x" * 99 + "\n") * (args["size"] // 100),
                 "environ": lambda: " ".join(sorted(os.environ)), "grow": lambda: "grown", "extra": lambda: "extra!",
                 "peek": lambda: "peeked", "poke": lambda: "poked"}
        return texts.get(name, lambda: "twin")()

    def _grow(self, request: Request) -> None:
        self.tools.append(tool("extra", "A tool added while connected"))
        self.prompts.append({"arguments": [], "description": "A prompt added while connected", "name": "later"})
        request.server.notify("notifications/tools/list_changed")
        request.server.notify("notifications/prompts/list_changed")

    def prompt(self, request: Request) -> dict:
        name, args = request.params["name"], request.params.get("arguments") or {}
        listed = next((p for p in self.prompts if p["name"] == name), None)
        if listed is None:
            raise RpcError(0, f"Unknown prompt: {name}")
        missing = {a["name"] for a in listed["arguments"] if a["required"]} - set(args)
        if missing:
            raise RpcError(0, f"Missing required arguments: {missing}")
        def user(text: str) -> dict:
            return {"content": {"text": text, "type": "text"}, "role": "user"}
        messages = {
            "review": lambda: [user(f"Review {args['path']}, looking for {args.get('focus', 'bugs')}.")],
            "later": lambda: [user("the later prompt")],
            "pair": lambda: [user("First, the question."),
                             {"content": {"text": "Then, the answer.", "type": "text"}, "role": "assistant"},
                             {"content": {"data": B64_PNG, "mimeType": "image/png", "type": "image"}, "role": "user"}],
        }[name]()
        return {"description": listed["description"], "messages": messages}

    def read(self, request: Request) -> dict | None:
        uri = request.params["uri"]
        contents = {"file:///notes.txt": ("text/plain", "text", "the notes"),
                    "file:///logo.png": ("image/png", "blob", B64_PNG),
                    "file:///data.bin": ("application/octet-stream", "blob", base64.b64encode(bytes(3000)).decode()),
                    "file:///big.txt": ("text/plain", "text", ("z" * 99 + "\n") * 30_000)}
        if uri.startswith("note://") and self.templates:
            contents[uri] = ("text/plain", "text", f"a note about {uri[len('note://'):]}")
        if uri == "file:///slow.txt" and self.resources:
            request.background(lambda: None if request.cancelled.wait(60) else {"contents": [
                {"mimeType": "text/plain", "text": "late", "uri": uri}]})
            return None
        if uri not in contents:
            raise RpcError(-32602, f"Unknown resource: {uri}", {"uri": uri})
        mime, key, value = contents[uri]
        return {"contents": [{"mimeType": mime, key: value, "uri": uri}]}


def serve(mode: str, argv: list[str]) -> None:
    tools = Tools(mode, argv)
    init = {"capabilities": {"prompts": {"listChanged": False},
                             "resources": {"listChanged": False, "subscribe": False},
                             "tools": {"listChanged": False}},
            "instructions": "Tools for the agent-forge tests.", "serverInfo": {"name": "test-server", "version": ""}}
    log(f"pid {os.getpid()}")
    Server(tools.handlers(), initialize=init).run()


if __name__ == "__main__":
    serve(MODE, sys.argv[2:])
