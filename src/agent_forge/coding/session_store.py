"""The session store: one session's append-only tree of entries, its active leaf, and its file.

Entry shapes are in `session_entries.py`, the file's bytes and their crash safety in `session_file.py`, old
versions in `session_migrations.py`, the single-writer lock in `session_lock.py`, context building in
`session_context.py`, locations and listings in `session_listing.py` (names re-exported here).

A store is not thread-safe: one owner (the session hub) appends to it.

A write the OS refuses (a full disk) never leaves a hole: the entry is kept, in memory, with every later one, in
order, and they are all written, oldest first, by the next append or `flush` that succeeds (see `write_error`).

A store works on the real path of its file (symlinks resolved when it is opened or created), so the lock,
a migration rewrite and its backup all concern the file itself, whichever link it was reached by.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Callable, TypedDict

from .session_context import SessionContext, build_context
from .session_entries import AgentMessage, SessionEntry, SessionHeader, make_entry, make_header, new_entry_id
from .session_file import SessionFile, SessionFileError, encode_line, ensure_session_dir, read_session
from .session_listing import (
    SessionInfo,
    encode_cwd,
    find_most_recent,
    list_sessions,
    message_text,
    session_cwd_dir,
    session_file_name,
)
from .session_lock import SessionLock, SessionLockError

__all__ = [
    "SessionContext", "SessionFileError", "SessionInfo", "SessionLockError", "SessionStore", "SessionWriteState",
    "encode_cwd",
    "find_most_recent", "list_sessions", "message_text", "session_cwd_dir", "session_file_name",
]


class SessionWriteState(TypedDict):
    """Why a session's entries are not all on disk: `get_state.sessionWriteError` and the `session_write_error`
    event (docs/rpc.md). `error`: the OS reason (`No space left on device`); `pendingEntries`: entries kept in
    memory, in order, until a write succeeds."""

    path: str
    error: str
    pendingEntries: int


class SessionStore:
    """One session: its header, its entries in append order, and the current leaf of the tree.

    Build one with `create` (new file, written lazily), `open` (existing file) or `in_memory` (no file).
    Append methods return the new entry dict; its `parentId` is the previous leaf and it becomes the leaf.
    Appends raise TypeError/ValueError when a field is not JSON-serialisable (nothing is added). A disk write
    that fails does not raise: the entry is added and kept unwritten (see `write_error`, `on_write_state`).
    """

    def __init__(self, header: SessionHeader, path: Path | None, entries: Iterable[SessionEntry] = (), *,
                 on_disk: bool = False, needs_newline: bool = False, fsync: bool = False,
                 migrated_from: int | None = None, lock: SessionLock | bool = False,
                 torn_at: int | None = None) -> None:
        """Prefer the `create`/`open`/`in_memory` constructors; this one trusts its arguments. `lock`: a held
        lock to keep, or True to take one when the file is first written."""
        self._header = header
        self._path = path
        self._file = None if path is None else SessionFile(path, exists=on_disk, needs_newline=needs_newline,
                                                           fsync=fsync, torn_at=torn_at)
        self._lock: SessionLock | None = lock if isinstance(lock, SessionLock) else None
        self._wants_lock = lock is True
        self._id_lock: SessionLock | None = None  # `--session-id` before the file exists: see `create`
        self._migrated_from = migrated_from  # the file still holds this older version: rewrite before appending
        self._entries: list[SessionEntry] = list(entries)
        self._position: dict[str, int] = {entry["id"]: i for i, entry in enumerate(self._entries)}
        self._leaf_id: str | None = self._entries[-1]["id"] if self._entries else None
        # Encoded lines not yet in the file, oldest first: always those of the last len(...) entries. A new
        # session holds them back until its first message; after a failed write they wait for the next one.
        self._unwritten: list[bytes] = []
        self._file_due = False  # a message was appended: the file must exist
        self._write_failure: str | None = None  # the OS error of the last failed write, until one succeeds
        # How the path stopped naming our file (`SessionFile.lost`), until the file is written again there: no
        # entry is on disk meanwhile, whatever the path names later.
        self._lost_how: str | None = None
        self.released = False
        """True once `close` ran: what it could not write has been reported (once) by its owner."""
        self.on_write_state: Callable[[str | None], None] | None = None
        """Called with the previous error after `write_error` changed (a write failed, failed differently, or
        succeeded after failing); set by the session hub, which tells the client."""
        # The active branch and its context, kept while appends extend the leaf: entries never change, so a
        # branch is fixed by its leaf, and get_state/prompts need not walk 50,000 parents each time.
        self._branch: list[SessionEntry] | None = None if self._entries else []
        self._context: tuple[str | None, SessionContext] | None = None
        self.load_warnings: list[str] = []
        """What opening the file left out (damaged lines, by `path:line`), for stderr; empty when nothing."""
        self.no_session = path is None
        """True when the process runs with `--no-session`: sessions started from this one (`new_session`, fork,
        clone) stay in memory, also after `switch_session` made a file the current session (see
        `session_switch.successor_store`)."""

    # constructors

    @classmethod
    def create(cls, cwd: str | os.PathLike[str], session_dir: str | os.PathLike[str] | None = None, *,
               parent_session: str | os.PathLike[str] | None = None, fsync: bool = False, lock: bool = False,
               entries: Iterable[SessionEntry] = (), session_id: str | None = None) -> SessionStore:
        """A new session for `cwd` (made absolute). Its path is fixed now; the file is written, with the header
        and every entry so far, once it holds a `message` entry. `session_dir` is the sessions root (see
        `session_cwd_dir`); `parent_session` is recorded in the header; `fsync` syncs every append; `lock`
        takes the single-writer lock when the file is written. `entries` (a fork or clone: root first, ids
        kept) start the session; when they hold a message the file is written now (or they wait, see
        `write_error`). `session_id` (`--session-id`) replaces the fresh uuid; with `lock` that id is locked at
        once (`<dir>/<id>.id.lock`), so a second process starting the same id before this one has written its
        file is refused (SessionLockError) instead of making a second file with that id."""
        cwd_text = os.path.abspath(os.fspath(cwd))
        parent = os.fspath(parent_session) if parent_session is not None else None
        header = make_header(cwd_text, parent_session=parent, session_id=session_id)
        directory = Path(os.path.realpath(session_cwd_dir(cwd_text, session_dir)))
        store = cls(header, directory / session_file_name(header), fsync=fsync, lock=lock)
        if lock and session_id is not None:
            store._id_lock = _lock_session_id(directory, session_id)
        store._seed(entries)
        return store

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, fsync: bool = False,
             lock: SessionLock | bool = False) -> SessionStore:
        """Load an existing session file; the leaf is its last entry.

        Lines that are not JSON objects (a torn last line after a crash, garbage) are skipped; damaged ones are
        named in `load_warnings` and do not cut the chain (`session_file.read_session`). Versions 1 and 2
        are migrated in memory; the file is rewritten (atomically, original kept as `<file>.v<N>.bak`) before
        the first append. `lock=True` takes the single-writer lock first (SessionLockError when another
        process holds it); a SessionLock passes one already held for this file. Raises SessionFileError when
        the file is missing, unreadable, empty, has no valid header or an unsupported version.
        `path` may be a symlink: the store's `path` is the real file.
        """
        file_path = Path(os.path.realpath(path))
        if lock is True and not file_path.is_file():
            read_session(file_path)  # raises the precise error (missing, a directory, ...) before locking
        held = SessionLock.acquire(file_path) if lock is True else (lock or None)
        try:
            if lock is True and held is not None:
                held.hold_inode()  # a hard link of a file another process holds is refused too
            parsed = read_session(file_path)
        except SessionFileError:
            if lock is True and held is not None:
                held.release()
            raise
        store = cls(parsed.header, file_path, parsed.entries, on_disk=True, needs_newline=parsed.torn_tail,
                    fsync=fsync, migrated_from=parsed.migrated_from, lock=held or False,
                    torn_at=parsed.complete_size if parsed.torn_tail else None)
        store.load_warnings = _skipped_warnings(file_path, parsed.skipped_lines)
        return store

    @classmethod
    def in_memory(cls, cwd: str | os.PathLike[str], *, entries: Iterable[SessionEntry] = (),
                  session_id: str | None = None) -> SessionStore:
        """A session that never touches the disk (`path` is None): `--no-session`."""
        store = cls(make_header(os.path.abspath(os.fspath(cwd)), session_id=session_id), None)
        store._seed(entries)
        return store

    # reading

    @property
    def path(self) -> Path | None:
        """The session file (it may not exist yet, see `create`); None for an in-memory session."""
        return self._path

    @property
    def on_disk(self) -> bool:
        """True once the file holds the header (always for an opened session)."""
        return self._file is not None and self._file.exists

    @property
    def session_id(self) -> str:
        return self._header["id"]

    @property
    def cwd(self) -> str:
        return self._header["cwd"]

    @property
    def header(self) -> SessionHeader:
        """A copy of the header line."""
        return dict(self._header)  # type: ignore[return-value]

    @property
    def entries(self) -> list[SessionEntry]:
        """Every entry in append order, header excluded (a new list of the stored dicts)."""
        return list(self._entries)

    @property
    def entry_count(self) -> int:
        return len(self._entries)

    @property
    def leaf_id(self) -> str | None:
        """Id of the current leaf, None for an empty session or after `set_leaf(None)`."""
        return self._leaf_id

    def get_entry(self, entry_id: str) -> SessionEntry | None:
        position = self._position.get(entry_id) if isinstance(entry_id, str) else None
        return None if position is None else self._entries[position]

    def entries_since(self, entry_id: str) -> list[SessionEntry]:
        """Entries appended strictly after `entry_id`, in O(new entries). Raises ValueError for an unknown id."""
        return self._entries[self._require(entry_id) + 1 :]

    def branch(self, from_id: str | None = None) -> list[SessionEntry]:
        """Entries root → `from_id` (default: the leaf) following `parentId`. Raises ValueError for an unknown
        id. The walk stops at a missing parent, and at a parent cycle (only a hand-edited file has one), which
        starts at its earliest entry in append order: the entry `session_tree.build_tree` makes a root."""
        if from_id is not None:
            self._require(from_id)
        elif self._branch is not None:
            return list(self._branch)
        path: list[SessionEntry] = []
        seen: dict[str, int] = {}  # id -> its index in `path` (leaf first)
        current = self._leaf_id if from_id is None else from_id
        while isinstance(current, str) and current in self._position:
            if current in seen:
                path = path[: self._cycle_start(path, seen[current]) + 1]
                break
            seen[current] = len(path)
            entry = self._entries[self._position[current]]
            path.append(entry)
            current = entry.get("parentId")
        path.reverse()
        if from_id is None:
            self._branch = list(path)
        return path

    @property
    def session_name(self) -> str | None:
        """`name` of the latest `session_info` entry on the active branch; None when unset or cleared."""
        for entry in reversed(self.branch()):
            if entry["type"] == "session_info":
                name = entry.get("name")
                return name if isinstance(name, str) and name.strip() else None
        return None

    @property
    def write_error(self) -> SessionWriteState | None:
        """Why entries are waiting in memory (a write failed and none has succeeded since), else None."""
        if self._write_failure is None or self._path is None:
            return None
        return SessionWriteState(path=str(self._path), error=self._write_failure,
                                 pendingEntries=self.pending_entries)

    @property
    def pending_entries(self) -> int:
        """Entries not on disk: those waiting after a failed write, or every entry while the file is lost
        (deleted, replaced, unreachable) and not yet written again."""
        return len(self._entries) if self._lost_how is not None else len(self._unwritten)

    def build_context(self) -> SessionContext:
        """Messages, model, thinking level and context window of the active branch (see SessionContext).
        A fresh object each call (its list may be changed by the caller; the messages are shared)."""
        if self._context is None or self._context[0] != self._leaf_id:
            self._context = (self._leaf_id, build_context(self.branch()))
        context = self._context[1]
        return SessionContext(messages=list(context.messages), model=context.model,
                              thinking_level=context.thinking_level, context_window=context.context_window)

    # writing

    def append_message(self, message: AgentMessage) -> SessionEntry:
        """Append a `message` entry holding `message` (any AgentMessage dict); the first one creates the file."""
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise ValueError("a session message must be a dict with a string 'role'")
        return self.append_entry("message", message=message)

    def append_model_change(self, provider: str, model_id: str) -> SessionEntry:
        """Append `{"type": "model_change", "provider", "modelId"}`."""
        return self.append_entry("model_change", provider=provider, modelId=model_id)

    def append_thinking_level_change(self, level: str) -> SessionEntry:
        """Append `{"type": "thinking_level_change", "thinkingLevel"}`."""
        return self.append_entry("thinking_level_change", thinkingLevel=level)

    def append_entry(self, entry_type: str, /, **fields: Any) -> SessionEntry:
        """Append an entry of any type (`session_info`, `label`, `custom`, `compaction`, ...) with `fields` as
        its type-specific keys; returns a fresh dict equal to the line written (a snapshot of `fields`).
        Raises ValueError for an empty type, `session`, or a field named like a base field (`type`, `id`,
        `parentId`, `timestamp`)."""
        line = encode_line(make_entry(entry_type, new_entry_id(self._position), self._leaf_id, fields))
        # Keep what the file holds, not the caller's objects: they may be mutated later, and a reopened
        # session must equal this one.
        entry: SessionEntry = json.loads(line)
        self._index(entry)
        self._persist([line], starts_file=entry_type == "message")
        return entry

    def flush(self) -> bool:
        """Write the entries a failed write left in memory (oldest first); True when none is left waiting."""
        if self._write_failure is None:
            return True
        return self._write_unwritten()

    def set_leaf(self, entry_id: str | None) -> None:
        """Move the leaf (in memory only): the next entry becomes a child of `entry_id`, or a new root for None.
        Raises ValueError for an unknown id."""
        if entry_id is not None:
            self._require(entry_id)
        if entry_id != self._leaf_id:
            self._leaf_id = entry_id
            self._branch = [] if entry_id is None else None

    def take_lock(self) -> SessionLock | None:
        """Hand the held lock over (to a store reopening this file); this store no longer releases it."""
        lock, self._lock = self._lock, None
        return lock

    def close(self) -> None:
        """Try once more to write entries a failed write left waiting (they are lost when this fails too: see
        `write_error`), then release the file descriptor and the lock. Idempotent; a later append opens the
        file again."""
        self.flush()
        self.released = True
        if self._file is not None:
            self._file.close()
        if self._lock is not None:
            self._lock.release()
            self._lock = None
        if self._id_lock is not None:
            self._id_lock.release()
            self._id_lock = None

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SessionStore(id={self.session_id!r}, path={self._path!r}, entries={len(self._entries)})"

    # internals

    def _seed(self, entries: Iterable[SessionEntry]) -> None:
        """Start a new session with copies of `entries`; written at once when one of them is a message."""
        lines = []
        for entry in entries:
            copy = dict(entry)
            if not self._entries and copy.get("parentId") is not None:
                copy["parentId"] = None  # the copied path starts here
            lines.append(encode_line(copy))
            self._index(copy)  # type: ignore[arg-type]
        if lines:
            self._persist(lines, starts_file=any(e["type"] == "message" for e in self._entries))

    def _index(self, entry: SessionEntry) -> None:
        self._position[entry["id"]] = len(self._entries)
        self._entries.append(entry)
        if self._branch is not None and entry["parentId"] == self._leaf_id:
            self._branch.append(entry)  # the usual append: the branch grows by one
        else:
            self._branch = None  # recomputed on demand (loading a file, a parent elsewhere)
        self._leaf_id = entry["id"]

    def _cycle_start(self, path: list[SessionEntry], first: int) -> int:
        """Index in `path` (leaf first) of the earliest appended entry of the cycle `path[first:]`."""
        return min(range(first, len(path)), key=lambda index: self._position[path[index]["id"]])

    def _require(self, entry_id: str) -> int:
        position = self._position.get(entry_id) if isinstance(entry_id, str) else None
        if position is None:
            raise ValueError(f"no entry with id {entry_id!r} in session {self.session_id}")
        return position

    def _persist(self, lines: list[bytes], *, starts_file: bool) -> None:
        """Write the lines of the entries just indexed after any still waiting, or hold them back while a new
        session has had no message yet."""
        if self._file is None:
            return
        self._unwritten.extend(lines)
        self._file_due = self._file_due or starts_file
        if self._file.exists or self._file_due:
            self._write_unwritten()

    def _write_unwritten(self) -> bool:
        """Write the waiting lines in order, as far as the OS lets us; record the outcome (`write_error`)."""
        assert self._file is not None
        written, error = 0, None
        try:
            if not self._file.exists:
                self._take_lock()
                self._file.create(b"".join([encode_line(self._header), *self._unwritten]))  # type: ignore[arg-type]
                written = len(self._unwritten)
                self._hold_inode()
            elif self._migrated_from is not None:
                self._rewrite_migrated()  # writes every entry, the waiting ones included
                written = len(self._unwritten)
                self._hold_inode()
            elif (how := self._lost_how or self._file.lost()) is not None:
                self._recreate(how)  # writes every entry, the waiting ones included
                written = len(self._unwritten)
                self._hold_inode()
            for line in self._unwritten[written:]:
                self._file.append(line)  # one line at a time: a nearly full disk still takes what fits
                written += 1
        except SessionFileError as exc:
            error = exc.reason or str(exc)
        except OSError as exc:  # the session directory cannot be made (SessionDirError names it)
            error = exc.strerror or str(exc)
        del self._unwritten[:written]
        self._record_failure(error)
        return error is None

    def _record_failure(self, error: str | None) -> None:
        previous, self._write_failure = self._write_failure, error
        if error != previous and self.on_write_state is not None:
            self.on_write_state(previous)

    def _hold_inode(self) -> None:
        """Lock the new inode of a file just written whole (see `SessionLock.hold_inode`); nobody else can hold
        a file this process has just created."""
        if self._lock is not None:
            try:
                self._lock.hold_inode()
            except SessionLockError:
                pass

    def _take_lock(self) -> None:
        if self._wants_lock and self._lock is None and self._path is not None:
            ensure_session_dir(self._path.parent)  # a FIFO or a loop there is named, not `File exists`
            self._lock = SessionLock.acquire(self._path)

    def _recreate(self, how: str) -> None:
        """The path no longer names the file (deleted, replaced, unreachable: `SessionFile.lost`): write it
        again at its path with the header and every entry, so nothing is lost. Success is reported as a
        `session_write_error` naming what happened, then `session_write_resumed`; a failure raises
        SessionFileError with one message per cause (it is retried, and reported again only when the cause
        changes). A regular file that replaced it is kept as `<file>.replaced.bak`."""
        assert self._file is not None and self._path is not None
        self._lost_how = how
        backup = self._path.with_name(f"{self._path.name}.replaced.bak") if how.startswith("replaced") else None
        try:
            self._file.recreate(self._whole_file(), backup)
        except SessionFileError as exc:
            raise SessionFileError(f"the session file was {how} while in use and cannot be written again: "
                                   f"{exc.reason or exc}") from None
        self._lost_how = None
        self._record_failure(f"the session file was {how} while in use; it is written again with all "
                             f"{len(self._entries)} entries")

    def _whole_file(self) -> bytes:
        return b"".join([encode_line(self._header), *map(encode_line, self._entries)])  # type: ignore[arg-type]

    def rescue(self) -> Path | None:
        """After `close` left entries unwritten: write the whole session (header and every entry) to a new
        file `<file>.recovered-<UTC time>.jsonl` beside it, else in the temp dir; returns its path, or None
        when no entry waits or neither place can be written. The file opens like any session file."""
        if self._path is None or self._write_failure is None:
            return None
        import tempfile
        import time

        from .session_file import write_new_private

        name = f"{self._path.name}.recovered-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.jsonl"
        for directory in (self._path.parent, Path(tempfile.gettempdir())):
            try:
                write_new_private(directory / name, self._whole_file())
                return directory / name
            except OSError:
                continue
        return None

    def _rewrite_migrated(self) -> None:
        """Replace an old-version file by its migrated content before the first append: appending new-format
        lines to an old file would make the next load migrate them again (new ids, broken parent links)."""
        assert self._file is not None and self._path is not None
        self._file.replace(self._whole_file(), self._path.with_name(f"{self._path.name}.v{self._migrated_from}.bak"))
        self._migrated_from = None


def _skipped_warnings(path: Path, lines: list[int]) -> list[str]:
    """One warning naming the damaged lines `read_session` skipped (at most 10 locations), or none."""
    if not lines:
        return []
    where = ", ".join(f"{path}:{line}" for line in lines[:10]) + (", ..." if len(lines) > 10 else "")
    count = f"{len(lines)} damaged line{'s' if len(lines) != 1 else ''}"
    return [f"session file {path}: skipped {count} ({where}); the entries after a skipped line continue from "
            f"the entry before it"]


def _lock_session_id(directory: Path, session_id: str) -> SessionLock | None:
    """The lock of `session_id` in `directory`; None when no lock file can be made there (the session file
    cannot be written either: that is reported by the first write). Raises SessionLockError when held."""
    try:
        ensure_session_dir(directory)
        return SessionLock.acquire(directory / f"{session_id}.id")
    except SessionLockError as exc:
        holder = f"pid {exc.pid}" if exc.pid is not None else "pid unknown"
        raise SessionLockError(directory / f"{session_id}.id", exc.pid,
                               f"Session id {session_id} is in use by another agent-forge process ({holder}) "
                               f"in {directory}") from None
    except (SessionFileError, OSError):
        return None
