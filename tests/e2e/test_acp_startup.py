"""Start-up budget of ACP mode (issue 14: spawn -> `initialize` answered in <= 300 ms; timings in
`benchmarks/bench_acp_startup.py`): a first `initialize` is answered before the event loop or any session
machinery is imported (`modes/acp/handshake.py`), anything else first is the server's to answer, and a session
imports no ACP SDK, pydantic, provider SDK or MCP SDK (no server configured)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from e2e.test_startup_imports import FORBIDDEN

# Runs the real CLI entry point in a child interpreter; the modules loaded are written at exit.
_CHILD = """
import atexit, json, sys
target = sys.argv[1]
atexit.register(lambda: open(target, "w").write(json.dumps(sorted(sys.modules))))
sys.argv = ["agent-forge", "--mode", "acp", "--no-session"]
from agent_forge.cli import main
raise SystemExit(main())
"""

INITIALIZE = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n'


def modules_after(tmp_path, lines: bytes) -> tuple[list[dict], set[str]]:
    out = tmp_path / "modules.json"
    env = {"AGENT_FORGE_DIR": str(tmp_path / "agent"), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(out)], input=lines, capture_output=True, env=env,
                          cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    return [json.loads(line) for line in proc.stdout.splitlines()], set(json.loads(out.read_text()))


def test_initialize_is_answered_before_sessions_are_imported(tmp_path):
    [reply], modules = modules_after(tmp_path, INITIALIZE)
    assert reply["id"] == 1 and reply["result"]["protocolVersion"] == 1
    for name in ("agent_forge.coding.factory", "agent_forge.coding.agent_session", "agent_forge.coding.settings"):
        assert name not in modules, name
    roots = {name.split(".")[0] for name in modules}
    assert not roots & {*FORBIDDEN, "acp", "jsonschema"}, sorted(roots & {*FORBIDDEN, "acp", "jsonschema"})


def test_a_session_imports_no_heavy_modules(tmp_path):
    new = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/new",
                      "params": {"cwd": str(tmp_path), "mcpServers": []}}).encode() + b"\n"
    replies, modules = modules_after(tmp_path, INITIALIZE + new)
    assert "sessionId" in replies[1]["result"]
    roots = {name.split(".")[0] for name in modules}
    heavy = {*FORBIDDEN, "acp", "jsonschema"} - {"httpx2", "h11", "httpcore", "httpcore2", "anyio", "certifi"}
    assert not roots & heavy, sorted(roots & heavy)


def _start(tmp_path, *python_flags: str) -> subprocess.Popen:
    env = {"AGENT_FORGE_DIR": str(tmp_path / "agent"), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    return subprocess.Popen([sys.executable, *python_flags, "-m", "agent_forge", "--mode", "acp", "--no-session"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            cwd=tmp_path)


def test_the_first_initialize_is_answered_before_the_event_loop_is_imported(tmp_path):
    proc = _start(tmp_path, "-X", "importtime")
    try:
        proc.stdin.write(INITIALIZE)
        proc.stdin.flush()
        reply = json.loads(proc.stdout.readline())
        os.set_blocking(proc.stderr.fileno(), False)  # what was imported up to the answer: written before it
        before = {line.split("|")[-1].strip() for line in (proc.stderr.read() or b"").decode().splitlines()}
    finally:
        proc.kill()
        proc.wait()
    assert reply["id"] == 1 and reply["result"]["protocolVersion"] == 1
    assert "agent_forge.modes.acp.handshake" in before  # the import list is the real one
    late = {"asyncio", "agent_forge.modes.acp.server", "agent_forge.coding.resources.loader", "dataclasses",
            "inspect"}  # dataclasses (with inspect) cost ~12 ms: a flag's choices must not pull them in
    assert not before & late, sorted(before & late)


def test_what_follows_an_early_initialize_in_the_same_write_is_served(tmp_path):
    listing = b'{"jsonrpc":"2.0","id":"two","method":"session/list","params":{}}\n'
    proc = _start(tmp_path)
    out, err = proc.communicate(INITIALIZE + listing + b'{"jsonrpc":"2.0","id":3,"method":"nope"}', timeout=60)
    replies = [json.loads(line) for line in out.splitlines()]
    assert proc.returncode == 0, err.decode()
    assert [r["id"] for r in replies] == [1, "two", 3]  # the last line has no LF: it is read at the end
    assert replies[1]["result"] == {"sessions": []} and replies[2]["error"]["code"] == -32601


@pytest.mark.parametrize("first, code", [
    (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1"}}\n', -32602),
    (b'{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}\n', -32600),
    (b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"initialize"}\n', -32602),
    (b'{"jsonrpc":"2.0","id":true,"method":"initialize","params":{"protocolVersion":1}}\n', -32600),
])
def test_a_first_line_that_is_no_good_initialize_is_answered_by_the_server(tmp_path, first, code):
    proc = _start(tmp_path)
    out, err = proc.communicate(first + INITIALIZE.replace(b'"id":1', b'"id":9'), timeout=60)
    replies = [json.loads(line) for line in out.splitlines()]
    assert proc.returncode == 0, err.decode()
    assert replies[0]["error"]["code"] == code, replies[0]
    assert replies[1]["id"] == 9 and replies[1]["result"]["protocolVersion"] == 1  # served normally after it
