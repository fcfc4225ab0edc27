"""RPC-mode benchmarks against the loopback fake LLM server.

Measures (issue 2 budgets, 2-core machine):
- spawn → first `get_state` response, median over runs (target < 200 ms); again with one stdio MCP server
  configured (`tests/support/mcp_sdk_server.py`, a server written with the SDK; issue 13: within 10 % of the
  figure without);
- idle peak RSS of the agent process after that response (VmHWM; target < 50 MB);
- one prompt streaming N text deltas: stdout lines/s and stdout bytes for several N (bytes must grow linearly).

Run: `.venv/bin/python benchmarks/bench_rpc.py [--runs 20]`. Uses the venv's console script, not the
`python3` shim on PATH (DESIGN.md: the shim adds ~70 ms before Python starts).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import TESTS, FakeLLMServer, RpcProcess, agent_command, clean_env, write_agent_dir


def make_env(server: FakeLLMServer, home: Path) -> dict[str, str]:
    agent_dir = write_agent_dir(home / "agent", server)
    return clean_env(AGENT_FORGE_DIR=str(agent_dir), HOME=str(home))


def first_response(env: dict[str, str], cwd: str, command: list[str] | None = None) -> tuple[float, int]:
    """Seconds from spawn to the get_state response, and the process's peak RSS in KiB once it serves (a second
    get_state answered: agent-forge answers the first before the rest of its start, docs/rpc.md "Start-up").
    `command`: the RPC-mode command line (default agent-forge's, without a session)."""
    agent = RpcProcess(command or [*agent_command(), "--mode", "rpc", "--no-session"], env, cwd)
    agent.ask({"id": "s", "type": "get_state"})
    elapsed = time.perf_counter() - agent.started
    agent.ask({"id": "served", "type": "get_state"})
    rss = agent.peak_rss_kib()
    agent.close()
    return elapsed, rss


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
    server = {"command": sys.executable, "args": [str(TESTS / "support" / "mcp_sdk_server.py")]}
    (mcp_dir / "mcp.json").write_text(json.dumps({"mcpServers": {"bench": server}}))
    return {**env, "AGENT_FORGE_DIR": str(mcp_dir)}


def stream_prompt(server: FakeLLMServer, env: dict[str, str], cwd: str, deltas: int,
                  command: list[str] | None = None, end: bytes = b'"agent_settled"') -> dict[str, Any]:
    """One prompt streaming `deltas` text deltas, timed from sending it to the line holding `end`: `seconds`,
    stdout `lines` and `bytes`, `updates` (message_update lines) and `updates_seconds` (first to last of
    them), `delta_to_end` (first text delta to `text_end`, seconds) and `peak_rss_kib` after it.

    The server writes the stream at once (`burst`: every event still an HTTP chunk of its own): written an
    event at a time it costs ~25 us of this process's CPU an event, sharing one interpreter lock with the
    thread reading the agent's stdout, and bounded the figure near 30,000 events/s (both agents measured the
    server then, not themselves)."""
    server.set_script([{"text": " ".join(f"w{i}" for i in range(deltas)), "text_deltas": deltas, "burst": True}])
    agent = RpcProcess(command or [*agent_command(), "--mode", "rpc", "--no-session"], env, cwd)
    agent.ask({"id": "s", "type": "get_state"})
    marks: dict[str, float] = {}
    counts = {"lines": 0, "bytes": 0, "updates": 0}

    def seen(line: bytes) -> None:
        now = time.perf_counter()
        counts["lines"] += 1
        counts["bytes"] += len(line)
        if b'"message_update"' in line:
            counts["updates"] += 1
            marks.setdefault("first_update", now)
            marks["last_update"] = now
            if b'"text_delta"' in line:
                marks.setdefault("first_delta", now)
            elif b'"text_end"' in line:
                marks.setdefault("text_end", now)

    start = time.perf_counter()
    agent.send({"id": "p", "type": "prompt", "message": "go"})
    agent.read_until(lambda line: end in line, seen)
    elapsed = time.perf_counter() - start
    rss = agent.peak_rss_kib()
    agent.close()
    return {**counts, "seconds": elapsed, "updates_seconds": marks["last_update"] - marks["first_update"],
            "delta_to_end": marks["text_end"] - marks["first_delta"], "peak_rss_kib": rss}


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
                figures = stream_prompt(server, env, tmp, deltas)
                elapsed, lines, nbytes = figures["seconds"], figures["lines"], figures["bytes"]
                print(f"{deltas} deltas: {elapsed * 1000:.0f} ms, {lines} lines ({lines / elapsed:.0f} lines/s), "
                      f"{nbytes} stdout bytes ({nbytes / deltas:.0f} bytes/delta)")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
