"""Applying exact-text replacements to a file's content while keeping its line endings byte for byte.

Matching happens on a copy with CRLF turned into LF, so `oldText` works whatever line endings the model
used; the replacements are then spliced into the original text, so lines the edits do not touch keep their
exact endings (also in files that mix CRLF and LF). Replacement text takes the file's dominant line ending.
An `oldText` without an exact match may still match tolerantly (`edit_match.py`); the result notes it.
"""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass
from typing import NamedTuple

from ...agent.types import ToolError
from .edit_match import EXACT, TYPOGRAPHY, WHITESPACE, Matches, find_matches, line_numbers

_TOLERANCE = {WHITESPACE: "ignoring trailing whitespace",
              TYPOGRAPHY: "ignoring trailing whitespace and reading curly quotes, dashes and non-breaking spaces "
                            "as plain ones"}


@dataclass(frozen=True)
class Replacement:
    """One edit: `old_text` must occur exactly once in the original content; it becomes `new_text`."""

    old_text: str
    new_text: str


class _Endings:
    """The LF-normalised view of a text and the map from its indices back to the original."""

    def __init__(self, text: str):
        self.original = text
        self.normalised = text.replace("\r\n", "\n")
        # Normalised index of each "\n" that lost its "\r": the k-th CRLF at original p has its "\n" at p - k.
        self.removed = [p - k for k, p in enumerate(_find_all(text, "\r\n"))]
        self.newline = "\r\n" if len(self.removed) * 2 > self.normalised.count("\n") else "\n"

    def to_original(self, index: int) -> int:
        return index + bisect.bisect_left(self.removed, index)


class Applied(NamedTuple):
    """The edited `text`, and one note per edit whose `oldText` matched only tolerantly (`edit_match.py`), e.g.
    `"edits[1].oldText matched only after ignoring trailing whitespace."`."""

    text: str
    notes: list[str]


def apply_replacements(content: str, edits: list[Replacement], path: str) -> Applied:
    """`content` with every edit applied, all matched against the original (not one after another): exactly,
    else tolerantly (`edit_match.py`).

    Raises `ToolError` when an `oldText` is empty, missing, not unique (naming the candidate lines), or when
    two edits overlap.
    """
    view = _Endings(content)
    notes: list[str] = []
    spans = sorted((_locate(view.normalised, edit, i, len(edits), path, notes), i) for i, edit in enumerate(edits))
    _check_overlaps(spans, path)
    pieces, cursor = [], 0
    for (start, end), i in spans:
        pieces.append(content[cursor:view.to_original(start)])
        pieces.append(normalise_newlines(edits[i].new_text).replace("\n", view.newline))
        cursor = view.to_original(end)
    pieces.append(content[cursor:])
    return Applied("".join(pieces), notes)


def normalise_newlines(text: str) -> str:
    """`text` with CRLF turned into LF."""
    return text.replace("\r\n", "\n")


def _locate(haystack: str, edit: Replacement, index: int, count: int, path: str,
            notes: list[str]) -> tuple[int, int]:
    label = "oldText" if count == 1 else f"edits[{index}].oldText"
    needle = normalise_newlines(edit.old_text)
    if not needle:
        raise ToolError(f"{label} must not be empty.")
    found = find_matches(haystack, needle)
    if not found.count:
        raise ToolError(f"Could not find {label} in {path}. It must match the file exactly, including "
                        "whitespace and line breaks; re-read the file and copy the text from it.")
    if found.count > 1:
        raise ToolError(_ambiguity(label, path, found, haystack))
    if found.level != EXACT:
        notes.append(f"{label} matched only after {_TOLERANCE[found.level]}.")
    return found.spans[0]


def _ambiguity(label: str, path: str, found: Matches, haystack: str) -> str:
    how = "" if found.level == EXACT else f" (not exactly, but after {_TOLERANCE[found.level]})"
    where = _where(line_numbers(haystack, found.spans), more=found.count > len(found.spans))
    return (f"{label} occurs {found.count} times in {path}{how}, {where}; it must occur exactly once. "
            "Include more surrounding lines to make it unique.")


def _where(lines: list[int], more: bool) -> str:
    """`at lines 2, 4` / `at line 1 (twice)` / `at lines 1 (3 times), 5, ...`: each line named once, with how
    often it holds a match (two matches can share a line), `...` when more matches were not kept."""
    counts = Counter(lines)  # insertion order: the lines in the file's order
    named = [str(line) if n == 1 else f"{line} ({'twice' if n == 2 else f'{n} times'})" for line, n in counts.items()]
    return f"at line{'s' if len(counts) > 1 else ''} " + ", ".join(named) + (", ..." if more else "")


def _check_overlaps(spans: list[tuple[tuple[int, int], int]], path: str) -> None:
    for (previous, i), (current, j) in zip(spans, spans[1:]):
        if current[0] < previous[1]:
            first, second = sorted((i, j))
            raise ToolError(f"edits[{first}] and edits[{second}] overlap in {path}; merge them into one edit.")


def _find_all(text: str, needle: str):
    """Start indices of `needle` in `text`, not overlapping."""
    step = len(needle)
    index = text.find(needle)
    while index >= 0:
        yield index
        index = text.find(needle, index + step)
