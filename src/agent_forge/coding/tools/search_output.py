"""Shared output handling of the `grep`, `find` and `ls` tools: long-line shortening, the 50 KB cap and the
notices telling the model how to see more (limits as in the reference agent's search tools)."""

from __future__ import annotations

import os
import stat
import sys

from ...agent.types import ToolError
from ..paths import path_text
from ..safe_read import examine
from .ignore_walk import listing_refusal
from .truncate import DEFAULT_MAX_BYTES, append_notice, format_size, truncate_head

MAX_LINE_CHARS = 500
"""A grep output line longer than this is shortened; the model reads the file for the whole line."""

_NO_LINE_LIMIT = sys.maxsize  # these tools cap entries by count and the output by bytes, not by lines


def search_root(path: str) -> os.stat_result:
    """The stat of the path `grep` or `find` starts at. Raises `ToolError` "Path not found: P" when nothing is
    there, and `cannot_search` for one the OS will not examine (a link loop is no missing path) or a directory it
    will not list (no read permission: no entry could match)."""
    info = examine(path)
    if info is None:
        raise ToolError(f"Path not found: {path_text(path)}")
    if isinstance(info, OSError):
        raise cannot_search(path, info)
    refusal = listing_refusal(path) if stat.S_ISDIR(info.st_mode) else None
    if refusal is not None:
        raise cannot_search(path, refusal)
    return info


def cannot_search(path: str, exc: OSError) -> ToolError:
    """The error for a start path the OS refused: "Cannot search P: <OS reason>"."""
    return ToolError(f"Cannot search {path_text(path)}: {exc.strerror or exc}")


def shorten_line(text: str) -> tuple[str, bool]:
    """`(text, was_shortened)`: at most `MAX_LINE_CHARS` characters, with a marker when cut."""
    if len(text) <= MAX_LINE_CHARS:
        return text, False
    return text[:MAX_LINE_CHARS] + "… [line truncated]", True


def finish(lines: list[str], notices: list[str], details: dict[str, object]) -> tuple[str, dict[str, object]]:
    """Join `lines`, cut the text at 50 KB (whole lines), and append `notices` plus a byte-limit notice in one
    bracketed note. `details` gains `truncation` when the byte cap applied. Returns `(text, details)`."""
    cut = truncate_head("\n".join(lines), _NO_LINE_LIMIT, DEFAULT_MAX_BYTES)
    notes = list(notices)
    if cut["truncated"]:
        details["truncation"] = cut
        notes.append(f"Output cut at {format_size(DEFAULT_MAX_BYTES)}")
    text = cut["content"].rstrip("\n")
    return (append_notice(text, "[" + ". ".join(notes) + ".]") if notes else text), details


MAX_NAMED_SKIPS = 5
"""Skipped files or directories named in a search result; the rest are counted (a tree of 10,000 unreadable
files must not fill the output)."""


def skip_notices(unreadable: list[str], unlisted: list[str]) -> list[str]:
    """Notices for the files a search could not read and the directories it could not list (each given as
    `<relative path> (<the OS's reason>)`): `"2 files could not be read: a (Permission denied), b (...)"`, the
    first `MAX_NAMED_SKIPS` named and the rest counted."""
    notices = []
    if unreadable:
        notices.append(_skipped(unreadable, "file" if len(unreadable) == 1 else "files", "could not be read"))
    if unlisted:
        noun = "directory" if len(unlisted) == 1 else "directories"
        notices.append(_skipped(unlisted, noun, "could not be listed (skipped)"))
    return notices


def _skipped(names: list[str], noun: str, what: str) -> str:
    """`names` sorted, so that the notice is the same whichever order the engine met them in (rg and fd walk
    in parallel threads)."""
    names = sorted(names)
    shown = ", ".join(names[:MAX_NAMED_SKIPS])
    more = len(names) - MAX_NAMED_SKIPS
    return f"{len(names)} {noun} {what}: {shown}" + (f" and {more} more" if more > 0 else "")
