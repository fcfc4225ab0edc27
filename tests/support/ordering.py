"""Longest tests first, so that the xdist workers run out of work together (issue 11 item 6).

`tests/durations.json` maps a test id to its measured wall in seconds (tests under `THRESHOLD_S` are left out).
`longest_first` puts the known tests first, longest first, and every other test after them in collection order;
an end-to-end test the file does not know counts as `UNKNOWN_E2E_S` (a new one starts agents and waits, like the
2 s ones of a new module that, run last, once kept one worker busy 13 s after the others had ended). The order pays only with small
scheduling chunks: xdist's `load` scheduler otherwise hands each worker a quarter of its share of the tests at
once, and the first worker would get all the long ones (pyproject.toml sets `--maxschedchunk`).

Rewrite the file from a timed run:
    TEST_TIMING_DIR=DIR .venv/bin/pytest -q && python tests/support/ordering.py DIR
"""

from __future__ import annotations

import collections
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

DURATIONS = Path(__file__).resolve().parents[1] / "durations.json"
THRESHOLD_S = 0.2
"""Tests measured below this are not written: their order does not change when the workers end."""

UNKNOWN_E2E_S = 0.5
"""The seconds assumed for a test under `tests/e2e/` missing from the file: a measured one under `THRESHOLD_S`
or a new one (which may take seconds); either way it runs before the unit tests, which end the run."""

Item = TypeVar("Item")


def load(path: Path = DURATIONS) -> dict[str, float]:
    """test id -> seconds from `path`; {} when the file is missing or is not a JSON object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def longest_first(items: Sequence[Item], durations: Mapping[str, float], key=lambda item: item.nodeid) -> list[Item]:
    """`items` with the ones `durations` knows (and the unknown end-to-end ones, as `UNKNOWN_E2E_S`) first,
    longest first (ties keep their order), then the rest as they came. `key(item)` is the test id looked up
    in `durations`."""
    def seconds(item: Item) -> float | None:
        test = key(item)
        return durations.get(test, UNKNOWN_E2E_S if test.startswith("tests/e2e/") else None)

    timed = [(item, seconds(item)) for item in items]
    known = [pair for pair in timed if pair[1] is not None]
    known.sort(key=lambda pair: -pair[1])  # sort is stable: equal durations keep collection order
    return [item for item, _ in known] + [item for item, took in timed if took is None]


def durations_from_timing(rows: Iterable[Mapping[str, object]], threshold_s: float = THRESHOLD_S) -> dict[str, float]:
    """test id -> mean wall (seconds, rounded to 0.1) of the `support/timing.py` rows, for the tests whose mean
    is at least `threshold_s`; sorted by id, so a rewrite changes only the lines of tests whose time moved. The
    rows of whole processes (no `id`) are left out."""
    walls: dict[str, list[float]] = collections.defaultdict(list)
    for row in rows:
        if "id" not in row:
            continue
        walls[str(row["id"])].append(float(row["wall"]))  # type: ignore[arg-type]
    means = {test: sum(values) / len(values) for test, values in walls.items()}
    return {test: round(mean, 1) for test, mean in sorted(means.items()) if mean >= threshold_s}


def write(directory: Path, path: Path = DURATIONS) -> int:
    """Rewrite `path` from the timing files in `directory`; the number of tests written."""
    rows = [json.loads(line) for file in directory.glob("*.jsonl") for line in file.open(encoding="utf-8")]
    durations = durations_from_timing(rows)
    path.write_text(json.dumps(durations, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    return len(durations)


if __name__ == "__main__":
    print(f"{write(Path(sys.argv[1]))} tests written to {DURATIONS}")
