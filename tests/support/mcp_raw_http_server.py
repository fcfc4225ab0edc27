"""A hand-written streamable HTTP "MCP server" (the standard library's `http.server`, no SDK) whose every answer
is wrong in one way: `python mcp_raw_http_server.py PORT_FILE`. It serves on a free loopback port, written to
PORT_FILE, under the paths `/html` (answers `text/html`), `/garbage` (`application/json` that is not JSON),
`/stray` (a JSON-RPC answer to an id never sent), `/huge` (a JSON body that never ends, 1 MiB at a time),
`/401` (401 with `WWW-Authenticate`), `/403`, `/404`, `/405`, `/500`; each request's method, path and JSON-RPC method
is a line of PORT_FILE.requests (`POST /401 initialize`), written before it is answered. Under `/lone` (JSON bodies) and `/lone-sse` (server-sent
events) it is a working server whose tool `lone` and its description hold a lone UTF-16 surrogate (`\\ud800`, as
`json.dumps` writes a string cut inside a surrogate pair)."""

from __future__ import annotations

import http.server
import json
import os
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        with open(sys.argv[1] + ".requests", "a") as log:
            log.write(f"POST {self.path} {body.get('method')}\n")
        if "id" not in body:
            self._answer(202, b"", "text/plain")
        elif self.path == "/huge":
            self._endless()
        elif self.path in ("/401", "/403", "/404", "/405", "/500"):
            self.send_response(int(self.path[1:]))
            if self.path == "/401":
                self.send_header("www-authenticate", 'Bearer realm="mcp"')
            self.send_header("content-length", "0")
            self.end_headers()
        elif self.path.startswith("/lone"):
            self._lone(body)
        else:
            data, kind = {"/html": (b"<html>hello</html>", "text/html"),
                          "/garbage": (b"not json at all", "application/json"),
                          "/stray": (json.dumps({"jsonrpc": "2.0", "id": 4242, "result": {}}).encode(),
                                     "application/json")}[self.path]
            self._answer(200, data, kind)

    def do_GET(self) -> None:
        self._answer(405, b"", "text/plain")

    def do_DELETE(self) -> None:
        self._answer(200, b"", "text/plain")

    def _answer(self, status: int, data: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _lone(self, request: dict) -> None:
        method = request["method"]
        result = {"initialize": {"protocolVersion": "2025-06-18", "serverInfo": {"name": "lone", "version": "1"},
                                 "capabilities": {"tools": {}}},
                  "tools/list": {"tools": [{"name": "lone", "description": "lone \ud800 cut",
                                            "inputSchema": {"type": "object"}}]},
                  "tools/call": {"content": [{"type": "text", "text": "lone \ud800 here"}]}}.get(method, {})
        data = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode()
        if self.path == "/lone-sse":
            self._answer(200, b"event: message\ndata: " + data + b"\n\n", "text/event-stream")
        else:
            self._answer(200, data, "application/json")

    def _endless(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.end_headers()  # no length: the body ends when the connection does
        chunk = b" " * (1 << 20)
        try:
            while True:
                self.wfile.write(chunk)
        except OSError:
            return


if __name__ == "__main__":
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(sys.argv[1] + ".tmp", "w") as out:
        out.write(str(server.server_address[1]))
    os.replace(sys.argv[1] + ".tmp", sys.argv[1])
    server.serve_forever()
