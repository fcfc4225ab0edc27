"""Deletion ranges of verbatim-line compaction: reading the model's `start,end` records, repairing them, the
mechanical fallback, and rebuilding the kept lines with `(filtered N lines)` markers (seed 003).

Repairs (each makes the rung `repaired`): code fences or prose around the records, other separators (`2-5`,
`2 to 5`), single line numbers, reversed bounds, bounds outside the transcript (clamped; a range wholly past the
end is dropped), records out of order, overlapping ranges. Adjacent ranges merge without counting as a repair.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

Range = tuple[int, int]
"""An inclusive 1-based line range `(start, end)`."""


@dataclass(frozen=True)
class Line:
    """One numbered transcript line."""

    text: str
    protected: bool = False
    """A user request's first line: the mechanical rung never deletes it."""


_CLEAN = re.compile(r"\s*(\d+)\s*,\s*(\d+)\s*")
_LOOSE = re.compile(r"(\d+)\s*(?:,|-|–|—|\.\.|to|through)\s*(\d+)", re.IGNORECASE)
_SINGLE = re.compile(r"\D*?(\d+)\D*")


@dataclass
class Ranges:
    """Parsed deletion ranges: sorted, merged, within `1..line_count`; `repaired` when the answer deviated."""

    ranges: list[Range] = field(default_factory=list)
    repaired: bool = False

    @property
    def deleted(self) -> int:
        return sum(end - start + 1 for start, end in self.ranges)


def parse_ranges(answer: str, line_count: int) -> Ranges:
    """Read `start,end` records from `answer` and repair what can be repaired (see the module docstring)."""
    raw: list[Range] = []
    repaired = False
    for line in answer.splitlines():
        found, clean = _records(line)
        raw += found
        repaired = repaired or not clean
    result = _normalize(raw, line_count)
    result.repaired = result.repaired or repaired
    return result


def _records(line: str) -> tuple[list[Range], bool]:
    """Ranges on one answer line and whether the line was a clean record (blank lines are clean)."""
    if not line.strip():
        return [], True
    match = _CLEAN.fullmatch(line)
    if match:
        return [(int(match[1]), int(match[2]))], True
    loose = [(int(a), int(b)) for a, b in _LOOSE.findall(line)]
    if loose:
        return loose, False
    single = _SINGLE.fullmatch(line)
    return ([(int(single[1]), int(single[1]))] if single else []), False


def _normalize(raw: list[Range], line_count: int) -> Ranges:
    fixed: list[Range] = []
    repaired = raw != sorted(raw)
    for start, end in raw:
        if start > end:
            start, end, repaired = end, start, True
        if end < 1 or start > line_count:
            repaired = True
            continue
        clamped = (max(start, 1), min(end, line_count))
        repaired = repaired or clamped != (start, end)
        fixed.append(clamped)
    merged: list[Range] = []
    for start, end in sorted(fixed):
        if merged and start <= merged[-1][1] + 1:
            repaired = repaired or start <= merged[-1][1]  # an overlap; adjacent ranges are fine
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return Ranges(merged, repaired)


def usable(ranges: Ranges, line_count: int) -> bool:
    """The answer deletes something, and not everything."""
    return 0 < ranges.deleted < line_count


def mechanical_ranges(lines: list[Line], ratio: float) -> list[Range]:
    """The last rung: delete the oldest unprotected lines until `ratio` of all lines are gone."""
    target = min(max(1, round(ratio * len(lines))), len(lines) - 1)  # at least one line stays
    chosen = [n for n, line in enumerate(lines, 1) if not line.protected][:target]
    return _normalize([(n, n) for n in chosen], len(lines)).ranges


def rebuild(lines: list[Line], ranges: list[Range]) -> str:
    """The kept lines in order, each deleted run replaced by `(filtered N lines)` (seed 003's marker)."""
    out: list[str] = []
    position = 0
    for start, end in ranges:
        out += [line.text for line in lines[position:start - 1]]
        out.append(f"(filtered {end - start + 1} lines)")
        position = end
    out += [line.text for line in lines[position:]]
    return "\n".join(out)
