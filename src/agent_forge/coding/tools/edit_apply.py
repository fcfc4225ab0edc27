"""Applying exact-text replacements to a file's content while keeping its line endings byte for byte.

Matching happens on a copy with CRLF turned into LF, so `oldText` works whatever line endings the model
used; the replacements are then spliced into the original text, so lines the edits do not touch keep their
exact endings (also in files that mix CRLF and LF). Replacement text takes the file's dominant line ending.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from ...agent.types import ToolError


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


def apply_replacements(content: str, edits: list[Replacement], path: str) -> str:
    """`content` with every edit applied, all matched against the original (not one after another).

    Raises `ToolError` when an `oldText` is empty, missing, not unique, or when two edits overlap.
    """
    view = _Endings(content)
    spans = sorted((_locate(view.normalised, edit, i, len(edits), path), i) for i, edit in enumerate(edits))
    _check_overlaps(spans, path)
    pieces, cursor = [], 0
    for (start, end), i in spans:
        pieces.append(content[cursor:view.to_original(start)])
        pieces.append(normalise_newlines(edits[i].new_text).replace("\n", view.newline))
        cursor = view.to_original(end)
    pieces.append(content[cursor:])
    return "".join(pieces)


def normalise_newlines(text: str) -> str:
    """`text` with CRLF turned into LF."""
    return text.replace("\r\n", "\n")


def _locate(haystack: str, edit: Replacement, index: int, count: int, path: str) -> tuple[int, int]:
    label = "oldText" if count == 1 else f"edits[{index}].oldText"
    needle = normalise_newlines(edit.old_text)
    if not needle:
        raise ToolError(f"{label} must not be empty.")
    start = haystack.find(needle)
    if start < 0:
        raise ToolError(f"Could not find {label} in {path}. It must match the file exactly, including "
                        "whitespace and line breaks; re-read the file and copy the text from it.")
    if haystack.find(needle, start + 1) >= 0:
        occurrences = sum(1 for _ in _find_all(haystack, needle, overlapping=True))
        raise ToolError(f"{label} occurs {occurrences} times in {path}; it must occur exactly once. "
                        "Include more surrounding lines to make it unique.")
    return start, start + len(needle)


def _check_overlaps(spans: list[tuple[tuple[int, int], int]], path: str) -> None:
    for (previous, i), (current, j) in zip(spans, spans[1:]):
        if current[0] < previous[1]:
            first, second = sorted((i, j))
            raise ToolError(f"edits[{first}] and edits[{second}] overlap in {path}; merge them into one edit.")


def _find_all(text: str, needle: str, *, overlapping: bool = False):
    """Start indices of `needle` in `text`."""
    step = 1 if overlapping else len(needle)
    index = text.find(needle)
    while index >= 0:
        yield index
        index = text.find(needle, index + step)
