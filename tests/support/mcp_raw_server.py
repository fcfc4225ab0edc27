"""A hand-written stdio MCP server (newline-delimited JSON-RPC, no SDK import, so it starts in a few
milliseconds) for tests about the agent's own client: `python mcp_raw_server.py MODE [N]`. Tools:

- `fine`: answers `called fine`
- `long`: answers with a text of N MB (default 40) of `x`: one valid message on one line of that length
- `toolong`: writes one line of N MB (default 100) of `x` with no JSON in it, then a newline, then goes on serving
- `endless`: writes `x` for ever without a newline (only a kill ends it)
- `burst`: adds the tool `extra` to its list, sends N (default 3000) `notifications/tools/list_changed`, then
  answers `burst sent`
- `count`: answers `lists <n>`: how many `tools/list` requests it has answered so far

MODE `serve` serves them; MODE `endless-init` answers `initialize` with an endless line instead. Other modes serve
them with a fault: `garbage N` first writes N lines that are not JSON-RPC; `stray` answers each call first
with an answer and an error to ids never sent, then the right answer, then that answer again; `log-flood N` sends N `notifications/message` before
each call's answer; `ping-flood N` sends N `ping` requests to the client before each call's answer; `odd` lists `fine` twice and
writes `{"hello": "world"}` (JSON, not JSON-RPC) before its `initialize` answer. `pid <pid>` is
written to `$MCP_TEST_LOG` (when set) at start. `lone` writes lone UTF-16 surrogates (`\\ud800`, what `json.dumps`
writes for a string cut inside a surrogate pair) in its tool descriptions, in a `ping` request's params and in the
answer of the tool `lone`; its tool `broken` is answered by a line that is not JSON (a bad escape) and `shape` by
JSON that is not JSON-RPC, both with the call's id.
"""

from __future__ import annotations

import json
import os
import sys

MODE = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 0
MB = 1 << 20
out = sys.stdout.buffer


def send(message: dict) -> None:
    out.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
    out.flush()


def endless() -> None:
    chunk = b"x" * MB
    while True:
        out.write(chunk)
        out.flush()


def main() -> None:
    if os.environ.get("MCP_TEST_LOG"):
        with open(os.environ["MCP_TEST_LOG"], "a", encoding="utf-8") as log:
            log.write(f"pid {os.getpid()}\n")
    tools = ["fine", "long", "toolong", "endless", "burst", "count"] + (["fine"] if MODE == "odd" else []) + (
        ["lone", "broken", "shape"] if MODE == "lone" else [])
    lists = 0
    if MODE == "garbage":
        out.write(b"this is not JSON-RPC\n" * N)
        out.flush()
    for raw in sys.stdin:
        request = json.loads(raw)
        method = request.get("method")
        if "id" not in request:
            continue
        if method == "initialize":
            if MODE == "endless-init":
                endless()
            if MODE == "odd":
                out.write(b'{"hello": "world"}\n')
            send({"id": request["id"], "result": {"protocolVersion": "2025-06-18", "serverInfo": {
                "name": "raw", "version": "1"}, "capabilities": {"tools": {"listChanged": True}}}})
        elif method == "tools/list":
            lists += 1
            send({"id": request["id"], "result": {"tools": [{"name": name, "inputSchema": {"type": "object"}, **(
                {"description": f"{name} \ud800 cut"} if MODE == "lone" else {})} for name in tools]}})
        elif method == "tools/call" and request["params"]["name"] in ("broken", "shape"):
            bad = {"broken": '{"jsonrpc": "2.0", "id": %s, "result": {"content": [{"type": "text", "text": "\\x"}]}}',
                   "shape": '{"jsonrpc": "2.0", "id": %s, "result": "not an object"}'}[request["params"]["name"]]
            out.write((bad % json.dumps(request["id"])).encode() + b"\n")
            out.flush()
        elif method == "tools/call":
            before_answer(request["id"])
            answer = {"id": request["id"], "result": {"content": [{"type": "text", "text": call(
                request["params"]["name"], tools, lists)}]}}
            send(answer)
            if MODE == "stray":
                send(answer)
        else:
            send({"id": request["id"], "error": {"code": -32601, "message": f"no method {method}"}})


def before_answer(request_id: object) -> None:
    if MODE == "lone":
        send({"id": "ping-lone", "method": "ping", "params": {"_meta": {"note": "\udc00"}}})
    if MODE == "stray":
        send({"id": 987654, "result": {"content": [{"type": "text", "text": "stray"}]}})
        send({"id": 987655, "error": {"code": 1, "message": "stray error"}})
    for i in range(N if MODE in ("log-flood", "ping-flood") else 0):
        if MODE == "log-flood":
            send({"method": "notifications/message", "params": {"level": "info", "data": f"log {i}"}})
        else:
            send({"id": f"ping-{i}", "method": "ping"})


def call(name: str, tools: list[str], lists: int) -> str:
    if name == "long":
        return "x" * ((N or 40) * MB)
    if name == "toolong":
        for _ in range(N or 100):
            out.write(b"x" * MB)
        out.write(b"\n")
        out.flush()
    elif name == "endless":
        endless()
    elif name == "burst":
        tools.append("extra")
        for _ in range(N or 3000):
            send({"method": "notifications/tools/list_changed"})
        return "burst sent"
    elif name == "lone":
        return "lone \ud800 here"
    elif name == "count":
        return f"lists {lists}"
    return f"called {name}"


if __name__ == "__main__":
    main()
