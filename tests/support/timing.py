"""Per-test wall and CPU time, to find what makes the suite slow (issue 11). Off unless `TEST_TIMING_DIR` is set.

With `TEST_TIMING_DIR=DIR .venv/bin/pytest ...` every process running tests (each xdist worker) appends one JSON
line per test to `DIR/<worker>-<pid>.jsonl`: `{"id": nodeid, "start": epoch s, "wall": s, "self": s,
"children": s, "others": s}` over the whole protocol (set-up, call, teardown), and at its end one line
`{"process": worker, "start": epoch s, "end": epoch s, "self": s, "children": s}` with its whole CPU (collection, xdist's
messages, the time between tests: what no test row holds). `self` is this process's user + system CPU, `children` that of
the children it reaped meanwhile (agents and servers a test started and waited for), `others` that of processes
it started that are no children of its own, as helpers report it with `add_cpu` (a tmux server and the agent in
its pane: `tmux_terminal.py`). On a machine shared with other work, trust the CPU figures and compare walls only
to each other: a test whose wall is far above its CPU waits (a timeout, a grace period, a retry) or queues for a
core.

`python tests/support/timing.py DIR [N]` prints the totals, each process's time outside its tests and its last
tests (the tail), and the N (default 30) tests that wait longest, cost the most CPU, and the modules that wait
longest.
"""

from __future__ import annotations

import collections
import json
import os
import resource
import sys
import time
from pathlib import Path

import pytest

ENV = "TEST_TIMING_DIR"
_others = [0.0]  # CPU seconds `add_cpu` reported since the running test began


def on() -> bool:
    """Whether tests are timed (`TEST_TIMING_DIR` is set): helpers measure what they report only then."""
    return bool(os.environ.get(ENV))


def add_cpu(seconds: float) -> None:
    """Count `seconds` of CPU (user + system) used by processes the running test started that this process does
    not reap (a reaped child is in `children` already)."""
    _others[0] += seconds


def tree_cpu(root: int) -> float:
    """User + system CPU seconds of process `root` and every live descendant, with the children each has reaped
    (Linux `/proc`; 0.0 where it cannot be read). Call it before the tree is killed."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue  # gone meanwhile
            parents[int(entry.name)] = int(fields[1])
            times[int(entry.name)] = sum(int(field) for field in fields[11:15])  # utime stime cutime cstime
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo += [child for child, parent in parents.items() if parent == pid]
    return sum(times.get(pid, 0) for pid in tree) / os.sysconf("SC_CLK_TCK")


def _cpu() -> tuple[float, float]:
    """(this process's CPU, its reaped children's CPU), user + system, in seconds."""
    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


class TimingPlugin:
    """Writes one line per test to `<directory>/<worker>-<pid>.jsonl` (module docstring)."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        self.worker = worker
        self.out = open(directory / f"{worker}-{os.getpid()}.jsonl", "a", encoding="utf-8")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None):
        start, wall, (own, children) = time.time(), time.perf_counter(), _cpu()
        _others[0] = 0.0
        yield
        own_after, children_after = _cpu()
        row = {"id": item.nodeid, "start": start, "wall": time.perf_counter() - wall, "self": own_after - own,
               "children": children_after - children, "others": _others[0]}
        self._write(row)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self) -> None:
        own, children = _cpu()
        self._write({"process": self.worker, "start": _process_start(), "end": time.time(), "self": own,
                     "children": children})

    def _write(self, row: dict) -> None:
        self.out.write(json.dumps(row) + "\n")
        self.out.flush()  # a worker that crashes keeps what it measured


def _process_start() -> float:
    """This process's start, epoch seconds (Linux `/proc`: boot time + the start tick in `/proc/self/stat`)."""
    ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
    boot = next(float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                if line.startswith("btime "))
    return boot + ticks / os.sysconf("SC_CLK_TCK")


def register(config: pytest.Config) -> None:
    """Register the plugin when `TEST_TIMING_DIR` is set (called from `tests/conftest.py`)."""
    if os.environ.get(ENV):
        config.pluginmanager.register(TimingPlugin(Path(os.environ[ENV])), "test-timing")


def summary(directory: Path, count: int = 30) -> str:
    """The report `python timing.py DIR` prints: totals, the top `count` tests by wait and by CPU, modules by wait."""
    rows = [{**json.loads(line), "file": path.name} for path in directory.glob("*.jsonl")
            for line in path.open(encoding="utf-8")]
    processes = [row for row in rows if "process" in row]
    rows = [row for row in rows if "id" in row]
    for row in rows:
        row.setdefault("others", 0.0)  # files written before it was counted
        row["cpu"] = row["self"] + row["children"] + row["others"]
        row["wait"] = row["wall"] - row["cpu"]
    lines = [f"{len(rows)} tests: wall {sum(r['wall'] for r in rows):.1f} s, CPU {sum(r['cpu'] for r in rows):.1f} s"
             f" ({sum(r['self'] for r in rows):.1f} own + {sum(r['children'] for r in rows):.1f} children"
             f" + {sum(r['others'] for r in rows):.1f} others)"]
    lines += _process_lines(processes, rows)
    for key in ("wait", "cpu"):
        lines.append(f"-- by {key}: wall cpu wait test")
        lines += [f"{r['wall']:7.2f} {r['cpu']:6.2f} {r['wait']:7.2f} {r['id']}"
                  for r in sorted(rows, key=lambda r: -r[key])[:count]]
    modules: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0])
    for row in rows:
        totals = modules[row["id"].split("::")[0]]
        totals[0], totals[1], totals[2] = totals[0] + row["wall"], totals[1] + row["cpu"], totals[2] + row["wait"]
    lines.append("-- modules by wait: wall cpu wait module")
    lines += [f"{w:7.1f} {c:6.1f} {wait:7.1f} {name}"
              for name, (w, c, wait) in sorted(modules.items(), key=lambda kv: -kv[1][2])[:count]]
    return "\n".join(lines)


def _process_lines(processes: list[dict], rows: list[dict]) -> list[str]:
    """Per process: wall and CPU outside its tests (start-up and collection, gaps, the end) and its last test."""
    lines = ["-- processes: wall, before first test, gaps, after last test, CPU outside tests; last test" if processes
             else "-- processes: not recorded (files written before it was)"]
    for process in sorted(processes, key=lambda p: p["process"]):
        own = sorted((r for r in rows if r["file"] == process["file"] and "start" in r), key=lambda r: r["start"])
        if not own:  # the xdist controller: its own CPU (collection, the reports; workers are its children)
            lines.append(f"{process['end'] - process['start']:7.1f} {'':20} {process['self']:6.1f} {process['process']}")
            continue
        tested = sum(r["wall"] for r in own)
        before, after = own[0]["start"] - process["start"], process["end"] - own[-1]["start"] - own[-1]["wall"]
        gaps = process["end"] - process["start"] - before - after - tested
        outside = process["self"] + process["children"] - sum(r["self"] + r["children"] for r in own)
        lines.append(f"{process['end'] - process['start']:7.1f} {before:6.1f} {gaps:6.1f} {after:6.1f} {outside:6.1f}"
                     f" {process['process']}; last {own[-1]['wall']:.2f} s {own[-1]['id']}")
    return lines


if __name__ == "__main__":
    print(summary(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 30))
