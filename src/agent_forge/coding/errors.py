"""Exceptions of the coding layer, in one module that imports nothing of `agent_forge`, so any coding module
(and the layers above) can raise or catch them without importing the session hub.

Only `CommandError` reaches clients as is (an RPC error response, a CLI message): the others are caught
where a command turns them into one, or into an event field (`compaction_end.errorMessage`).

    CommandError             a command was rejected before it changed anything; shown to the client as is
    ├── BusyError            a prompt without a streaming behaviour while the session works (worded for RPC)
    └── AbortedError         an `abort` stopped the command's model work (a compaction, a branch summary)
    SessionFileError         a session file cannot be read or written (`reason`: the OS's words; `detail`)
    └── SessionLockError     another process, or session of this one, holds the file's lock (`session_path`, `pid`)
    SessionDirError          (an OSError) a session directory is not one and cannot be made one
    CompactionError          a compaction cannot be done; the message is `compaction_end.errorMessage`
    ExportError              `export_html` cannot read the session or write the file
    AuthFileError            `auth.json` exists but cannot be read or parsed
    ConfigFileError          a JSON configuration file cannot be used (`str()`: the reason, no path)
    UnsafeFileError          (an OSError) a path that is not a regular file, or too large
    TrustFileError           `trust.json` cannot be read or written
    FrontmatterError         (a ValueError) frontmatter that is not closed or not understood
    ToolSelectionError       (a ValueError) a `--tools` list that cannot be used
    ExternalSearchError      rg or fd failed; the message is its stderr

Every module imports them from here (this is their one place; nothing re-exports them).
"""

from __future__ import annotations

import os
from pathlib import Path


class CommandError(Exception):
    """A command was rejected before it changed anything; the message is shown to the client as is."""


class BusyError(CommandError):
    """A prompt came without `streamingBehavior` while a run, a compaction or a branch summary goes on: the
    documented RPC refusal (`Agent is already processing...`). Front ends for people word it themselves."""


class AbortedError(CommandError):
    """An `abort` stopped the model work a command waited on (`compact`, a branch-summarising tree move) before
    it changed anything; the message says which (`Compaction aborted`, `Branch summary aborted`). Front ends
    that word an abort themselves catch this type."""


class SessionFileError(Exception):
    """A session file cannot be read (missing, unreadable, empty, no valid header) or written. `reason`: the
    OS's words when the OS refused (`No space left on device`), else None. `detail`: why a file cannot be read,
    without its path (`it is empty`, `Too many levels of symbolic links`), for messages that name the path
    themselves (`skipped session file <path>: <detail>`); else None."""

    def __init__(self, message: str, reason: str | None = None, *, detail: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.detail = detail


class NoSessionMatch(SessionFileError):
    """No session file has the (partial) session id asked for (`listing.resolve_session`)."""


class SessionLockError(SessionFileError):
    """Another process (or another session of this process: `lock_holder`) holds the session file's lock. `pid` is the holder's pid (None if unknown)."""

    def __init__(self, session_path: Path, pid: int | None, message: str | None = None) -> None:
        from .paths import path_text  # here, not at the top: this module imports nothing of ours

        super().__init__(message or f"Session file is {lock_holder(pid)}: {path_text(session_path)}")
        self.session_path = session_path
        self.pid = pid


def lock_holder(pid: int | None) -> str:
    """Who holds a session lock, as "Session file is ..." goes on: another process (its pid, or "pid
    unknown"), or this one (a second session of one program opening the same file: only closing the first
    frees it)."""
    if pid == os.getpid():
        return f"already open in this process (pid {pid}): close the session that has it open first"
    return f"in use by another agent-forge process ({f'pid {pid}' if pid is not None else 'pid unknown'})"


class SessionDirError(OSError):
    """The directory of a session file is not a directory and cannot be made one."""


class CompactionError(Exception):
    """The compaction cannot be done; the message is shown to the user (`compaction_end.errorMessage`)."""


class ExportError(Exception):
    """The session cannot be exported (in memory, no messages, unreadable) or the file cannot be written;
    the message is meant for the user as is."""


class AuthFileError(Exception):
    """`auth.json` exists but cannot be read or parsed; the message names the path."""


class ConfigFileError(Exception):
    """A JSON configuration file that cannot be used; `str()` is the reason without the path, e.g.
    `invalid JSON at line 3 column 5: Expecting value` or `larger than 1 MB (the limit for configuration
    files)`."""


class UnsafeFileError(OSError):
    """The path exists but is not a regular file, or is larger than the limit; `str()` says which."""


class TrustFileError(Exception):
    """`trust.json` cannot be read or written; the message names the file."""


class FrontmatterError(ValueError):
    """The frontmatter is not closed or has a line this parser does not understand; the message says which."""


class ToolSelectionError(ValueError):
    """A `--tools` list that cannot be used (plain names mixed with `+`/`-` entries, an empty entry)."""


class ExternalSearchError(Exception):
    """The program failed (exit status 2 or more for rg, non-zero for fd); the message is its stderr."""
