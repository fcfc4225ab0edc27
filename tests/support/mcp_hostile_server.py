"""A misbehaving MCP server for the end-to-end tests, sending whatever its handlers return, on the JSON-RPC loop of
`mcp_lite.py` (no SDK: its server refuses to send some of this, and costs ~1.3 s of CPU to import):
`python mcp_hostile_server.py MODE` (stdio). It offers prompts and resources only in the modes that list them (as
the SDK's low-level `Server` does, from the handlers it is given). MODE is one of:

- `hang-list`: answers `initialize`, never answers `tools/list`
- `huge-error`: tool `boom`, whose call is answered by a JSON-RPC error with a 10 MB `message`
- `huge-text`: 5 MB `instructions`, tool `big` with a 5 MB description, a 300-character title holding an escape
  sequence, and a progress message of 1 MB; tool `fine` is ordinary; prompt `wordy` with a 5 MB description
  and an argument described in 1 MB; a resource with a 1 MB URI and a 1 MB name
- `bad-schema`: tools whose `inputSchema` providers reject (`wat`: a type name that does not exist, `deep`: 70
  levels of nesting, `fat`: a 200 KB schema), and the ordinary tool `fine`
- `raw-schema`: schemas the SDK's server refuses to send (`props`: `properties` not an object, `top`: not of
  type object, `req`: `required` not a list of strings) and `fine`
- `untyped`: tool `loose`, whose `inputSchema` has no `type`, and `fine`
- `bad-fields`: listing items the protocol does not allow, each in one field (`noschema`: no `inputSchema`;
  `arr`: an `inputSchema` of type array; an empty name; a number for a name; `desc`: a number for a description;
  `ann`: a string for `annotations`; an item that is a string), and `fine`
- `orphan-exit`: a call starts `sleep 300` holding the server's stdout, in its process group with
  an empty environment, writes `child <pid>` to `$MCP_TEST_LOG`, and exits with status 3 without answering (the
  stream never ends while the child lives)
- `child`: at start it starts `sleep 300` in a session of its own (keeping the environment) and
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
import os
import subprocess
import sys

from mcp_lite import Request, RpcError, Server  # beside this file, on the script's sys.path

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


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


IMAGES = {"svg": (_b64(b"<svg xmlns='http://www.w3.org/2000/svg'/>"), "image/svg+xml"),
          "garbage": ("not base64 at all!", "image/png"), "fake": (_b64(b"just some text"), "image/png"),
          "big": (_b64(PNG + b"\0" * (21 * MB)), "image/png"), "good": (_b64(PNG), "image/png")}


def _tool(name: str, description: str | None = None, schema: dict = OBJECT, **more: str) -> dict:
    return {"name": name, **({"description": description} if description else {}), "inputSchema": schema, **more}


def _tools() -> list[dict]:
    fine = _tool("fine", "An ordinary tool")
    if MODE == "huge-error":
        return [_tool("boom", "Fails with a huge error"), fine]
    if MODE == "huge-text":
        return [_tool("big", "D" * (5 * MB), title="T\x1b[2J" + "t" * 300), fine]
    if MODE == "bad-images":
        return [_tool(name, f"Returns {name}") for name in IMAGES]
    if MODE == "reserved":
        return [_tool("mcp_resource", "A tool whose name clashes")]
    if MODE == "bad-schema":
        return [*(_tool(name, f"Bad schema {name}", schema) for name, schema in BAD_SCHEMAS.items()), fine]
    if MODE in ("raw-schema", "untyped"):
        schemas = RAW_SCHEMAS if MODE == "raw-schema" else {"loose": {"properties": {"x": {"type": "string"}}}}
        return [*(_tool(name, schema=schema) for name, schema in schemas.items()), _tool("fine")]
    if MODE == "bad-fields":
        return [{"name": "noschema", "description": "Takes nothing"}, _tool("arr", schema={"type": "array"}),
                _tool(""), {"name": 7, "inputSchema": OBJECT}, {**_tool("desc"), "description": 5},
                {**_tool("ann"), "annotations": "readOnly"}, "not a tool", fine]
    return [_tool("fine")]


def list_tools(request: Request) -> dict | None:
    if MODE == "hang-list":  # never answered (until stdin ends, as the SDK does)
        request.background(lambda: request.cancelled.wait() and None)
        return None
    return {"tools": _tools()}


def call_tool(request: Request) -> dict:
    name = request.params["name"]
    if MODE == "orphan-exit":
        _sleeper(holds_stdout=True)
        os._exit(3)
    if name == "boom":
        raise RpcError(-32000, "E" * (10 * MB))
    if name == "big":
        request.progress(1, 2, "P" * MB)
    text = {"text": f"image {name}" if MODE == "bad-images" else f"called {name}", "type": "text"}
    if MODE == "bad-images":
        data, mime = IMAGES[name]
        return {"content": [text, {"data": data, "mimeType": mime, "type": "image"}], "isError": False}
    return {"content": [text], "isError": False}


def list_prompts(request: Request) -> dict:
    argument = {"description": "A" * MB, "name": "topic"}
    return {"prompts": [{"arguments": [argument], "description": "W" * (5 * MB), "name": "wordy"}]}


def list_resources(request: Request) -> dict:
    if MODE == "huge-text":
        return {"resources": [{"name": "N" * MB, "uri": "file:///" + "u" * MB}]}
    uris = ["file:///fake.png", "file:///good.png"] if MODE == "bad-images" else ["file:///r.txt"]
    return {"resources": [{"name": uri[8:], "uri": uri} for uri in uris]}


def read_resource(request: Request) -> dict:
    uri = request.params["uri"]
    if uri == "file:///r.txt":
        return {"contents": [{"text": "resource r", "uri": uri}]}
    blob = _b64(b"text, not a PNG" if uri == "file:///fake.png" else PNG)
    return {"contents": [{"blob": blob, "mimeType": "image/png", "uri": uri}]}


def _sleeper(holds_stdout: bool) -> None:
    where = {"stdout": sys.stdout, "env": {}} if holds_stdout else {"stdout": subprocess.DEVNULL,
                                                                    "start_new_session": True}
    child = subprocess.Popen(["/bin/sleep", "300"], stdin=subprocess.DEVNULL, **where)
    with open(os.environ["MCP_TEST_LOG"], "a", encoding="utf-8") as log:
        log.write(f"child {child.pid}\n")


def main() -> None:
    handlers: dict = {"tools/list": list_tools, "tools/call": call_tool}
    capabilities: dict = {"tools": {"listChanged": False}}
    if MODE == "huge-text":
        handlers.update({"prompts/list": list_prompts, "resources/list": list_resources})
        capabilities["prompts"] = {"listChanged": False}
    if MODE in ("bad-images", "reserved"):
        handlers.update({"resources/list": list_resources, "resources/read": read_resource})
    if "resources/list" in handlers:
        capabilities["resources"] = {"listChanged": False, "subscribe": False}
    if MODE == "child":
        _sleeper(holds_stdout=False)
    instructions = "I" * (5 * MB) if MODE == "huge-text" else "A hostile server."
    Server(handlers, initialize={"capabilities": capabilities, "instructions": instructions,
                                 "serverInfo": {"name": "hostile", "version": ""}}).run()


if __name__ == "__main__":
    main()
