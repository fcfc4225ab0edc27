"""Whole-session reads over RPC on long sessions: `get_tree` (nested and flat), `get_entries`, `get_messages`,
and how long a `get_state` sent right behind each waits (h-rpcfix, round 5: get_tree took 2.2 s on 20,000
entries and held every other command meanwhile).

For each size, one `agent-forge --mode rpc --session <file>` (sessions made as in `bench_sessions.py`); each read
is written together with a `get_state` in one write; reported: the read's round trip and the `get_state`'s
(median of `--runs`). Run: `.venv/bin/python benchmarks/bench_rpc_reads.py [--sizes 20000 60000] [--runs 3]`;
`--src DIR` runs another checkout's `src` (e.g. a clone of main, for the before figures).

Measured on the 2-core helper machine under heavy load (load average 9-11, so wall times are 2-5x the CPU
time and noisy; the agent's CPU seconds are the figure to compare), median of 3, before → after (h-rpcfix):

    entries  read           agent CPU       get_state sent right behind it answered after
    20,000   get_tree       1.03 → 0.28 s   3.79 → 0.01 s
    20,000   get_tree flat  0.32 → 0.29 s   0.68 → 0.02 s
    20,000   get_entries    0.13 → 0.16 s   0.28 → 0.01 s
    20,000   get_messages   0.11 → 0.12 s   0.25 → 0.01 s
    60,000   get_tree       3.72 → 0.80 s   5.51 → 0.04 s
    60,000   get_tree flat  1.30 → 0.91 s   3.61 → 0.06 s
    60,000   get_entries    0.40 → 0.48 s   2.30 → 0.05 s
    60,000   get_messages   0.34 → 0.38 s   2.48 → 0.06 s

The nested tree had gone through the generic deep encoder (`deep_json.py`, a Python walk of every container);
it is now written node by node with the C encoder (`raw_json.forest_json`). Reads of more than 2,000 items run
in a worker thread, so nothing waits behind them.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_sessions import make_session  # noqa: E402

READS = {"get_tree": {"type": "get_tree"}, "get_tree flat": {"type": "get_tree", "flat": True},
         "get_entries": {"type": "get_entries"}, "get_messages": {"type": "get_messages"}}


def start(path: Path, env: dict[str, str], cwd: Path, src: str | None) -> subprocess.Popen:
    if src:
        env = {**env, "PYTHONPATH": src}
    return subprocess.Popen([sys.executable, "-m", "agent_forge", "--mode", "rpc", "--session", str(path)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                            cwd=cwd)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds the process used so far (less sensitive to machine load than wall time)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(proc: subprocess.Popen, read: dict) -> tuple[float, float, float]:
    """Seconds until the read's answer and until the get_state's, both sent at once; the agent's CPU seconds."""
    assert proc.stdin is not None and proc.stdout is not None
    cpu = cpu_seconds(proc.pid)
    proc.stdin.write(json.dumps({"id": "r", **read}).encode() + b"\n" + b'{"id":"s","type":"get_state"}\n')
    proc.stdin.flush()
    start, done = time.perf_counter(), {}
    while len(done) < 2:
        line = proc.stdout.readline()
        kind = _response_id(line)
        if kind is not None:
            done[kind] = time.perf_counter() - start
    return done["r"], done["s"], cpu_seconds(proc.pid) - cpu


def _response_id(line: bytes) -> str | None:
    """The id of a successful response line ("r" or "s"); None for events. A nested get_tree answer is deeper
    than `json.loads` goes, so its head and tail are searched instead."""
    try:
        record = json.loads(line)
    except RecursionError:
        ends = line[:300] + line[-300:]
        assert b'"success":true' in ends, ends
        return "r" if b'"id":"r"' in ends else None
    if record.get("type") != "response":
        return None
    assert record["success"], record.get("error")
    return record["id"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--src", help="the src directory of the checkout to run (default: this one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("AGENT_FORGE")}
        env.update(AGENT_FORGE_DIR=str(root / "agent"), HOME=str(root))
        (root / "project").mkdir()
        print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
        for size in args.sizes:
            path, _ = make_session(root / str(size), size)
            proc = start(path, env, root / "project", args.src)
            timed(proc, {"type": "get_state"})
            print(f"{size} entries, {path.stat().st_size / 1e6:.1f} MB")
            for name, read in READS.items():
                runs = [timed(proc, read) for _ in range(args.runs)]
                print(f"  {name:<14} {statistics.median(r[0] for r in runs):6.2f} s (agent CPU "
                      f"{statistics.median(r[2] for r in runs):5.2f} s)   get_state behind it "
                      f"{statistics.median(r[1] for r in runs):6.2f} s")
            proc.stdin.close()  # type: ignore[union-attr]
            proc.wait(timeout=60)


if __name__ == "__main__":
    main()
