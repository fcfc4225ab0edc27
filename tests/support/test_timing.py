"""The per-test timing of support/timing.py: CPU of processes no test reaps (`tree_cpu`) and the report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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


def test_the_report_gives_each_process_its_time_outside_tests_and_its_last_test(tmp_path):
    rows = [{"id": "t.py::a", "start": 102.0, "wall": 3.0, "self": 0.5, "children": 0.5},
            {"id": "t.py::b", "start": 106.0, "wall": 1.0, "self": 0.5, "children": 0.0},
            {"process": "gw0", "start": 100.0, "end": 107.5, "self": 2.0, "children": 0.5}]
    (tmp_path / "gw0-1.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (tmp_path / "main-2.jsonl").write_text(json.dumps({"process": "main", "start": 99.0, "end": 108.0, "self": 0.7,
                                                       "children": 9.0}) + "\n")
    report = timing.summary(tmp_path, 5).splitlines()
    assert report[0].startswith("2 tests: wall 4.0 s, CPU 1.5 s")  # process lines are no tests
    # 7.5 s: 2.0 before the first test, 1.0 between the two, 0.5 after the last; CPU 2.5 - 1.5 outside tests
    assert "    7.5    2.0    1.0    0.5    1.0 gw0; last 1.00 s t.py::b" in report
    assert any(line.endswith("   0.7 main") and line.startswith("    9.0") for line in report)


def test_a_run_writes_a_line_per_test_and_one_for_its_process_at_its_end(tmp_path):
    (tmp_path / "conftest.py").write_text("from support import timing\n\n\n"
                                          "def pytest_configure(config):\n    timing.register(config)\n")
    (tmp_path / "test_two.py").write_text("def test_one():\n    pass\n\n\ndef test_two():\n    pass\n")
    timed = tmp_path / "timed"
    env = {name: value for name, value in os.environ.items() if name != "PYTEST_XDIST_WORKER"}  # ours names the file
    env.update({timing.ENV: str(timed), "PYTHONPATH": str(Path(timing.__file__).parents[1])})
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "-c", os.devnull,
                           "--rootdir", str(tmp_path), "test_two.py"], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    [written] = timed.glob("main-*.jsonl")
    tests, process = (lambda rows: (rows[:-1], rows[-1]))([json.loads(line) for line in written.open()])
    assert [row["id"] for row in tests] == ["test_two.py::test_one", "test_two.py::test_two"]
    assert process["process"] == "main" and process["start"] <= tests[0]["start"] <= tests[1]["start"] < process["end"]
    assert process["self"] > 0
