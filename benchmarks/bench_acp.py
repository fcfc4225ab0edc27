"""ACP-mode benchmarks against the loopback fake LLM server.

Measures (issue 14, 2-core machine):
- spawn → `initialize` response, median over runs (target <= 300 ms);
- spawn → `session/new` response (the first session is built then: settings, resources, tools);
- one prompt streaming N text deltas: `session/update` notifications per second.

Run: `.venv/bin/python benchmarks/bench_acp.py [--runs 20]`. Uses the venv's console script, not the
`python3` shim on PATH (DESIGN.md: the shim adds ~70 ms before Python starts).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench_rpc import agent_command, make_env

from support.fake_llm import FakeLLMServer


def read_record(proc: subprocess.Popen) -> dict:
    """The next JSON line the agent wrote; RuntimeError with its stderr's tail when it exited."""
    line = proc.stdout.readline()
    if not line:
        raise RuntimeError(f"agent exited: {proc.stderr.read().decode()[-2000:]}")
    return json.loads(line)


def send(proc: subprocess.Popen, request_id: int, method: str, params: dict) -> None:
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
                     + b"\n")
    proc.stdin.flush()


def answer(proc: subprocess.Popen, request_id: int) -> tuple[dict, int]:
    """The answer to `request_id` and the number of notifications read before it."""
    notifications = 0
    while "id" not in (record := read_record(proc)) or record["id"] != request_id:
        notifications += 1
    assert "result" in record, record
    return record["result"], notifications


def spawn_figures(env: dict[str, str], cwd: str) -> tuple[float, float]:
    """Seconds from spawn to the `initialize` answer, and to the `session/new` answer."""
    start = time.perf_counter()
    proc = subprocess.Popen([*agent_command(), "--mode", "acp", "--no-session"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    send(proc, 1, "initialize", {"protocolVersion": 1})
    answer(proc, 1)
    initialized = time.perf_counter() - start
    send(proc, 2, "session/new", {"cwd": cwd, "mcpServers": []})
    answer(proc, 2)
    created = time.perf_counter() - start
    proc.stdin.close()
    proc.wait(timeout=30)
    return initialized, created


def stream_prompt(server: FakeLLMServer, env: dict[str, str], cwd: str, deltas: int) -> tuple[float, int]:
    """Seconds of one prompt streaming `deltas` text deltas, and the notifications it produced."""
    server.set_script([{"text_deltas": deltas}])
    proc = subprocess.Popen([*agent_command(), "--mode", "acp", "--no-session"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    send(proc, 1, "initialize", {"protocolVersion": 1})
    answer(proc, 1)
    send(proc, 2, "session/new", {"cwd": cwd, "mcpServers": []})
    session_id = answer(proc, 2)[0]["sessionId"]
    start = time.perf_counter()
    send(proc, 3, "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]})
    _, notifications = answer(proc, 3)
    elapsed = time.perf_counter() - start
    proc.stdin.close()
    proc.wait(timeout=30)
    return elapsed, notifications


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    server = FakeLLMServer().start()
    try:
        with tempfile.TemporaryDirectory() as home:
            env = make_env(server, Path(home))
            figures = [spawn_figures(env, home) for _ in range(args.runs)]
            init = sorted(f[0] for f in figures)
            new = sorted(f[1] for f in figures)
            print(f"spawn -> initialize: median {statistics.median(init) * 1000:.0f} ms, "
                  f"max {init[-1] * 1000:.0f} ms over {args.runs} runs (target <= 300 ms)")
            print(f"spawn -> session/new: median {statistics.median(new) * 1000:.0f} ms, max {new[-1] * 1000:.0f} ms")
            for deltas in (1000, 10000):
                elapsed, notifications = stream_prompt(server, env, home, deltas)
                print(f"prompt of {deltas} deltas: {elapsed:.2f} s, {notifications} notifications, "
                      f"{notifications / elapsed:.0f}/s")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
