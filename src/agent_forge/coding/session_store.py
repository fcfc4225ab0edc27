"""The session store: an append-only JSONL tree of entries, persisted crash-safely, with its active branch.

File layout and entry shapes are in `session_entries.py`. Files live at
`<sessions dir>/--<encoded cwd>--/<timestamp>_<session id>.jsonl` (reference docs, `session-format.md`; the
sessions dir comes from `paths.sessions_dir`).

Durability: a new file appears atomically (written under a temporary name, then renamed) with its header and
first entries; each later append is one `os.write` of a whole line to a descriptor opened with `O_APPEND`, with
no user-space buffering. A process killed at any moment thus leaves every acknowledged entry in the file and at
worst a torn last line; loading skips lines that are not JSON objects and the next append starts on a fresh line.

A store is not thread-safe: one owner (the session hub) appends to it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from agent_forge.coding.paths import sessions_dir
from agent_forge.coding.session_entries import (
    CURRENT_VERSION,
    AgentMessage,
    SessionEntry,
    SessionHeader,
    is_entry,
    is_header,
    make_entry,
    make_header,
    new_entry_id,
    parse_timestamp,
    timestamp_ms,
)

_CWD_SEPARATORS = str.maketrans({"/": "-", "\\": "-", ":": "-"})
_FILE_MODE = 0o600  # sessions hold prompts, file contents and command output: private to the user
_WRITE_FLAGS = os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


class SessionFileError(Exception):
    """A session file cannot be read (missing, unreadable, empty, no valid header) or written."""


@dataclass
class SessionContext:
    """What the next model request needs from the active branch.

    `messages`: AgentMessages root → leaf (the stored dicts themselves: do not mutate); `model`:
    `(provider, modelId)` of the latest `model_change` on the branch or None; `thinking_level`: latest
    `thinking_level_change` on the branch or None.
    """

    messages: list[AgentMessage] = field(default_factory=list)
    model: tuple[str, str] | None = None
    thinking_level: str | None = None


@dataclass(frozen=True)
class SessionInfo:
    """One line of a session listing. `first_message` is the text of the first user message ("" if none);
    `name` is the latest `session_info.name` in the file; `modified` is the file's mtime (UTC)."""

    path: Path
    id: str
    cwd: str
    created: datetime
    modified: datetime
    name: str | None
    first_message: str
    message_count: int
    parent_session: str | None = None


# --- paths -----------------------------------------------------------------------------------------------


def encode_cwd(cwd: str) -> str:
    """`/home/u/proj` → `--home-u-proj--`: one leading separator dropped, `/`, `\\` and `:` become `-`."""
    trimmed = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    return f"--{trimmed.translate(_CWD_SEPARATORS)}--"


def session_cwd_dir(cwd: str | os.PathLike[str], session_dir: str | os.PathLike[str] | None = None) -> Path:
    """Directory holding the sessions of `cwd`: `<sessions dir>/--<encoded cwd>--`.

    `session_dir` is the sessions root (`--session-dir`); None means `paths.sessions_dir()`.
    """
    root = sessions_dir(os.fspath(session_dir) if session_dir is not None else None)
    return root / encode_cwd(os.path.abspath(os.fspath(cwd)))


def session_file_name(header: SessionHeader) -> str:
    """`<timestamp with ':' and '.' as '-'>_<session id>.jsonl`, e.g. `2026-11-30T14-29-15-123Z_<uuid>.jsonl`."""
    stamp = header["timestamp"].replace(":", "-").replace(".", "-")
    return f"{stamp}_{header['id']}.jsonl"


# --- reading ---------------------------------------------------------------------------------------------


def _parse_line(line: bytes) -> Any:
    """The JSON value of one line, or None when it is blank, torn or not JSON at all."""
    if not line or line.isspace():
        return None
    try:
        return json.loads(line)
    except (ValueError, RecursionError):  # ValueError covers invalid JSON and invalid UTF-8
        return None


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise SessionFileError(f"session file not found: {path}") from None
    except OSError as exc:
        raise SessionFileError(f"cannot read session file {path}: {exc.strerror or exc}") from None


