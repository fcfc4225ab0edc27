"""Getting a store's lines into its file, in order, whatever the OS does meanwhile.

A write the OS refuses (a full disk) never leaves a hole: the line is kept, in memory, with every later one, in
order, and they are all written, oldest first, by the next write that succeeds (see `SessionWriter.error`). A
new session holds its lines back until its first `message` entry; an old-version file is rewritten whole before
the first append; a file deleted, replaced, truncated or appended to by another process while in use is written
again whole at its path. The single-writer
lock is taken when the file is first written. The bytes themselves are written by `session_durable.SessionFile`.
"""

# No `from __future__ import annotations` here: the TypedDicts' field types stay objects; held as text, typing
# would compile each one at import (a `ForwardRef`), and the first `compile` of a process costs ~1.5 ms (issue 15).
from collections.abc import Callable
from pathlib import Path
from typing import TypedDict

from ..paths import path_text
from .durable import SessionFile, ensure_session_dir, write_new_private
from ..errors import SessionFileError, SessionLockError, lock_holder
from .lock import SessionLock

WholeFile = Callable[[], tuple[bytes, int]]
"""The store's whole file (header and every entry, encoded) and its entry count: what a rewrite writes."""


class SessionWriteState(TypedDict):
    """Why a session's entries are not all on disk: `get_state.sessionWriteError` and the `session_write_error`
    event (docs/rpc.md). `error`: the OS reason (`No space left on device`); `pendingEntries`: entries kept in
    memory, in order, until a write succeeds."""

    path: str
    error: str
    pendingEntries: int


