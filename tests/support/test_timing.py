"""The per-test timing of support/timing.py: CPU of processes no test reaps (`tree_cpu`) and the report."""

from __future__ import annotations

import json
import subprocess
import sys

from support import timing

BURN = "import time\nend = time.process_time() + {seconds}\nwhile time.process_time() < end: pass\n"
# The child burns 0.3 s itself, runs a grandchild burning 0.3 s and reaps it, then says so and waits for stdin.
PARENT = (BURN.format(seconds=0.3) + "import subprocess, sys\n"
          f"subprocess.run([sys.executable, '-c', {BURN.format(seconds=0.3)!r}])\n"
          "print('burnt', flush=True)\nsys.stdin.read()\n")


def test_tree_cpu_counts_a_process_its_live_children_and_the_ones_it_reaped():
    child = subprocess.Popen([sys.executable, "-c", PARENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    try:
        assert child.stdout.readline() == "burnt\n"  # both burns are done, the grandchild reaped
        used = timing.tree_cpu(child.pid)
    finally:
        child.communicate("")
    assert 0.55 <= used < 5


def test_tree_cpu_of_no_process_is_zero():
    assert timing.tree_cpu(2 ** 22 + 1) == 0.0  # above the largest pid Linux gives (pid_max <= 2**22)


def test_the_report_adds_the_cpu_of_others_and_reads_files_written_without_it(tmp_path):
    rows = [{"id": "t.py::a", "wall": 3.0, "self": 0.5, "children": 0.5, "others": 1.0},
            {"id": "t.py::b", "wall": 1.0, "self": 0.5, "children": 0.0}]
    (tmp_path / "gw0-1.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    report = timing.summary(tmp_path, 5)
    assert report.splitlines()[0] == "2 tests: wall 4.0 s, CPU 2.5 s (1.0 own + 0.5 children + 1.0 others)"
    assert "   3.00   2.00    1.00 t.py::a" in report