def _parse_session(data: bytes, path: Path) -> tuple[SessionHeader, list[SessionEntry]]:
    """Header and entries of a file's bytes, in one linear pass. Raises SessionFileError without a header."""
    if not data or data.isspace():
        raise SessionFileError(f"session file is empty: {path}")
    lines = iter(data.split(b"\n"))
    header = next((obj for obj in map(_parse_line, lines) if isinstance(obj, dict)), None)
    if not is_header(header) or not isinstance(header.get("cwd"), str):
        raise SessionFileError(f"session file has no valid session header: {path}")
    _check_version(header, path)
    entries: list[SessionEntry] = []
    seen: set[str] = set()
    for obj in map(_parse_line, lines):  # continues after the header line
        # Ids are durable cursors: a duplicate (hand-edited or concatenated file) must not shadow the original.
        if is_entry(obj) and obj["id"] not in seen:
            seen.add(obj["id"])
            entries.append(obj)
    if header.get("version") == 2:
        _migrate_v2(entries)
    return header, entries


def _check_version(header: dict[str, Any], path: Path) -> None:
    version = header.get("version", 1)
    if version in (2, CURRENT_VERSION):
        return
    if isinstance(version, int) and version > CURRENT_VERSION:
        raise SessionFileError(f"session file {path} has version {version}, newer than supported ({CURRENT_VERSION})")
    raise SessionFileError(f"session file {path} has unsupported version {version!r} (supported: 2, 3)")


def _migrate_v2(entries: list[SessionEntry]) -> None:
    """Version 3 renamed the `hookMessage` role to `custom` (session-format.md, Session Version)."""
    for entry in entries:
        message = entry.get("message")
        if isinstance(message, dict) and message.get("role") == "hookMessage":
            message["role"] = "custom"


