"""Unified diffs of a file before and after an edit, for clients to display."""

from __future__ import annotations

import difflib


def unified_diff(old: str, new: str, path: str, context: int = 3) -> str:
    """`difflib.unified_diff` of the two texts' lines (split on LF only), joined with LF.

    Hunk headers carry the line numbers (`@@ -12,7 +12,8 @@`); `path` names both sides.
    """
    lines = difflib.unified_diff(_lines(old), _lines(new), fromfile=path, tofile=path, n=context, lineterm="")
    return "\n".join(lines)


def first_changed_line(old: str, new: str) -> int:
    """1-based number of the first line that differs between `old` and `new`."""
    old_lines, new_lines = _lines(old), _lines(new)
    for number, (before, after) in enumerate(zip(old_lines, new_lines), start=1):
        if before != after:
            return number
    return min(len(old_lines), len(new_lines)) + 1


def _lines(text: str) -> list[str]:
    """Lines without their LF; `str.splitlines` would also split on form feeds and U+2028."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines
