"""The bytes of a session file: parsing it (tolerating a torn tail), encoding lines, and writing it crash-safely.

Durability: a new file appears atomically (written under a temporary name, then renamed) with its header and
first entries; each later append is one `os.write` of a whole line to a descriptor opened with `O_APPEND`, with
no user-space buffering. A process killed at any moment thus leaves every acknowledged entry in the file and at
worst a torn last line; parsing skips lines that are not JSON objects and the next append starts on a fresh
line. A failed append (a full disk) is cut back to the file's previous end, so the file never holds a torn
line in its middle. A whole-file rewrite (migration of an old version) is also atomic and keeps the original
as a backup.
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..ai import json_wire
from .session_entries import SessionEntry, SessionHeader, is_header
from .session_migrations import check_version, migrate

FILE_MODE = 0o600  # sessions hold prompts, file contents and command output: private to the user
_WRITE_FLAGS = os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_NEW_FILE_FLAGS = os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)  # a file of our own, never a link's target


class SessionFileError(Exception):
    """A session file cannot be read (missing, unreadable, empty, no valid header) or written. `reason`: the
    OS's words when the OS refused (`No space left on device`), else None."""

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass
class ParsedSession:
    """A file's content, migrated to the current version. `migrated_from` is the file's version when it was
    older (the file must be rewritten before anything is appended), else None. `torn_tail`: the bytes do not
    end with a newline, so an append must start with one."""

    header: SessionHeader
    entries: list[SessionEntry]
    migrated_from: int | None
    torn_tail: bool


_raw_decode = json.JSONDecoder().raw_decode


def parse_line(line: str | bytes) -> Any:
    """The JSON value of one line, or None when it is blank, torn or not JSON at all. Lone-surrogate escapes
    (files written by older versions) read as U+FFFD, as new lines are written."""
    value = _parse(line)
    if value is not None and json_wire.may_hold_surrogates(line if isinstance(line, str) else
                                                            line.decode("utf-8", "replace")):
        return json_wire.scrub_in_place(value)
    return value


def _parse(line: str | bytes) -> Any:
    if isinstance(line, str):
        try:  # fast path for the usual line: one JSON value with nothing but an optional CR after it
            value, end = _raw_decode(line)
            if end == len(line) or line[end:].isspace():
                return value
        except (ValueError, RecursionError):
            pass
    if not line or line.isspace():
        return None
    try:
        return json.loads(line)
    except (ValueError, RecursionError):  # ValueError covers invalid JSON and invalid UTF-8
        return None


def read_session(path: Path) -> ParsedSession:
    """Read and parse a session file in one linear pass.

    Raises SessionFileError when it is missing, unreadable, empty, has no valid header or an unsupported
    version (see `session_migrations.migrate`).
    """
    data = _read_bytes(path)
    if not data or data.isspace():
        raise SessionFileError(f"session file is empty: {path}")
    with _gc_paused():
        lines = iter(_split_lines(data))
        header = _checked_header(next((obj for obj in map(parse_line, lines) if isinstance(obj, dict)), None), path)
        objects = [obj for obj in map(parse_line, lines) if isinstance(obj, dict)]  # continues after the header
    version = migrate(header, objects)  # the version was checked with the header: this cannot raise
    return ParsedSession(header, _unique_entries(objects), version, not data.endswith(b"\n"))


def read_header(path: Path) -> SessionHeader:
    """The header of a session file, reading only up to it. Raises SessionFileError exactly when `read_session`
    would (missing, unreadable, empty, no valid header, unsupported version), so a file that passes here opens.
    """
    try:
        with path.open("rb") as handle:
            header = next((obj for obj in map(parse_line, handle) if isinstance(obj, dict)), None)
    except FileNotFoundError:
        raise SessionFileError(f"session file not found: {path}") from None
    except OSError as exc:
        raise SessionFileError(f"cannot read session file {path}: {exc.strerror or exc}") from None
    if header is None and _is_blank(path):
        raise SessionFileError(f"session file is empty: {path}")
    return _checked_header(header, path)


def _checked_header(header: Any, path: Path) -> SessionHeader:
    """`header` if it is a usable session header: `type: "session"`, string `id` and `cwd`, a supported version."""
    if not is_header(header) or not isinstance(header.get("cwd"), str):
        raise SessionFileError(f"session file has no valid session header: {path}")
    try:
        check_version(header)
    except ValueError as exc:
        raise SessionFileError(f"session file {path}: {exc}") from None
    return header


def _is_blank(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return all(not line.strip() for line in handle)
    except OSError:
        return False


def _split_lines(data: bytes) -> list[str | bytes]:
    """The file's lines, split on LF only (U+2028 and friends are ordinary characters in JSON strings).
    Complete lines are decoded at once (much cheaper than per line); a torn tail stays bytes, since a crash may
    have cut a multi-byte character; a file with invalid UTF-8 elsewhere is split as bytes, line by line."""
    cut = data.rfind(b"\n") + 1
    try:
        lines: list[str | bytes] = list(data[:cut].decode("utf-8").split("\n"))
    except UnicodeDecodeError:
        lines = list(data[:cut].split(b"\n"))
    lines.append(data[cut:])
    return lines


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: parsing creates millions of containers that are all kept, and the
    collections they would trigger cost about as much as the parsing itself."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _unique_entries(objects: list[dict[str, Any]]) -> list[SessionEntry]:
    """Entries in file order; a repeated id (hand-edited or concatenated file) keeps its first occurrence, since
    ids are durable cursors and must not be shadowed."""
    entries: list[SessionEntry] = []
    seen: set[str] = set()
    for obj in objects:
        entry_id, kind, parent = obj.get("id"), obj.get("type"), obj.get("parentId")
        # is_entry(obj), inlined: this loop runs once per line of every file opened or listed
        if (type(entry_id) is str and type(kind) is str and kind != "session"
                and (parent is None or type(parent) is str) and entry_id not in seen):
            seen.add(entry_id)
            if parent is None and "parentId" not in obj:
                obj["parentId"] = None  # every reader may rely on the base field being present
            entries.append(obj)  # type: ignore[arg-type]
    return entries


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise SessionFileError(f"session file not found: {path}") from None
    except OSError as exc:
        raise SessionFileError(f"cannot read session file {path}: {exc.strerror or exc}") from None


def encode_line(obj: dict[str, Any]) -> bytes:
    """One compact JSON line, UTF-8, LF-terminated; non-finite floats are written as null (`NaN` is not JSON,
    and other tools must be able to read the file). Raises TypeError/ValueError for values JSON cannot hold."""
    # Lone surrogates become U+FFFD: strict JSON readers reject a lone `\ud83d` escape.
    return json_wire.encode_utf8(json_wire.dumps(obj)) + b"\n"


class SessionFile:
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
        self._fd = self._publish(data, backup=None)
        self.exists, self._needs_newline = True, False

    def replace(self, data: bytes, backup: Path) -> None:
        """Atomically replace the file's whole content with `data` (a migration), keeping the original bytes
        at `backup` (a hard link when possible; an existing backup is left as it is)."""
        _keep_backup(self.path, backup)
        self.close()
        self._fd = self._publish(data, backup=backup)
        self._needs_newline = False

    def append(self, data: bytes) -> None:
        """Append whole lines with one `os.write` (more only if the OS writes part of them). When the OS
        refuses (a full disk: ENOSPC; a file size limit: EFBIG), the bytes of `data` already written are cut
        off again, so the file ends with its last complete line and a retry appends nothing twice."""
        fd = self._open()
        start: int | None = None
        try:
            start = os.lseek(fd, 0, os.SEEK_END)
            _write_all(fd, b"\n" + data if self._needs_newline else data)
            if self._fsync:
                os.fsync(fd)
        except OSError as exc:
            self._cut_back(fd, start)
            raise self._error("write", exc) from None
        self._needs_newline = False

    def _cut_back(self, fd: int, offset: int | None) -> None:
        """Truncate the torn bytes of a failed append (freeing them also gives a full disk its space back);
        when that fails too, the next append starts on a fresh line so the torn one stays a single bad line."""
        try:
            if offset is None:
                raise OSError("the file's end is unknown")
            os.ftruncate(fd, offset)
        except OSError:
            self._needs_newline = True

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def _publish(self, data: bytes, *, backup: Path | None) -> int:
        """Write `data` to a temporary file and rename it over `path`; returns the open append descriptor."""
        temp = self.path.with_name(f".{self.path.name}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temp.unlink(missing_ok=True)  # left by a crash: start afresh (never write through a planted link)
            fd = os.open(temp, _WRITE_FLAGS | _NEW_FILE_FLAGS, FILE_MODE)
        except OSError as exc:
            raise self._error("create", exc) from None
        try:
            _write_all(fd, data)
            if self._fsync or backup is not None:  # a rewrite replaces acknowledged entries: always durable
                os.fsync(fd)
            os.replace(temp, self.path)
        except OSError as exc:
            os.close(fd)
            temp.unlink(missing_ok=True)
            raise self._error("write", exc) from None
        if self._fsync or backup is not None:
            sync_dir(self.path.parent)
        return fd

    def _open(self) -> int:
        """The append descriptor of the existing file. Never creates it: a recreated file would lack its header."""
        if self._fd is None:
            try:
                self._fd = os.open(self.path, _WRITE_FLAGS)
            except OSError as exc:
                raise self._error("open", exc) from None
        return self._fd

    def _error(self, action: str, exc: OSError) -> SessionFileError:
        reason = exc.strerror or str(exc)
        return SessionFileError(f"cannot {action} session file {self.path}: {reason}", reason)


def _keep_backup(path: Path, backup: Path) -> None:
    if backup.is_file() and not backup.is_symlink():
        return  # a crash between backup and rewrite left it: it already holds the original bytes
    try:
        os.link(path, backup)
    except OSError:
        try:
            _copy_new(path, backup)
        except OSError as exc:
            raise SessionFileError(f"cannot back up session file {path} before migrating it: "
                                   f"{exc.strerror or exc}") from None


def _copy_new(source: Path, target: Path) -> None:
    """Copy `source` to a new private file `target`; whatever was at `target` (a dangling link) is replaced,
    never written through."""
    data = source.read_bytes()
    target.unlink(missing_ok=True)
    fd = os.open(target, os.O_WRONLY | _NEW_FILE_FLAGS | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def sync_dir(directory: Path) -> None:
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
