"""RPC-mode benchmarks against the loopback fake LLM server.

Measures (issue 2 budgets, 2-core machine):
- spawn → first `get_state` response, median over runs (target < 200 ms); again with one stdio MCP server
  configured (`tests/support/mcp_server.py`; issue 13: within 10 % of the figure without);
- idle peak RSS of the agent process after that response (VmHWM; target < 50 MB);
- one prompt streaming N text deltas: stdout lines/s and stdout bytes for several N (bytes must grow linearly).

Run: `.venv/bin/python benchmarks/bench_rpc.py [--runs 20]`. Uses the venv's console script, not the
`python3` shim on PATH (DESIGN.md: the shim adds ~70 ms before Python starts).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))

from conftest import write_models_json  # noqa: E402
from support.fake_llm import FakeLLMServer  # noqa: E402


def agent_command() -> list[str]:
    script = Path(sys.executable).with_name("agent-forge")
    return [str(script)] if script.exists() else [sys.executable, "-m", "agent_forge"]


def make_env(server: FakeLLMServer, home: Path) -> dict[str, str]:
    agent_dir = home / "agent"
    agent_dir.mkdir(parents=True, exist_ok=True)
    write_models_json(agent_dir, server)
    (agent_dir / "settings.json").write_text(json.dumps({"defaultProvider": "fake", "defaultModel": "fake-model"}))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(AGENT_FORGE_DIR=str(agent_dir), HOME=str(home))
    return env


def read_record(proc: subprocess.Popen) -> dict:
    line = proc.stdout.readline()
    if not line:
        raise RuntimeError(f"agent exited: {proc.stderr.read().decode()[-2000:]}")
    return json.loads(line)


def first_response(env: dict[str, str], cwd: str) -> tuple[float, int]:
    """Seconds from spawn to the get_state response, and the process's peak RSS in KiB after it."""
    start = time.perf_counter()
    proc = subprocess.Popen([*agent_command(), "--mode", "rpc", "--no-session"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    proc.stdin.write(b'{"id":"s","type":"get_state"}\n')
    proc.stdin.flush()
    record = read_record(proc)
    elapsed = time.perf_counter() - start
    assert record.get("id") == "s" and record.get("success"), record
    rss = _peak_rss_kib(proc.pid)
    proc.stdin.close()
    proc.wait(timeout=30)
    return elapsed, rss


def _peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return -1


def startup_figures(env: dict[str, str], cwd: str, runs: int, label: str) -> float:
    """Print the spawn → first get_state figures; returns the median in seconds."""
    startup = [first_response(env, cwd) for _ in range(runs)]
    times = sorted(t for t, _ in startup)
    print(f"spawn -> first get_state{label}: median {statistics.median(times) * 1000:.1f} ms, "
          f"min {times[0] * 1000:.1f} ms, max {times[-1] * 1000:.1f} ms ({runs} runs)")
    print(f"idle peak RSS{label}: {max(r for _, r in startup) / 1024:.1f} MiB")
    return statistics.median(times)


def with_mcp_server(env: dict[str, str]) -> dict[str, str]:
    """`env` whose agent dir names one stdio MCP server (in a copy of the agent dir)."""
    agent_dir = Path(env["AGENT_FORGE_DIR"])
    mcp_dir = agent_dir.with_name("agent-mcp")
    mcp_dir.mkdir(exist_ok=True)
    for name in ("models.json", "settings.json"):
        (mcp_dir / name).write_text((agent_dir / name).read_text())
    server = {"command": sys.executable, "args": [str(TESTS / "support" / "mcp_server.py")]}
    (mcp_dir / "mcp.json").write_text(json.dumps({"mcpServers": {"bench": server}}))
    return {**env, "AGENT_FORGE_DIR": str(mcp_dir)}


def stream_prompt(server: FakeLLMServer, env: dict[str, str], cwd: str, deltas: int) -> tuple[float, int, int]:
    """Seconds, stdout lines and stdout bytes for one prompt streaming `deltas` text deltas."""
    server.set_script([{"text": " ".join(f"w{i}" for i in range(deltas)), "text_deltas": deltas}])
    proc = subprocess.Popen([*agent_command(), "--mode", "rpc", "--no-session"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    read_get_state = b'{"id":"s","type":"get_state"}\n'
    proc.stdin.write(read_get_state)
    proc.stdin.flush()
    read_record(proc)
    start = time.perf_counter()
    proc.stdin.write(b'{"id":"p","type":"prompt","message":"go"}\n')
    proc.stdin.flush()
    lines = nbytes = 0
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(proc.stderr.read().decode()[-2000:])
        lines += 1
        nbytes += len(line)
        if b'"agent_settled"' in line:
            break
    elapsed = time.perf_counter() - start
    proc.stdin.close()
    proc.wait(timeout=30)
    return elapsed, lines, nbytes


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    server = FakeLLMServer()
    server.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            env = make_env(server, Path(tmp))
            plain = startup_figures(env, tmp, args.runs, "")
            with_mcp = startup_figures(with_mcp_server(env), tmp, args.runs, " (one stdio MCP server)")
            print(f"with one MCP server: {(with_mcp / plain - 1) * 100:+.1f} %")
            for deltas in (500, 1000, 2000, 4000):
                elapsed, lines, nbytes = stream_prompt(server, env, tmp, deltas)
                print(f"{deltas} deltas: {elapsed * 1000:.0f} ms, {lines} lines ({lines / elapsed:.0f} lines/s), "
                      f"{nbytes} stdout bytes ({nbytes / deltas:.0f} bytes/delta)")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
