"""Session file benchmarks: opening large sessions through the real CLI, and the cost of `get_entries` cursors.

Measures (issue 4 budgets, 2-core machine), for sessions of 5,000 and 50,000 entries (~600 bytes a line, so
~3 MB and ~30 MB; a realistic mix of user, assistant with tool calls, and tool result messages):
- spawn `agent-forge --mode rpc --session <file>` → its first `get_state` response, median over runs
  (target < 1.5 s at 50,000 entries);
- `get_entries` with `since` 10 entries before the end: median round trip (target: independent of file
  length), next to a full `get_entries` for contrast.

Run: `.venv/bin/python benchmarks/bench_sessions.py [--runs 5] [--sizes 5000 50000]`. Uses the venv's console
script (DESIGN.md: the `python3` shim on PATH adds ~70 ms before Python starts). No model server is needed:
`get_state` and `get_entries` never call a model.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import tempfile
import time
from pathlib import Path

from harness import RpcProcess, agent_command, clean_env, make_session


class Agent(RpcProcess):
    """`agent-forge --mode rpc <args>`; `ask` returns the response record alone."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path) -> None:
        super().__init__([*agent_command(), "--mode", "rpc", *args], env, cwd)

    def ask(self, command: dict) -> dict:  # type: ignore[override]
        record, _ = super().ask(command)
        assert record is not None
        return record


def open_time(path: Path, env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Seconds from spawning `--session <path>` to the first get_state response, and the CPU seconds the
    process used in all (less sensitive than wall time to other load on the machine)."""
    cpu_before = _children_cpu()
    start = time.perf_counter()
    agent = Agent(["--session", str(path)], env, cwd)
    state = agent.ask({"id": "s", "type": "get_state"})["data"]
    elapsed = time.perf_counter() - start
    assert state["sessionFile"] == str(path), state
    agent.close()
    return elapsed, _children_cpu() - cpu_before


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cursor_times(path: Path, ids: list[str], env: dict[str, str], cwd: Path, runs: int) -> tuple[float, float, int]:
    """Median seconds of `get_entries` since the 10th-last entry and of a full `get_entries`, and the size in
    bytes of the full answer."""
    agent = Agent(["--session", str(path)], env, cwd)
    agent.ask({"type": "get_state"})
    since = []
    for _ in range(runs):
        start = time.perf_counter()
        data = agent.ask({"type": "get_entries", "since": ids[-11]})["data"]
        since.append(time.perf_counter() - start)
        assert [entry["id"] for entry in data["entries"]] == ids[-10:]
    full = []
    for _ in range(3):
        start = time.perf_counter()
        line_size = len(json.dumps(agent.ask({"type": "get_entries"})))
        full.append(time.perf_counter() - start)
    agent.close()
    return statistics.median(since), statistics.median(full), line_size


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5, help="spawns per size for the open time")
    parser.add_argument("--sizes", type=int, nargs="+", default=[5_000, 50_000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = clean_env(AGENT_FORGE_DIR=str(root / "agent"), HOME=str(root))
        (root / "project").mkdir()
        print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
        for size in args.sizes:
            path, ids = make_session(root / f"s{size}", size)
            megabytes = path.stat().st_size / 1e6
            runs = [open_time(path, env, root / "project") for _ in range(args.runs)]
            opens, cpu = sorted(wall for wall, _ in runs), statistics.median(c for _, c in runs)
            since, full, full_bytes = cursor_times(path, ids, env, root / "project", runs=50)
            print(f"{size:>6} entries, {megabytes:5.1f} MB: open + get_state median {opens[len(opens) // 2]:.3f} s "
                  f"(min {opens[0]:.3f}, max {opens[-1]:.3f}; process CPU {cpu:.3f} s incl. exit); "
                  f"get_entries since 10th-last: median {since * 1000:.2f} ms; "
                  f"full get_entries: {full * 1000:.0f} ms ({full_bytes / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
