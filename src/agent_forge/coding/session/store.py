"""The session store: one session's append-only tree of entries, its active leaf, and its file.

Entry shapes are in `entries.py` (one typed `append_*` method per entry type in `appends.py`), parsing the file in
`reading.py`, writing it crash-safely in `durable.py`, keeping lines the OS refused until a write
succeeds in `writer.py`, old versions in `migrations.py`, the single-writer lock in
`lock.py`, context building in `context.py`, locations and listings in `listing.py`
(names re-exported here).

A store is not thread-safe: one owner appends to it. It knows nothing of its owner (the session hub).

A write the OS refuses (a full disk) never leaves a hole: the entry is kept, in memory, with every later one, in
order, and they are all written, oldest first, by the next append or `flush` that succeeds (see `write_error`).

A store works on the real path of its file (symlinks resolved when it is opened or created), so the lock,
a migration rewrite and its backup all concern the file itself, whichever link it was reached by.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..paths import path_text
from ...ai import json_wire
from .context import Checked, SessionContext, build_context, open_context, unusable_entries
from .appends import EntryAppends
from .entries import SessionEntry, SessionHeader, make_entry, make_header, new_entry_id, uuid4
from ..errors import SessionFileError, SessionLockError
from .fit import fit_line, report
from .reading import encode_line, read_session
from .shapes import repaired
from .listing import SessionInfo, find_most_recent, list_sessions, message_text
from .naming import encode_cwd, session_cwd_dir, session_file_name
from .lock import LOCK_SUFFIX, SessionLock
from .writer import SessionWriter, SessionWriteState, lock_session_id
from ..safe_read import is_file

if TYPE_CHECKING:
    from .damage import SessionWarning

__all__ = [
    "SessionContext", "SessionFileError", "SessionInfo", "SessionLockError", "SessionStore", "SessionWriteState",
    "encode_cwd",
    "find_most_recent", "list_sessions", "message_text", "session_cwd_dir", "session_file_name",
]


FILE_STARTING_ENTRIES = frozenset({"message", "session_info", "label", "custom", "custom_message"})
"""Entry types that make a new session's file appear: a message, or something a client or plugin chose to record
(a name, a label, a plugin entry). Model, thinking level and context window entries alone do not: a session
nobody used leaves no file (the reference writes none either)."""


class SessionStore(EntryAppends):
    """One session: its header, its entries in append order, and the current leaf of the tree.

    Build one with `create` (new file, written lazily), `open` (existing file) or `in_memory` (no file).
    Append methods (`appends.py`) return the new entry dict; its `parentId` is the previous leaf and it becomes the
    leaf. They raise TypeError/ValueError when a field is not JSON-serialisable (nothing is added). A disk write
    that fails does not raise: the entry is added and kept unwritten (see `write_error`, `on_write_state`).
    """

    def __init__(self, header: SessionHeader, path: Path | None, entries: Iterable[SessionEntry] = (), *,
                 on_disk: bool = False, needs_newline: bool = False, fsync: bool = False,
                 migrated_from: int | None = None, lock: SessionLock | bool = False,
                 torn_at: int | None = None, positions: dict[str, int] | None = None,
                 size: int | None = None) -> None:
        """Prefer the `create`/`open`/`in_memory` constructors; this one trusts its arguments. `lock`: a held
        lock to keep, or True to take one when the file is first written; `positions`: id → index of `entries`;
        `size`: the file's size in bytes when it was read."""
        self._header = header
        self._path = path
        self._writer = None if path is None else SessionWriter(
            path, encode_line(dict(header)), self._whole_file, self._write_state_changed, exists=on_disk,
            needs_newline=needs_newline, fsync=fsync, torn_at=torn_at, migrated_from=migrated_from, lock=lock,
            size=size)
        self._entries: list[SessionEntry] = list(entries)
        self._position: dict[str, int] = positions if positions is not None else {
            entry["id"]: i for i, entry in enumerate(self._entries)}
        self._leaf_id: str | None = self._entries[-1]["id"] if self._entries else None
        self.released = False
        """True once `close` ran: what it could not write has been reported (once) by its owner."""
        self.recovered: tuple[Path, str] | None = None
        """Where `rescue` wrote the whole session: (the copy's path, its session id)."""
        self.on_write_state: Callable[[str | None], None] | None = None
        """Called with the previous error after `write_error` changed (a write failed, failed differently, or
        succeeded after failing); set by the owner, to tell its client."""
        # The active branch and its context, kept while appends extend the leaf: entries never change, so a
        # branch is fixed by its leaf, and get_state/prompts need not walk 50,000 parents each time.
        self._branch: list[SessionEntry] | None = None if self._entries else []
        self._context: tuple[str | None, SessionContext] | None = None
        self._checked: Checked | None = None
        self._unrepaired: list[object] = []  # messages whose optional fields `build_context` checks first
        self._name: tuple[str | None, str | None] | None = None  # (leaf id, `session_name` on its branch)
        self._types: tuple[str | None, frozenset[str]] | None = None  # (leaf id, `branch_types` of its branch)
        self.load_warnings: list[SessionWarning] = []
        """What opening the file found damaged (`damage.py`); empty when nothing or made in this process."""
        self.last_cut: str | None = None
        """What the last append left out of its entry to fit a session line (`fit.fit_line`: `1 image and 3
        characters`), None when it fitted as it was."""
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
        if lock and session_id is not None and store._writer is not None:
            store._writer.id_lock = lock_session_id(directory, session_id)
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
        the file is missing, unreadable, empty, has no valid header or an unsupported version, and for a
        session's `.lock` file.
        `path` may be a symlink: the store's `path` is the real file.
        """
        file_path = Path(os.path.realpath(path))
        if file_path.name.endswith(LOCK_SUFFIX):  # its lock is held by the session's owner: "in use" would mislead
            raise SessionFileError(f"not a session file: {path_text(path)} (it is the lock file of a session; open the "
                                   f"session file beside it)", detail="it is a session lock file")
        if lock is True and not is_file(file_path):
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
                    torn_at=parsed.complete_size if parsed.torn_tail else None, positions=parsed.positions,
                    size=parsed.size)
        store._unrepaired = parsed.unrepaired
        if parsed.linear:  # the leaf is the last entry: its branch is every entry, no parent walk needed
            store._branch = list(parsed.entries)
            context, unusable, store._checked = open_context(parsed.entries, parsed.entry_lines, parsed.checks)
            if context is not None:  # the shape checks and the first context made in one pass
                store._context = (store._leaf_id, context)
        else:
            store._checked = {}  # the first build_context uses these checks instead of making them again
            unusable = unusable_entries(parsed.entries, parsed.entry_lines, store._checked, parsed.checks)
        if parsed.skipped_lines or unusable or parsed.broken_links or parsed.torn_line is not None:
            from .damage import load_warnings  # only a damaged file needs the words for it

            store.load_warnings = load_warnings(file_path, parsed, unusable)
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
        return self._writer is not None and self._writer.exists

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
        if self._name is None or self._name[0] != self._leaf_id:  # get_state asks on every call: walk once a leaf
            named = "session_info" in self.branch_types()
            self._name = (self._leaf_id, _latest_name(self.branch()) if named else None)
        return self._name[1]

    def branch_types(self) -> frozenset[str]:
        """The entry types on the active branch (`session_info`, `context_window_change`, ...): one walk a leaf,
        at C speed, for the questions that would each walk a long branch to find none."""
        if self._types is None or self._types[0] != self._leaf_id:
            self._types = (self._leaf_id, frozenset(map(itemgetter("type"), self.branch())))
        return self._types[1]

    @property
    def write_error(self) -> SessionWriteState | None:
        """Why entries are waiting in memory (a write failed and none has succeeded since), else None."""
        if self._writer is None or self._writer.error is None:
            return None
        return SessionWriteState(path=str(self._writer.path), error=self._writer.error,
                                 pendingEntries=self.pending_entries)

    @property
    def pending_entries(self) -> int:
        """Entries not on disk: those waiting after a failed write, or every entry while the file is lost
        (deleted, replaced, unreachable) and not yet written again."""
        return 0 if self._writer is None else self._writer.pending(len(self._entries))

    def build_context(self, *, repair: bool = True) -> SessionContext:
        """Messages, model, thinking level and context window of the active branch (see SessionContext).
        A fresh object each call (its list may be changed by the caller; the messages are shared).
        `repair=False` (for counting the messages and reading the settings): the messages of a file just opened
        may still have optional fields of the wrong type (`sharing.shared_and_checked`)."""
        if self._context is None or self._context[0] != self._leaf_id:
            self._context = (self._leaf_id, build_context(self.branch(), self._checked))
            self._checked = None  # entries may change later (a migration, an edit in place): check anew
        context = self._context[1]
        if repair and self._unrepaired:  # once, for the file's messages (a later context is built checked)
            context.messages, self._unrepaired = repaired(context.messages, self._unrepaired), []
        return SessionContext(messages=list(context.messages), model=context.model,
                              thinking_level=context.thinking_level, context_window=context.context_window)

    # writing: the typed append_* methods are EntryAppends' (appends.py)

    def _append(self, entry_type: str, fields: dict[str, Any]) -> Any:
        """Append an entry of `entry_type` with `fields` as its type-specific keys, in their order; returns a
        fresh dict equal to the line written (a snapshot of `fields`): the entry TypedDict of `entry_type`
        (typed by the `append_*` method that called). An entry too large for a session line is shrunk
        (`fit.py`; `last_cut` says what was left out). Raises ValueError for an empty type, `session`, or a
        field named like a base field (`make_entry`), `UnencodableEntry` when it cannot be written."""
        line, self.last_cut = fit_line(make_entry(entry_type, new_entry_id(self._position), self._leaf_id, fields))
        if self.last_cut is not None:
            report(entry_type, self.last_cut)
        # Keep what the file holds, not the caller's objects: they may be mutated later, and a reopened
        # session must equal this one.
        entry: SessionEntry = json_wire.parse(line)
        self._index(entry)
        self._persist([line], starts_file=entry_type in FILE_STARTING_ENTRIES)
        return entry

    def flush(self) -> bool:
        """Write the entries a failed write left in memory (oldest first); True when none is left waiting."""
        return True if self._writer is None else self._writer.flush()

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
        return None if self._writer is None else self._writer.take_lock()

    def close(self) -> None:
        """Try once more to write entries a failed write left waiting (they are lost when this fails too: see
        `write_error`), then release the file descriptor and the lock. Idempotent; a later append opens the
        file again."""
        if self._writer is not None:
            self._writer.close()
        self.released = True

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
            line, cut = fit_line(copy)
            lines.append(line)
            self._index(copy if cut is None else json_wire.parse(line))  # type: ignore[arg-type]
        if lines:
            self._persist(lines, starts_file=any(e["type"] in FILE_STARTING_ENTRIES for e in self._entries))

    def _index(self, entry: SessionEntry) -> None:
        self._position[entry["id"]] = len(self._entries)
        self._entries.append(entry)
        extends = entry["parentId"] == self._leaf_id  # the usual append: the branch grows by one
        if self._branch is not None and extends:
            self._branch.append(entry)
        else:
            self._branch = None  # recomputed on demand (loading a file, a parent elsewhere)
        if self._name is not None and extends and self._name[0] == self._leaf_id:
            name = _latest_name([entry]) if entry["type"] == "session_info" else self._name[1]
            self._name = (entry["id"], name)
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
        if self._writer is not None:
            self._writer.add(lines, starts_file=starts_file)

    def _write_state_changed(self, previous: str | None) -> None:
        if self.on_write_state is not None:
            self.on_write_state(previous)

    def _whole_file(self) -> tuple[bytes, int]:
        lines = [encode_line(self._header), *map(encode_line, self._entries)]  # type: ignore[arg-type]
        return b"".join(lines), len(self._entries)

    def rescue(self) -> tuple[Path, str] | None:
        """After `close` left entries unwritten: write the whole session (every entry) to a new file
        `<file>.recovered-<UTC time>.jsonl` beside it, else in the temp dir (`SessionWriter.rescue`); returns
        (its path, its session id), also kept as `recovered`, or None when no entry waits or neither place can be
        written. The copy opens like any session file, under a session id of its own (so an id names one
        session, not the original and its copy): its header adds `recoveredFrom` (the original id) and
        `parentSession` (the original file)."""
        writer, new_id = self._writer, uuid4()
        header = {**self._header, "id": new_id, "parentSession": str(self.path), "recoveredFrom": self.session_id}
        path = writer and writer.rescue(b"".join([encode_line(header), *map(encode_line, self._entries)]))
        self.recovered = None if path is None else (path, new_id)
        return self.recovered


def _latest_name(branch: list[SessionEntry]) -> str | None:
    """The name the latest `session_info` entry of `branch` gives (None when blank or not a string)."""
    for entry in reversed(branch):
        if entry["type"] == "session_info":
            name = entry.get("name")
            return name if isinstance(name, str) and name.strip() else None
    return None