class SessionWriter:
    """The pending lines, the lock and the write outcome of one session file.

    `notify(previous)` is called after `error` changed (a write failed, failed differently, or succeeded after
    failing), with the error before the change.
    """

    def __init__(self, path: Path, header_line: bytes, whole_file: WholeFile,
                 notify: Callable[[str | None], None], *, exists: bool, needs_newline: bool, fsync: bool,
                 torn_at: int | None, migrated_from: int | None, lock: SessionLock | bool,
                 size: int | None = None) -> None:
        """`lock`: a held lock to keep, or True to take one when the file is first written; `size`: the
        existing file's size in bytes when it was read (a change before the first append is then noticed)."""
        self.path = path
        self._header_line = header_line
        self._file = SessionFile(path, exists=exists, needs_newline=needs_newline, fsync=fsync, torn_at=torn_at,
                                 size=size)
        self._whole_file = whole_file
        self._notify = notify
        self._lock: SessionLock | None = lock if isinstance(lock, SessionLock) else None
        self._wants_lock = lock is True
        self.id_lock: SessionLock | None = None
        """`--session-id` before the file exists (`SessionStore.create`): released by `close`."""
        self._migrated_from = migrated_from  # the file still holds this older version: rewrite before appending
        # Encoded lines not yet in the file, oldest first: always those of the store's last len(...) entries.
        self._unwritten: list[bytes] = []
        self._file_due = False  # a message was appended: the file must exist
        self.error: str | None = None
        """The OS error of the last failed write, until one succeeds; None when every line is written."""
        # How the path stopped naming our file (`SessionFile.lost`), until the file is written again there: no
        # entry is on disk meanwhile, whatever the path names later.
        self._lost_how: str | None = None

    @property
    def exists(self) -> bool:
        """True once the file holds the header."""
        return self._file.exists

    def pending(self, entry_count: int) -> int:
        """Entries of `entry_count` not on disk: those waiting after a failed write, or all of them while the
        file is lost (deleted, replaced, unreachable) and not yet written again."""
        return entry_count if self._lost_how is not None else len(self._unwritten)

    def add(self, lines: list[bytes], *, starts_file: bool) -> None:
        """Write `lines` (of the entries just added) after any still waiting, or hold them back while a new
        session has had no entry that starts its file yet (`starts_file`: `FILE_STARTING_ENTRIES`)."""
        self._unwritten.extend(lines)
        self._file_due = self._file_due or starts_file
        if self._file.exists or self._file_due:
            self.write_waiting()

    def flush(self) -> bool:
        """Write the lines a failed write left waiting; True when none is left."""
        return True if self.error is None else self.write_waiting()

    def write_waiting(self) -> bool:
        """Write the waiting lines in order, as far as the OS lets us; record the outcome (`error`)."""
        written, error = 0, None
        try:
            written = self._write_whole_if_needed()
            for line in self._unwritten[written:]:
                self._file.append(line)  # one line at a time: a nearly full disk still takes what fits
                written += 1
        except SessionFileError as exc:
            error = exc.reason or str(exc)
        except OSError as exc:  # the session directory cannot be made (SessionDirError names it)
            error = exc.strerror or str(exc)
        del self._unwritten[:written]
        self._record(error)
        return error is None

    def _write_whole_if_needed(self) -> int:
        """Write the whole file when it must be (new, old version, lost); returns the waiting lines it held."""
        if not self._file.exists:
            self._take_lock()
            self._file.create(b"".join([self._header_line, *self._unwritten]))
        elif self._migrated_from is not None:
            self._rewrite_migrated()
        elif (how := self._lost_how or self._file.lost()) is not None:
            self._recreate(how)
        else:
            return 0
        self._hold_inode()
        return len(self._unwritten)

    def take_lock(self) -> SessionLock | None:
        """Hand the held lock over (to a store reopening this file); `close` no longer releases it."""
        lock, self._lock = self._lock, None
        return lock

    def close(self) -> None:
        """Try once more to write what waits, then release the descriptor and the locks. Idempotent."""
        self.flush()
        self._file.close()
        for lock in (self._lock, self.id_lock):
            if lock is not None:
                lock.release()
        self._lock = self.id_lock = None

    def rescue(self, data: bytes) -> Path | None:
        """After `close` left lines unwritten: write `data` (the whole session) to a new `<file>.recovered-<UTC
        time>.jsonl` beside it, else in the temp dir (`-2`, `-3`, ... before `.jsonl` when a copy of that second
        is there: two processes may rescue one file in one second); returns its path, or None when nothing waits
        or neither place can be written."""
        if self.error is None:
            return None
        import tempfile
        import time

        stem = f"{self.path.name}.recovered-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"
        for directory in (self.path.parent, Path(tempfile.gettempdir())):
            written = _write_unique(directory, stem, data)
            if written is not None:
                return written
        return None

    def _record(self, error: str | None) -> None:
        previous, self.error = self.error, error
        if error != previous:
            self._notify(previous)

    def _hold_inode(self) -> None:
        """Lock the new inode of a file just written whole (see `SessionLock.hold_inode`); nobody else can hold
        a file this process has just created."""
        if self._lock is not None:
            try:
                self._lock.hold_inode()
            except SessionLockError:
                pass

    def _take_lock(self) -> None:
        if self._wants_lock and self._lock is None:
            ensure_session_dir(self.path.parent)  # a FIFO or a loop there is named, not `File exists`
            self._lock = SessionLock.acquire(self.path)

    def _recreate(self, how: str) -> None:
        """The path no longer names the file as this process left it (deleted, replaced, unreachable,
        truncated, appended to: `SessionFile.lost`): write it again at its path with the header and every
        entry, so nothing is lost. Success is reported as a `session_write_error` naming what happened, then
        `session_write_resumed`; a failure raises SessionFileError with one message per cause (it is retried,
        and reported again only when the cause changes). A non-empty regular file that replaced it is kept as
        `<file>.replaced.bak`, one changed in place as `<file>.changed.bak`, or the first free numbered name
        (`<file>.changed.1.bak`, ...: an earlier backup is never overwritten); the message names it."""
        self._lost_how = how
        backup = self._backup_path(how)
        data, count = self._whole_file()
        try:
            kept = self._file.recreate(data, backup)
        except SessionFileError as exc:
            raise SessionFileError(f"the session file was {how} while in use and cannot be written again: "
                                   f"{exc.reason or exc}") from None
        self._lost_how = None
        self._record(f"the session file was {how} while in use; it is written again with "
                     f"{'its 1 entry' if count == 1 else f'all {count} entries'}"
                     + (f" (what was there is kept as {kept})" if kept is not None else ""))

    def _backup_path(self, how: str) -> Path | None:
        """Where `_recreate` keeps the foreign file for `how` (None: a deleted or unreachable one)."""
        if how.startswith("replaced by another"):
            return self.path.with_name(f"{self.path.name}.replaced.bak")
        if how.startswith(("truncated", "appended", "overwritten")):
            return self.path.with_name(f"{self.path.name}.changed.bak")
        return None

    def _rewrite_migrated(self) -> None:
        """Replace an old-version file by its migrated content before the first append: appending new-format
        lines to an old file would make the next load migrate them again (new ids, broken parent links)."""
        backup = self.path.with_name(f"{self.path.name}.v{self._migrated_from}.bak")
        self._file.replace(self._whole_file()[0], backup)
        self._migrated_from = None


def lock_session_id(directory: Path, session_id: str) -> SessionLock | None:
    """The lock of `session_id` in `directory`; None when no lock file can be made there (the session file
    cannot be written either: that is reported by the first write). Raises SessionLockError when held."""
    try:
        ensure_session_dir(directory)
        return SessionLock.acquire(directory / f"{session_id}.id")
    except SessionLockError as exc:
        raise SessionLockError(directory / f"{session_id}.id", exc.pid,
                               f"Session id {session_id} is {lock_holder(exc.pid)} (in {path_text(directory)})"
                               ) from None
    except (SessionFileError, OSError):
        return None


RESCUE_NAMES = 100
"""Names `rescue` tries in one directory (`<stem>.jsonl`, `<stem>-2.jsonl`, ...) before it takes the next one."""


def _write_unique(directory: Path, stem: str, data: bytes) -> Path | None:
    """`data` in the first of `<stem>.jsonl`, `<stem>-2.jsonl`, ... of `directory` that does not exist yet; None
    when it cannot be written there (any other error, or every name taken)."""
    for number in range(1, RESCUE_NAMES + 1):
        target = directory / f"{stem}{'' if number == 1 else f'-{number}'}.jsonl"
        try:
            write_new_private(target, data)
            return target
        except FileExistsError:
            continue
        except OSError:
            return None
    return None