def _encode_line(obj: dict[str, Any]) -> bytes:
    """One compact JSON line, UTF-8, LF-terminated. Raises TypeError/ValueError for non-JSON values."""
    try:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:  # lone surrogates: escaping them keeps the line valid UTF-8 and round-trips
        return json.dumps(obj, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"


# --- the store -------------------------------------------------------------------------------------------


class SessionStore:
    """One session: its header, its entries in append order, and the current leaf of the tree.

    Build one with `create` (new file, written lazily), `open` (existing file) or `in_memory` (no file).
    Append methods return the new entry dict; its `parentId` is the previous leaf and it becomes the leaf.
    Appends raise SessionFileError when the disk write fails (the entry is then not added) and
    TypeError/ValueError when a field is not JSON-serialisable.
    """

    def __init__(
        self,
        header: SessionHeader,
        path: Path | None,
        entries: Iterable[SessionEntry] = (),
        *,
        on_disk: bool = False,
        needs_newline: bool = False,
        fsync: bool = False,
    ) -> None:
        """Prefer the `create`/`open`/`in_memory` constructors; this one trusts its arguments."""
        self._header = header
        self._path = path
        self._file = None if path is None else _SessionFile(path, exists=on_disk, needs_newline=needs_newline,
                                                             fsync=fsync)
        self._entries: list[SessionEntry] = []
        self._position: dict[str, int] = {}
        self._leaf_id: str | None = None
        self._pending: list[bytes] = []  # encoded lines not yet written (a new file before its first message)
        for entry in entries:
            self._index(entry)

    # constructors

    @classmethod
    def create(
        cls,
        cwd: str | os.PathLike[str],
        session_dir: str | os.PathLike[str] | None = None,
        *,
        parent_session: str | os.PathLike[str] | None = None,
        fsync: bool = False,
    ) -> SessionStore:
        """A new session for `cwd` (made absolute). Its path is fixed now; the file is written when the first
        `message` entry is appended, with the header and every entry before it. `session_dir` is the sessions
        root (see `session_cwd_dir`); `parent_session` is recorded in the header; `fsync` syncs every append.
        """
        cwd_text = os.path.abspath(os.fspath(cwd))
        parent = os.fspath(parent_session) if parent_session is not None else None
        header = make_header(cwd_text, parent_session=parent)
        path = session_cwd_dir(cwd_text, session_dir) / session_file_name(header)
        return cls(header, path, fsync=fsync)

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, fsync: bool = False) -> SessionStore:
        """Load an existing session file; the leaf is its last entry.

        Lines that are not JSON objects (a torn last line after a crash, garbage) are skipped. Raises
        SessionFileError when the file is missing, unreadable, empty, has no valid header or an unsupported
        version (1, or newer than 3; version 2 is migrated in memory).
        """
        file_path = Path(path)
        data = _read_bytes(file_path)
        header, entries = _parse_session(data, file_path)
        needs_newline = not data.endswith(b"\n")
        return cls(header, file_path, entries, on_disk=True, needs_newline=needs_newline, fsync=fsync)

    @classmethod
    def in_memory(cls, cwd: str | os.PathLike[str]) -> SessionStore:
        """A session that never touches the disk (`path` is None): `--no-session`."""
        return cls(make_header(os.path.abspath(os.fspath(cwd))), None)

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
    def leaf_id(self) -> str | None:
        """Id of the current leaf, None for an empty session or after `set_leaf(None)`."""
        return self._leaf_id

    def get_entry(self, entry_id: str) -> SessionEntry | None:
        position = self._position.get(entry_id)
        return None if position is None else self._entries[position]

    def entries_since(self, entry_id: str) -> list[SessionEntry]:
        """Entries appended strictly after `entry_id`, in O(new entries). Raises ValueError for an unknown id."""
        return self._entries[self._require(entry_id) + 1 :]

    def branch(self, from_id: str | None = None) -> list[SessionEntry]:
        """Entries root → `from_id` (default: the leaf) following `parentId`. Raises ValueError for an unknown
        id. The walk stops at a missing parent, and at a cycle, which only a hand-edited file can contain."""
        if from_id is not None:
            self._require(from_id)
        path: list[SessionEntry] = []
        seen: set[str] = set()
        current = self._leaf_id if from_id is None else from_id
        while current is not None and current in self._position and current not in seen:
            seen.add(current)
            entry = self._entries[self._position[current]]
            path.append(entry)
            current = entry.get("parentId")
        path.reverse()
        return path

    @property
    def session_name(self) -> str | None:
        """`name` of the latest `session_info` entry on the active branch; None when unset or cleared."""
        for entry in reversed(self.branch()):
            if entry["type"] == "session_info":
                name = entry.get("name")
                return name if isinstance(name, str) and name.strip() else None
        return None

    def build_context(self) -> SessionContext:
        """Messages, model and thinking level of the active branch (see SessionContext)."""
        path = self.branch()
        model, thinking_level = _branch_settings(path)
        messages = [message for entry in _context_entries(path) for message in _context_messages(entry)]
        return SessionContext(messages=messages, model=model, thinking_level=thinking_level)

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
        line = _encode_line(make_entry(entry_type, new_entry_id(self._position), self._leaf_id, fields))
        self._persist(line, starts_file=entry_type == "message")
        # Keep what the file holds, not the caller's objects: they may be mutated later, and a reopened
        # session must equal this one.
        entry: SessionEntry = json.loads(line)
        self._index(entry)
        return entry

    def set_leaf(self, entry_id: str | None) -> None:
        """Move the leaf (in memory only): the next entry becomes a child of `entry_id`, or a new root for None.
        Raises ValueError for an unknown id."""
        if entry_id is not None:
            self._require(entry_id)
        self._leaf_id = entry_id

    def close(self) -> None:
        """Release the file descriptor. Idempotent; a later append opens it again."""
        if self._file is not None:
            self._file.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SessionStore(id={self.session_id!r}, path={self._path!r}, entries={len(self._entries)})"

    # internals

    def _index(self, entry: SessionEntry) -> None:
        self._position[entry["id"]] = len(self._entries)
        self._entries.append(entry)
        self._leaf_id = entry["id"]

    def _require(self, entry_id: str) -> int:
        position = self._position.get(entry_id) if isinstance(entry_id, str) else None
        if position is None:
            raise ValueError(f"no entry with id {entry_id!r} in session {self.session_id}")
        return position

    def _persist(self, line: bytes, *, starts_file: bool) -> None:
        """Write `line`, or hold it back while a new session has had no message yet."""
        if self._file is None:
            return
        if self._file.exists:
            self._file.append(line)
        elif not starts_file:
            self._pending.append(line)
        else:
            self._file.create(b"".join([_encode_line(self._header), *self._pending, line]))  # type: ignore[arg-type]
            self._pending.clear()


