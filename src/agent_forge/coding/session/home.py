"""Where a resumed session works: the directory recorded in its header, and sessions of other directories.

The reference CLI (`cli.md`, `--session`): a session opened by path or id "resumes it in its working directory";
an id that only matches sessions stored for another directory is not opened in the current one.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Callable

from ...lazy_re import LazyPattern
from ..paths import path_text
from ...records import Record
from ..errors import SessionFileError
from ..safe_read import examine, found_text
from .reading import read_header


SESSION_ID = LazyPattern(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?\Z")
"""`--session-id` values (reference `cli.md`): letters, digits, `.`, `_`, `-`; a letter or digit at both ends."""

SESSION_ID_MAX = 128
"""Longest `--session-id`: the id is part of the file name `<24-char time>_<id>.jsonl` and of its backups
(`<name>.<time>.compact.bak`, 68 characters beyond the id), which must stay within the usual 255-byte name limit
of file systems; 128 leaves room."""


class ResumeDirectory(Record, frozen=True):
    """`cwd`: the directory to work in (the session's, or the current one when the session's is gone);
    `notice`: one line for stderr when that is not simply the current directory, else None."""

    cwd: str
    notice: str | None = None


def resume_directory(session_file: Path, cwd: str) -> ResumeDirectory:
    """The working directory for resuming `session_file` from `cwd`: the header's `cwd` when it names an
    existing directory other than `cwd`; `cwd` (with a notice saying so) when it names one that is gone. A file
    whose header cannot be read is left to the session loader to report."""
    try:
        recorded = read_header(session_file).get("cwd")
    except SessionFileError:
        return ResumeDirectory(cwd)
    if not isinstance(recorded, str) or not recorded or _same_dir(recorded, cwd):
        return ResumeDirectory(cwd)
    found = examine(recorded)  # a link loop or no permission is not "no longer exists"
    if isinstance(found, os.stat_result) and stat.S_ISDIR(found.st_mode):
        return ResumeDirectory(recorded, f"resuming in the session's directory {path_text(recorded)} "
                                         f"(not the current directory {path_text(cwd)})")
    gone = "no longer exists" if found is None else found_text(found)
    return ResumeDirectory(cwd, f"the session's directory {path_text(recorded)} {gone}; working in the "
                                f"current directory {path_text(cwd)} instead")


def _same_dir(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def sessions_elsewhere(reference: str, session_dir: str | os.PathLike[str] | None = None,
                       limit: int = 5, *, on_skip: Callable[[str], None] | None = None) -> list[Path]:
    """Session files of any directory whose session id is `reference` (case-insensitive), else those it
    prefixes, at most `limit`: to tell a user whose `--session <id>` matched nothing in the current directory
    where it is. `on_skip` hears the OS's reason for a sessions directory that cannot be listed."""
    from .listing import all_session_files, id_matches

    wanted = reference.strip().lower()
    return sorted(id_matches(wanted, all_session_files(session_dir, on_skip=on_skip))[0])[:limit] if wanted else []


def _session_id(path: Path) -> str:
    try:
        return read_header(path)["id"]
    except (SessionFileError, KeyError, TypeError):
        return ""


def session_with_id(session_id: str, cwd: str, session_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """The session file of `cwd` whose header id is exactly `session_id` (`--session-id`), or None. Raises
    SessionFileError (`open_for_reading`'s message) when no readable file has that id but one named for it
    (`*_<id>.jsonl`) cannot be read (a symlink loop, a FIFO): a second file with that id would hide it."""
    from .listing import session_cwd_dir

    try:
        candidates = sorted(session_cwd_dir(cwd, session_dir).glob("*.jsonl"))
    except OSError:
        return None
    found = next((path for path in candidates if _session_id(path) == session_id), None)
    if found is None:
        for path in candidates:
            if path.name.endswith(f"_{session_id}.jsonl"):
                read_header(path)  # raises when it cannot be read; a readable one holds another id
    return found
