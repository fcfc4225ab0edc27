"""Per-test wall and CPU time, to find what makes the suite slow (issue 11). Off unless `TEST_TIMING_DIR` is set.

With `TEST_TIMING_DIR=DIR .venv/bin/pytest ...` every process running tests (each xdist worker) appends one JSON
line per test to `DIR/<worker>-<pid>.jsonl`: `{"id": nodeid, "wall": s, "self": s, "children": s, "others": s}`
over the whole protocol (set-up, call, teardown). `self` is this process's user + system CPU, `children` that of
the children it reaped meanwhile (agents and servers a test started and waited for), `others` that of processes
it started that are no children of its own, as helpers report it with `add_cpu` (a tmux server and the agent in
its pane: `tmux_terminal.py`). On a machine shared with other work, trust the CPU figures and compare walls only
to each other: a test whose wall is far above its CPU waits (a timeout, a grace period, a retry) or queues for a
core.

`python tests/support/timing.py DIR [N]` prints the totals and the N (default 30) tests that wait longest,
cost the most CPU, and the modules that wait longest.
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
        self.out = open(directory / f"{worker}-{os.getpid()}.jsonl", "a", encoding="utf-8")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None):
        wall, (own, children) = time.perf_counter(), _cpu()
        _others[0] = 0.0
        yield
        own_after, children_after = _cpu()
        row = {"id": item.nodeid, "wall": time.perf_counter() - wall, "self": own_after - own,
               "children": children_after - children, "others": _others[0]}
        self.out.write(json.dumps(row) + "\n")
        self.out.flush()  # a worker that crashes keeps what it measured


def register(config: pytest.Config) -> None:
    """Register the plugin when `TEST_TIMING_DIR` is set (called from `tests/conftest.py`)."""
    if os.environ.get(ENV):
        config.pluginmanager.register(TimingPlugin(Path(os.environ[ENV])), "test-timing")


def summary(directory: Path, count: int = 30) -> str:
    """The report `python timing.py DIR` prints: totals, the top `count` tests by wait and by CPU, modules by wait."""
    rows = [json.loads(line) for path in directory.glob("*.jsonl") for line in path.open(encoding="utf-8")]
    for row in rows:
        row.setdefault("others", 0.0)  # files written before it was counted
        row["cpu"] = row["self"] + row["children"] + row["others"]
        row["wait"] = row["wall"] - row["cpu"]
    lines = [f"{len(rows)} tests: wall {sum(r['wall'] for r in rows):.1f} s, CPU {sum(r['cpu'] for r in rows):.1f} s"
             f" ({sum(r['self'] for r in rows):.1f} own + {sum(r['children'] for r in rows):.1f} children"
             f" + {sum(r['others'] for r in rows):.1f} others)"]
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


if __name__ == "__main__":
    print(summary(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 30))
