"""Start-up budget of ACP mode (issue 14: spawn -> `initialize` answered in <= 300 ms; timings in
`benchmarks/`): `initialize` is answered before any session machinery is imported, and a session imports no
ACP SDK, pydantic, provider SDK or MCP SDK (no server configured)."""

from __future__ import annotations

import json
import subprocess
import sys

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
