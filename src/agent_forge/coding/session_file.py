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
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..ai import json_wire
from .session_entries import SessionEntry, SessionHeader, is_header
from .session_migrations import check_version, migrate
from .errors import SessionDirError, SessionFileError  # noqa: F401 (re-exported: defined in errors.py)

FILE_MODE = 0o600  # sessions hold prompts, file contents and command output: private to the user
_WRITE_FLAGS = os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_NEW_FILE_FLAGS = os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)  # a file of our own, never a link's target
# Opens never wait: a FIFO (or a device) put where a session file is expected would block `open` forever.
_READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
               | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0))
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


@dataclass
class ParsedSession:
    """A file's content, migrated to the current version. `migrated_from` is the file's version when it was
    older (the file must be rewritten before anything is appended), else None. `torn_tail`: the bytes do not
    end with a newline, so an append must start with one. `skipped_lines`: 1-based numbers of the damaged lines
    left out (not JSON objects, or not entries; a torn last line is not counted: a crash leaves one)."""

    header: SessionHeader
    entries: list[SessionEntry]
    migrated_from: int | None
    torn_tail: bool
    skipped_lines: list[int]
    complete_size: int = 0
    """Bytes up to and including the last newline: where a torn tail starts (it is cut before appending)."""


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

    Invalid UTF-8 is decoded with U+FFFD, so an entry with a damaged character survives. A line that is still
    unusable is skipped (`ParsedSession.skipped_lines`) without losing what came before it: an entry whose
    parent is missing after a skipped line is linked to the last entry before that line in file order (the
    parent most likely lost with it), so the history stays one chain. Raises SessionFileError when the file is
    missing, not a regular file, unreadable, empty, has no valid header or an unsupported version (see
    `session_migrations.migrate`).
    """
    data = _read_bytes(path)
    if not data or data.isspace():
        raise SessionFileError(f"session file is empty: {path}", detail="it is empty")
    with _gc_paused():
        lines = _split_lines(data)
        start, header = _find_header(lines)
        header = _checked_header(header, path)
        objects, numbers, damaged = _parse_body(lines, start + 1)
    version = migrate(header, objects)  # the version was checked with the header: this cannot raise
    entries = _unique_entries(objects, numbers, damaged)
    return ParsedSession(header, entries, version, not data.endswith(b"\n"), sorted(damaged),
                         _complete_size(data, lines[-1]))


def _complete_size(data: bytes, tail: str) -> int:
    """Bytes up to the end of the last whole line: a tail after the last newline that is a JSON object (only
    its newline is missing) counts as whole, any other tail is torn."""
    return len(data) if isinstance(parse_line(tail), dict) else data.rfind(b"\n") + 1


def _find_header(lines: list[str]) -> tuple[int, Any]:
    """(index, value) of the first line holding a JSON object; (len, None) when none does."""
    for index, line in enumerate(lines):
        value = parse_line(line)
        if isinstance(value, dict):
            return index, value
    return len(lines), None


def _parse_body(lines: list[str], start: int) -> tuple[list[dict[str, Any]], list[int], list[int]]:
    """(objects, their 1-based line numbers, numbers of damaged lines) of `lines[start:]`. Blank lines and a
    torn last line (no newline after it) are not damage."""
    objects: list[dict[str, Any]] = []
    numbers: list[int] = []
    damaged: list[int] = []
    last = len(lines) - 1  # the text after the last newline: empty, or a torn line
    for index in range(start, len(lines)):
        line = lines[index]
        value = parse_line(line)
        if isinstance(value, dict):
            objects.append(value)
            numbers.append(index + 1)
        elif index != last and line and not line.isspace():
            damaged.append(index + 1)
    return objects, numbers, damaged


def read_header(path: Path) -> SessionHeader:
    """The header of a session file, reading only up to it. Raises SessionFileError exactly when `read_session`
    would (missing, not a regular file, unreadable, empty, no valid header, unsupported version), so a file that
    passes here opens.
    """
    with open_for_reading(path) as handle:
        try:
            values = (parse_line(line.decode("utf-8", "replace")) for line in handle)  # as read_session decodes
            header = next((obj for obj in values if isinstance(obj, dict)), None)
        except OSError as exc:
            raise _read_error(path, exc) from None
    if header is None and _is_blank(path):
        raise SessionFileError(f"session file is empty: {path}", detail="it is empty")
    return _checked_header(header, path)


def open_for_reading(path: Path) -> Any:
    """A binary file object for reading the regular file `path`. The target is checked before the open (a
    device or FIFO is never opened) and again on the descriptor, and the open does not block. Raises
    SessionFileError: `session file not found: <path>`, or `cannot read session file <path>: <reason>` (the
    OS's words, e.g. `Too many levels of symbolic links`, or `not a regular file but a FIFO (named pipe)`)."""
    try:
        _check_regular(os.stat(path).st_mode)
        fd = os.open(path, _READ_FLAGS)
    except OSError as exc:
        raise _read_error(path, exc) from None
    try:
        _check_regular(os.fstat(fd).st_mode)  # the path may have been replaced between the checks
        os.set_blocking(fd, True)
    except OSError as exc:
        os.close(fd)
        raise _read_error(path, exc) from None
    return os.fdopen(fd, "rb")


def check_readable(path: Path) -> None:
    """Raise what `open_for_reading` raises when `path` is missing or not a regular file, without opening it:
    every way of naming a session file (`--session`, `--fork`, `switch_session`) reports a path the same way."""
    try:
        _check_regular(os.stat(path).st_mode)
    except OSError as exc:
        raise _read_error(path, exc) from None


class _NotRegular(OSError):
    pass


def _check_regular(mode: int) -> None:
    if not stat.S_ISREG(mode):
        from .safe_read import describe_kind

        raise _NotRegular(f"not a regular file but {describe_kind(mode)}")


def _read_error(path: Path, exc: OSError) -> SessionFileError:
    """The one message for a session file the OS will not let us read."""
    if isinstance(exc, FileNotFoundError):
        return SessionFileError(f"session file not found: {path}", detail="it does not exist")
    reason = exc.strerror or str(exc)
    return SessionFileError(f"cannot read session file {path}: {reason}", detail=f"cannot be read: {reason}")


def _checked_header(header: Any, path: Path) -> SessionHeader:
    """`header` if it is a usable session header: `type: "session"`, string `id` and `cwd`, a supported version."""
    if not is_header(header) or not isinstance(header.get("cwd"), str):
        raise SessionFileError(f"session file has no valid session header: {path}",
                               detail="it has no valid session header")
    try:
        check_version(header)
    except ValueError as exc:
        raise SessionFileError(f"session file {path}: {exc}", detail=str(exc)) from None
    return header


def _is_blank(path: Path) -> bool:
    try:
        with open_for_reading(path) as handle:
            return all(not line.strip() for line in handle)
    except (OSError, SessionFileError):
        return False


def _split_lines(data: bytes) -> list[str]:
    """The file's lines, split on LF only (U+2028 and friends are ordinary characters in JSON strings), the
    text after the last LF (empty, or a torn line) last. Invalid UTF-8 becomes U+FFFD, so a damaged character
    costs that character, not its entry; decoding the whole file at once is much cheaper than per line."""
    return data.decode("utf-8", "replace").split("\n")


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


def _unique_entries(objects: list[dict[str, Any]], numbers: list[int], damaged: list[int]) -> list[SessionEntry]:
    """Entries in file order; a repeated id (hand-edited or concatenated file) keeps its first occurrence, since
    ids are durable cursors and must not be shadowed. An object that is no entry is added to `damaged` (by line
    number); an entry whose parent is missing after damage is linked to the entry before the damage."""
    entries: list[SessionEntry] = []
    seen: set[str] = set()
    pending = iter(damaged + [0])  # damaged line numbers in file order; 0 ends it
    next_damage = next(pending) or None
    anchor: str | None = None  # the last entry before the latest damaged line
    last_id: str | None = None
    damage_seen = False
    for obj, number in zip(objects, numbers):
        while next_damage is not None and next_damage < number:
            damage_seen, anchor, next_damage = True, last_id, next(pending) or None
        entry_id, kind, parent = obj.get("id"), obj.get("type"), obj.get("parentId")
        # is_entry(obj), inlined: this loop runs once per line of every file opened or listed
        if not (type(entry_id) is str and type(kind) is str and kind != "session"
                and (parent is None or type(parent) is str)):
            damaged.append(number)
            damage_seen, anchor = True, last_id
            continue
        if entry_id in seen:
            continue
        seen.add(entry_id)
        if damage_seen and parent is not None and parent not in seen:
            obj["parentId"] = anchor  # its parent was on a damaged line: keep the chain
        elif parent is None and "parentId" not in obj:
            obj["parentId"] = None  # every reader may rely on the base field being present
        entries.append(obj)  # type: ignore[arg-type]
        last_id = entry_id
    return entries


def _read_bytes(path: Path) -> bytes:
    with open_for_reading(path) as handle:
        try:
            return handle.read()
        except OSError as exc:
            raise _read_error(path, exc) from None


def encode_line(obj: dict[str, Any]) -> bytes:
    """One compact JSON line, UTF-8, LF-terminated; non-finite floats are written as null (`NaN` is not JSON,
    and other tools must be able to read the file). Raises TypeError/ValueError for values JSON cannot hold."""
    # Lone surrogates become U+FFFD: strict JSON readers reject a lone `\ud83d` escape.
    return json_wire.encode_utf8(json_wire.dumps(obj)) + b"\n"


class SessionFile:
    """The durable side of a session: creates the file atomically, then appends whole lines with `O_APPEND`.

    Every method raises SessionFileError (naming the file and the OS reason) when the OS refuses.
    """

    def __init__(self, path: Path, *, exists: bool, needs_newline: bool, fsync: bool,
                 torn_at: int | None = None) -> None:
        """`torn_at`: the size of the file's complete lines when it ends in a torn line (a crash): the first
        append cuts the torn bytes off, so they never become a damaged line in the middle of the file."""
        self.path = path
        self.exists = exists
        self._needs_newline = needs_newline  # the file ends in a torn line: the next write starts a fresh one
        self._torn_at = torn_at
        self._fsync = fsync
        self._fd: int | None = None

    def create(self, data: bytes) -> None:
        """Publish the file with its first lines: written under a temporary name, then renamed, so a crash
        leaves either no session file or one with a complete header. The descriptor stays open for appends
        (it follows the renamed file)."""
        if self.path.exists():
            raise SessionFileError(f"session file already exists: {self.path}")
        self._fd = self._publish(data, durable=self._fsync)
        self.exists, self._needs_newline = True, False

    def replace(self, data: bytes, backup: Path) -> None:
        """Atomically replace the file's whole content with `data` (a migration), keeping the original bytes
        at `backup` (a hard link when possible; an existing backup is left as it is)."""
        _keep_backup(self.path, backup)
        self.close()
        self._fd = self._publish(data, durable=True)  # replaces acknowledged entries: always durable
        self._needs_newline = False

    def lost(self) -> str | None:
        """How `path` stopped naming the file this object appends to: `"deleted"`, `"replaced by another
        file"`, `"replaced by a directory"` (any other kind), `"made unreachable (<OS reason>)"` (a symlink
        loop, a directory on the way replaced by a file: ELOOP, ENOTDIR, EACCES), or None while it still does.
        Appending through the open descriptor to a file the path no longer names would write to an inode
        nobody can reach."""
        try:
            current = os.stat(self.path)
        except FileNotFoundError:
            return "deleted"
        except OSError as exc:
            return f"made unreachable ({exc.strerror or exc})"
        if not stat.S_ISREG(current.st_mode):
            from .safe_read import describe_kind

            return f"replaced by {describe_kind(current.st_mode)}"
        if self._fd is None:
            return None
        mine = os.fstat(self._fd)
        if (mine.st_dev, mine.st_ino) != (current.st_dev, current.st_ino):
            return "replaced by another file"
        return None

    def recreate(self, data: bytes, backup: Path | None) -> None:
        """Write the whole file again at `path` with `data` (after `lost`), atomically and durably; a file
        that replaced it is kept at `backup` first."""
        if backup is not None and _is_regular(self.path):
            _keep_backup(self.path, backup)
        self.close()
        self._fd = self._publish(data, durable=True)
        self._needs_newline = False

    def append(self, data: bytes) -> None:
        """Append whole lines with one `os.write` (more only if the OS writes part of them). When the OS
        refuses (a full disk: ENOSPC; a file size limit: EFBIG), the bytes of `data` already written are cut
        off again, so the file ends with its last complete line and a retry appends nothing twice."""
        fd = self._open()
        start: int | None = None
        try:
            start = self._cut_torn_tail(fd, os.lseek(fd, 0, os.SEEK_END))
            _write_all(fd, b"\n" + data if self._needs_newline else data)
            if self._fsync:
                os.fsync(fd)
        except OSError as exc:
            self._cut_back(fd, start)
            raise self._error("write", exc) from None
        self._needs_newline = False

    def _cut_torn_tail(self, fd: int, end: int) -> int:
        """The file's end after cutting off the torn last line found when it was opened (once); when the cut
        fails, the append starts on a fresh line instead (`_needs_newline`)."""
        torn_at, self._torn_at = self._torn_at, None
        if torn_at is None or not 0 < torn_at < end:
            return end
        try:
            os.ftruncate(fd, torn_at)
        except OSError:
            return end
        self._needs_newline = False
        return torn_at

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

    def _publish(self, data: bytes, *, durable: bool) -> int:
        """Write `data` to a temporary file and rename it over `path`; returns the open append descriptor."""
        self._torn_at = None  # the whole file is written anew: nothing of the old one is cut any more
        temp = self.path.with_name(f".{self.path.name}.tmp")
        try:
            ensure_session_dir(self.path.parent)
            temp.unlink(missing_ok=True)  # left by a crash: start afresh (never write through a planted link)
            fd = os.open(temp, _WRITE_FLAGS | _NEW_FILE_FLAGS, FILE_MODE)
        except OSError as exc:
            raise self._error("create", exc) from None
        try:
            _write_all(fd, data)
            if durable:
                os.fsync(fd)
            os.replace(temp, self.path)
        except OSError as exc:
            os.close(fd)
            temp.unlink(missing_ok=True)
            raise self._error("write", exc) from None
        if durable:
            sync_dir(self.path.parent)
        return fd

    def _open(self) -> int:
        """The append descriptor of the existing file. Never creates it: a recreated file would lack its header."""
        if self._fd is None:
            try:
                fd = os.open(self.path, _WRITE_FLAGS | _NONBLOCK)  # a FIFO swapped in fails instead of waiting
            except OSError as exc:
                raise self._error("open", exc) from None
            try:
                _check_regular(os.fstat(fd).st_mode)
                os.set_blocking(fd, True)
            except OSError as exc:
                os.close(fd)
                raise self._error("open", exc) from None
            self._fd = fd
        return self._fd

    def _error(self, action: str, exc: OSError) -> SessionFileError:
        reason = exc.strerror or str(exc)
        return SessionFileError(f"cannot {action} session file {self.path}: {reason}", reason)


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _keep_backup(path: Path, backup: Path) -> None:
    if backup.is_file() and not backup.is_symlink():
        return  # a crash between backup and rewrite left it: it already holds the original bytes
    try:
        os.link(path, backup)
    except OSError:
        try:
            copy_private(path, backup)
        except OSError as exc:
            raise SessionFileError(f"cannot back up session file {path} before migrating it: "
                                   f"{exc.strerror or exc}") from None


def copy_private(source: Path, target: Path) -> None:
    """Copy the session file `source` to a new private (0600) file `target`; whatever was at `target` (a
    dangling link) is replaced, never written through. When the copy fails (a full disk), no partial `target`
    is left behind. Raises SessionFileError when `source` cannot be read, OSError when `target` cannot be
    written."""
    with open_for_reading(source) as handle:
        data = handle.read()
    target.unlink(missing_ok=True)
    fd = os.open(target, os.O_WRONLY | _NEW_FILE_FLAGS | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
    try:
        _write_all(fd, data)
    except OSError:
        os.close(fd)
        target.unlink(missing_ok=True)
        raise
    os.close(fd)


def ensure_session_dir(directory: Path) -> None:
    """Make `directory` (and its parents) unless it is one. Raises SessionDirError (an OSError) whose
    `strerror` names the directory and why it is none: `session directory <dir> is not a directory: <reason>`
    (`Not a directory`, `Too many levels of symbolic links`, `it is a FIFO (named pipe)`), instead of the
    bare `File exists` of `mkdir`."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        return
    except FileExistsError:
        pass
    except NotADirectoryError as exc:
        raise SessionDirError(exc.errno, f"session directory {directory} is not a directory: "
                              f"{exc.strerror or exc}") from None
    try:
        mode = os.stat(directory).st_mode
    except OSError as exc:
        raise SessionDirError(exc.errno, f"session directory {directory} is not a directory: "
                              f"{exc.strerror or exc}") from None
    from .safe_read import describe_kind

    raise SessionDirError(None, f"session directory {directory} is not a directory: it is "
                          f"{describe_kind(mode) if not stat.S_ISREG(mode) else 'a regular file'}")


def write_new_private(target: Path, data: bytes) -> None:
    """Write `data` to a new private (0600) file `target` that must not exist, durably; no partial file is
    left when that fails. Raises OSError (FileExistsError when `target` exists)."""
    fd = os.open(target, os.O_WRONLY | _NEW_FILE_FLAGS | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
    try:
        _write_all(fd, data)
        os.fsync(fd)
    except OSError:
        os.close(fd)
        target.unlink(missing_ok=True)
        raise
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
