"""Unified diffs of a file before and after an edit, for clients to display (the edit tool's `details.diff`,
which the terminal UI and HTML export show as it is)."""

from __future__ import annotations

import difflib
import re

NO_NEWLINE = "\\ No newline at end of file"
"""The marker row after a last line that has no LF (GNU diff's wording, which `patch` and `git apply` read)."""

_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")  # LF only: `str.splitlines` would also split on form feeds and U+2028


def unified_diff(old: str, new: str, path: str, context: int = 3) -> str:
    """`difflib.unified_diff` of the two texts' lines (split on LF only), rows joined with LF, no final LF.

    Hunk headers carry the line numbers (`@@ -12,7 +12,8 @@`); `path` names both sides. A last line without LF
    is followed by a `\\ No newline at end of file` row, so an edit that only adds or removes the final newline
    shows as a change (`-two` / `+two` / marker), never as an empty diff. Identical texts give `""`.
    """
    rows = difflib.unified_diff(_lines(old), _lines(new), fromfile=path, tofile=path, n=context)
    return "\n".join(row[:-1] if row.endswith("\n") else f"{row}\n{NO_NEWLINE}" for row in rows)


def first_changed_line(old: str, new: str) -> int:
    """1-based number of the first line that differs between `old` and `new` (a line's LF counts: adding or
    removing the final newline changes the last line), at most the new text's last line (1 for an empty one)."""
    old_lines, new_lines = _lines(old), _lines(new)
    last = max(len(new_lines), 1)
    for number, (before, after) in enumerate(zip(old_lines, new_lines), start=1):
        if before != after:
            return number
    return min(min(len(old_lines), len(new_lines)) + 1, last)


def _lines(text: str) -> list[str]:
    """Lines with their LF; the last one has none when the text does not end in LF."""
    return _LINE.findall(text)
