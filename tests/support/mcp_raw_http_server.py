"""A hand-written streamable HTTP "MCP server" (the standard library's `http.server`, no SDK) whose every answer
is wrong in one way: `python mcp_raw_http_server.py PORT_FILE`. It serves on a free loopback port, written to
PORT_FILE, under the paths `/html` (answers `text/html`), `/garbage` (`application/json` that is not JSON),
`/stray` (a JSON-RPC answer to an id never sent), `/huge` (a JSON body that never ends, 1 MiB at a time)."""

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
        if "id" not in body:
            self._answer(202, b"", "text/plain")
        elif self.path == "/huge":
            self._endless()
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
