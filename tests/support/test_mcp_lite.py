"""`mcp_server.py` (no SDK) answers as `mcp_sdk_server.py` (the SDK's `MCPServer`) does: the same listings with
the SDK's schemas, results, errors, progress, cancellation, list-change notifications and the answer to
requests pending at stdin's end. The end-to-end MCP tests use the light one for speed; this keeps it honest."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest

SUPPORT = Path(__file__).resolve().parent
LITE, SDK = str(SUPPORT / "mcp_server.py"), str(SUPPORT / "mcp_sdk_server.py")


class Peer:
    """A server process spoken to one line at a time; every message it writes is kept in `seen`."""

    def __init__(self, script: str, args: list[str], log: Path) -> None:
        env = {**os.environ, "MCP_TEST_LOG": str(log)}
        self.process = subprocess.Popen([sys.executable, script, *args], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.seen: list[dict] = []
        self.next_id = 0

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def send(self, message: dict) -> None:
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def receive(self) -> dict:
        line = self.lines.get(timeout=30)
        assert line, "the server closed its stdout"
        self.seen.append(json.loads(line))
        return self.seen[-1]

    def request(self, method: str, params: dict | None = None) -> int:
        """Send a request; its id."""
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                   **({"params": params} if params is not None else {})})
        return self.next_id

    def ask(self, method: str, params: dict | None = None) -> dict:
        """Send a request and read until its answer (notifications before it are kept in `seen`)."""
        request_id = self.request(method, params)
        while self.receive().get("id") != request_id:
            pass
        return self.seen[-1]

    def close(self) -> list[dict]:
        """Close stdin; the messages written after that, once the process has exited."""
        self.process.stdin.close()
        after = []
        while line := self.lines.get(timeout=30):
            after.append(json.loads(line))
        assert self.process.wait(timeout=30) == 0
        return after


def start(peer: Peer) -> None:
    peer.ask("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "test", "version": "1"}})
    peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


def listings(peer: Peer) -> None:
    for method in ("tools/list", "prompts/list", "resources/list", "resources/templates/list"):
        peer.ask(method)


def normal_session(peer: Peer) -> list[dict]:
    """Everything `normal` offers, then a cancelled and a pending `slow` call; all that the server wrote."""
    start(peer)
    peer.ask("initialize", {"protocolVersion": "2099-01-01", "capabilities": {},
                            "clientInfo": {"name": "test", "version": "1"}})  # an unknown version: the newest
    listings(peer)
    for name, args in [("echo", {"text": "hi"}), ("add", {"a": 2, "b": 3}), ("picture", {}), ("readme", {}),
                       ("fail", {}), ("huge", {"size": 300}), ("environ", {}), ("nope", {})]:
        peer.ask("tools/call", {"name": name, "arguments": args})
    for name, args in [("review", {"path": "a.py"}), ("review", {"path": "a.py", "focus": "style"}), ("pair", {}),
                       ("review", {}), ("nope", {})]:
        peer.ask("prompts/get", {"name": name, "arguments": args})
    for uri in ("file:///notes.txt", "file:///logo.png", "file:///data.bin", "note://cats", "file:///missing.txt",
                "file:///big.txt"):
        peer.ask("resources/read", {"uri": uri})
    peer.ask("ping")
    peer.ask("logging/setLevel", {"level": "info"})
    slow = peer.request("tools/call", {"name": "slow", "arguments": {"marker": "m1"}, "_meta": {"progressToken": 7}})
    assert peer.receive()["method"] == "notifications/progress"
    peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": slow}})
    peer.ask("ping")  # the cancelled call is never answered: the ping's answer comes next
    peer.ask("tools/call", {"name": "grow", "arguments": {}})
    listings(peer)
    peer.ask("prompts/get", {"name": "later", "arguments": {}})
    peer.ask("tools/call", {"name": "extra", "arguments": {}})
    peer.request("tools/call", {"name": "slow", "arguments": {"marker": "m2"}})
    peer.ask("ping")  # the call runs
    return peer.seen + peer.close()


def small_session(peer: Peer, names: list[str]) -> list[dict]:
    start(peer)
    listings(peer)
    for name in names:
        peer.ask("tools/call", {"name": name, "arguments": {}})
    return peer.seen + peer.close()


SESSIONS = {"normal": (["normal"], normal_session), "twin": (["twin", "x_y"], lambda p: small_session(p, ["x_y"])),
            "annotated": (["annotated"], lambda p: small_session(p, ["peek", "poke", "echo"]))}


@pytest.mark.parametrize("mode", SESSIONS)
def test_the_light_server_answers_as_the_sdk_server(mode, tmp_path):
    args, session = SESSIONS[mode]
    got = {}
    for name, script in (("lite", LITE), ("sdk", SDK)):
        log = tmp_path / f"{name}.log"
        got[name] = session(Peer(script, args, log))
        got[name + " log"] = [line.split()[0] if line.startswith("pid ") else line
                              for line in log.read_text().splitlines()]
    assert got["lite"] == got["sdk"]
    assert got["lite log"] == got["sdk log"]
    if mode == "normal":
        assert got["lite log"] == ["pid", "cancelled m1", "cancelled m2"]
        assert got["lite"][-1] == {"jsonrpc": "2.0", "id": got["lite"][-1]["id"],
                                   "error": {"code": -32000, "message": "Connection closed"}}