class _SessionFile:
    """The durable side of a session: creates the file atomically, then appends whole lines with `O_APPEND`.

    Every method raises SessionFileError (naming the file and the OS reason) when the OS refuses.
    """

    def __init__(self, path: Path, *, exists: bool, needs_newline: bool, fsync: bool) -> None:
        self.path = path
        self.exists = exists
        self._needs_newline = needs_newline  # the file ends in a torn line: the next write starts a fresh one
        self._fsync = fsync
        self._fd: int | None = None

    def create(self, data: bytes) -> None:
        """Publish the file with its first lines: written under a temporary name, then renamed, so a crash
        leaves either no session file or one with a complete header. The descriptor stays open for appends
        (it follows the renamed file)."""
        if self.path.exists():
            raise SessionFileError(f"session file already exists: {self.path}")
        temp = self.path.with_name(f".{self.path.name}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(temp, _WRITE_FLAGS | os.O_CREAT | os.O_TRUNC, _FILE_MODE)
        except OSError as exc:
            raise self._error("create", exc) from None
        try:
            _write_all(fd, data)
            if self._fsync:
                os.fsync(fd)
            os.rename(temp, self.path)
        except OSError as exc:
            os.close(fd)
            temp.unlink(missing_ok=True)
            raise self._error("write", exc) from None
        self._fd, self.exists = fd, True
        if self._fsync:
            _sync_dir(self.path.parent)

    def append(self, data: bytes) -> None:
        """Append whole lines with one `os.write` (more only if the OS writes part of them)."""
        fd = self._open()
        if self._needs_newline:
            data = b"\n" + data
        try:
            _write_all(fd, data)
        except OSError as exc:
            self._needs_newline = True  # part of `data` may be on disk
            raise self._error("write", exc) from None
        self._needs_newline = False
        if self._fsync:
            try:
                os.fsync(fd)
            except OSError as exc:
                raise self._error("sync", exc) from None

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def _open(self) -> int:
        """The append descriptor of the existing file. Never creates it: a recreated file would lack its header."""
        if self._fd is None:
            try:
                self._fd = os.open(self.path, _WRITE_FLAGS)
            except OSError as exc:
                raise self._error("open", exc) from None
        return self._fd

    def _error(self, action: str, exc: OSError) -> SessionFileError:
        return SessionFileError(f"cannot {action} session file {self.path}: {exc.strerror or exc}")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _sync_dir(directory: Path) -> None:
    """Make a new directory entry durable (POSIX; best effort where directories cannot be opened)."""
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


# --- context building ------------------------------------------------------------------------------------


def _context_entries(path: list[SessionEntry]) -> list[SessionEntry]:
    """The entries of the branch that feed the model context.

    TODO(compaction): keep only the latest compaction and the entries from its `firstKeptEntryId` on.
    """
    return path


def _branch_settings(path: list[SessionEntry]) -> tuple[tuple[str, str] | None, str | None]:
    """(provider, modelId) of the latest `model_change` and the latest thinking level on `path`."""
    model: tuple[str, str] | None = None
    level: str | None = None
    for entry in path:
        if entry["type"] == "model_change":
            provider, model_id = entry.get("provider"), entry.get("modelId")
            if isinstance(provider, str) and isinstance(model_id, str):
                model = (provider, model_id)
        elif entry["type"] == "thinking_level_change" and isinstance(entry.get("thinkingLevel"), str):
            level = entry["thinkingLevel"]
    return model, level


def _context_messages(entry: SessionEntry) -> list[AgentMessage]:
    converter = _CONTEXT_MESSAGES.get(entry["type"])
    return converter(entry) if converter is not None else []


def _message_of(entry: SessionEntry) -> list[AgentMessage]:
    message = entry.get("message")
    return [message] if isinstance(message, dict) else []


def _custom_message_of(entry: SessionEntry) -> list[AgentMessage]:
    """`custom_message` entry → `{"role": "custom", customType, content, display, details?, timestamp}`."""
    message: AgentMessage = {
        "role": "custom",
        "customType": entry.get("customType"),
        "content": entry.get("content", ""),
        "display": bool(entry.get("display", True)),
        "timestamp": timestamp_ms(entry["timestamp"]),
    }
    if "details" in entry:
        message["details"] = entry["details"]
    return [message]


def _summary_placeholder(entry: SessionEntry) -> list[AgentMessage]:
    """TODO(compaction, branch summaries): turn `compaction`/`branch_summary` entries into summary messages."""
    return []


_CONTEXT_MESSAGES: dict[str, Callable[[SessionEntry], list[AgentMessage]]] = {
    "message": _message_of,
    "custom_message": _custom_message_of,
    "compaction": _summary_placeholder,
    "branch_summary": _summary_placeholder,
}
"""Entry type → the context messages it contributes; types not listed contribute none."""


# --- listing ---------------------------------------------------------------------------------------------


def list_sessions(
    cwd: str | os.PathLike[str], session_dir: str | os.PathLike[str] | None = None
) -> list[SessionInfo]:
    """Sessions stored for `cwd`, newest (by file mtime) first. Files that cannot be read or have no valid
    header are left out. Cost: one linear scan of each file."""
    infos = [info for info in map(_session_info, _session_files(cwd, session_dir)) if info is not None]
    infos.sort(key=lambda info: info.modified, reverse=True)
    return infos


def find_most_recent(
    cwd: str | os.PathLike[str], session_dir: str | os.PathLike[str] | None = None
) -> Path | None:
    """The most recently modified session file of `cwd` that has a valid header, or None (`--continue`).
    Reads only the header line of the files it considers."""
    files = sorted(_session_files(cwd, session_dir), key=_mtime, reverse=True)
    return next((path for path in files if _has_header(path)), None)


def _session_files(cwd: str | os.PathLike[str], session_dir: str | os.PathLike[str] | None) -> list[Path]:
    directory = session_cwd_dir(cwd, session_dir)
    try:
        return [path for path in directory.glob("*.jsonl") if path.is_file()]
    except OSError:
        return []


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _has_header(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return is_header(_parse_line(handle.readline()))
    except OSError:
        return False


def _session_info(path: Path) -> SessionInfo | None:
    try:
        header, entries = _parse_session(_read_bytes(path), path)
    except SessionFileError:
        return None
    modified = datetime.fromtimestamp(_mtime(path), timezone.utc)
    name, first_message, count = _summarise(entries)
    return SessionInfo(
        path=path,
        id=header["id"],
        cwd=header["cwd"],
        created=parse_timestamp(header.get("timestamp", "")) or modified,
        modified=modified,
        name=name,
        first_message=first_message,
        message_count=count,
        parent_session=header.get("parentSession"),
    )


def _summarise(entries: list[SessionEntry]) -> tuple[str | None, str, int]:
    """(latest session name, first user message text, number of message entries)."""
    name: str | None = None
    first_message: str | None = None
    count = 0
    for entry in entries:
        if entry["type"] == "message":
            count += 1
            message = entry.get("message")
            if first_message is None and isinstance(message, dict) and message.get("role") == "user":
                first_message = message_text(message)
        elif entry["type"] == "session_info":
            value = entry.get("name")
            name = value if isinstance(value, str) and value.strip() else None
    return name, first_message or "", count


def message_text(message: AgentMessage) -> str:
    """The text of a message's `content`: the string itself, or its text blocks joined with newlines."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [block["text"] for block in content if isinstance(block, dict) and isinstance(block.get("text"), str)]
    return "\n".join(parts)
