"""The longest-first order of the xdist workers' tests (support/ordering.py) and the file it reads."""

from __future__ import annotations

import json
from types import SimpleNamespace

from support import ordering


def _items(*ids: str) -> list[SimpleNamespace]:
    return [SimpleNamespace(nodeid=test) for test in ids]


def test_known_tests_come_first_longest_first_and_the_rest_keep_their_order():
    items = _items("a", "new1", "b", "c", "new2", "d")
    ordered = ordering.longest_first(items, {"a": 0.5, "b": 3.0, "c": 0.5, "d": 1.2, "gone": 9.0})
    assert [item.nodeid for item in ordered] == ["b", "d", "a", "c", "new1", "new2"]


def test_an_unknown_end_to_end_test_runs_before_the_unknown_unit_tests():
    items = _items("tests/ai/test_x.py::u", "tests/e2e/test_new.py::slow", "tests/e2e/test_old.py::long")
    ordered = ordering.longest_first(items, {"tests/e2e/test_old.py::long": 3.0})
    assert [item.nodeid for item in ordered] == ["tests/e2e/test_old.py::long", "tests/e2e/test_new.py::slow",
                                                 "tests/ai/test_x.py::u"]


def test_durations_are_mean_walls_rounded_and_short_tests_are_left_out():
    rows = [{"id": "x", "wall": 1.0}, {"id": "x", "wall": 2.0}, {"id": "short", "wall": 0.05},
            {"id": "y", "wall": 0.26}]
    assert ordering.durations_from_timing(rows, threshold_s=0.2) == {"x": 1.5, "y": 0.3}


def test_a_timing_directory_with_process_lines_is_written_from_its_test_lines(tmp_path):
    """`support/timing.py` ends each process's file with a line of the whole process (no `id`)."""
    timing_dir = tmp_path / "timing"
    timing_dir.mkdir()
    (timing_dir / "gw0-1.jsonl").write_text(json.dumps({"id": "t::a", "wall": 1.0}) + "\n" + json.dumps(
        {"process": "gw0", "start": 0.0, "end": 2.0, "self": 1.0, "children": 0.0}) + "\n")
    target = tmp_path / "durations.json"
    assert ordering.write(timing_dir, target) == 1
    assert ordering.load(target) == {"t::a": 1.0}


def test_a_missing_or_broken_file_orders_nothing(tmp_path):
    broken = tmp_path / "durations.json"
    broken.write_text("[1, 2]")
    assert ordering.load(broken) == {} and ordering.load(tmp_path / "missing.json") == {}


def test_the_committed_file_maps_test_ids_to_seconds():
    durations = json.loads(ordering.DURATIONS.read_text(encoding="utf-8"))
    assert durations and all("::" in test and isinstance(seconds, (int, float)) and seconds >= 0
                             for test, seconds in durations.items())
