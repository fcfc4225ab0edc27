"""RPC start-up, before and after a change: spawn -> first `get_state` of several agent-forge source trees,
alternated spawn by spawn with this interpreter (`PYTHONPATH=<tree>`), medians of the wall time and of the
child's CPU up to the answer (user+sys from /proc/<pid>/stat, read as soon as the answer line arrived; 10 ms
ticks): on a shared machine the CPU figure moves much less with the load than the wall time.

Run: `.venv/bin/python benchmarks/bench_rpc_startup.py RUNS NAME TREE [NAME TREE ...]`, e.g.
`... 12 base /tmp/base/src new src` (`git archive <commit> | tar -x -C /tmp/base`; run `python -m compileall -q`
on each tree first: PYTHONDONTWRITEBYTECODE=1 would leave one of them without bytecode). `AB_ARGS` replaces the
flags (default `--no-session`), with the agent dir and HOME of the environment.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """user + sys CPU seconds of process `pid` so far (/proc/<pid>/stat fields 14 and 15)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def first_get_state(tree: str, flags: list[str]) -> tuple[float, float]:
    """(seconds from spawn to the answer, the child's CPU seconds then) of the agent-forge in `tree`."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "agent_forge", "--mode", "rpc", *flags], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": tree})
    proc.stdin.write(b'{"id":"s","type":"get_state"}\n')
    proc.stdin.flush()
    line = proc.stdout.readline()
    seconds, cpu = time.perf_counter() - start, cpu_seconds(proc.pid)
    proc.stdin.close()
    proc.wait()
    if b'"success":true' not in line:
        raise SystemExit(f"{tree}: unexpected answer {line[:200]!r}")
    return seconds, cpu


def main() -> None:
    runs, trees = int(sys.argv[1]), list(zip(sys.argv[2::2], sys.argv[3::2]))
    flags = os.environ.get("AB_ARGS", "--no-session").split()
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in trees}
    for _ in range(runs):
        for name, tree in trees:
            figures[name].append(first_get_state(tree, flags))
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for name, pairs in figures.items():
        wall, cpu = [w * 1000 for w, _ in pairs], [c * 1000 for _, c in pairs]
        print(f"{name}: spawn -> get_state median {statistics.median(wall):.0f} ms (min {min(wall):.0f}); "
              f"CPU at the answer median {statistics.median(cpu):.0f} ms (min {min(cpu):.0f}), {runs} runs")


if __name__ == "__main__":
    main()
