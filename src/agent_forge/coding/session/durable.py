"""Writing a session file crash-safely: creating it atomically, appending whole lines, replacing it whole.

Durability: a new file appears atomically (written under a temporary name, then renamed) with its header and
first entries; each later append is one `os.write` of a whole line to a descriptor opened with `O_APPEND`, with
no user-space buffering. A process killed at any moment thus leaves every acknowledged entry in the file and at
worst a torn last line; parsing skips lines that are not JSON objects and the next append starts on a fresh
line. A failed append (a full disk) is cut back to the file's previous end, so the file never holds a torn
line in its middle. A whole-file rewrite (migration of an old version) is also atomic and keeps the original
as a backup. Reading and parsing the bytes is `reading.py`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..paths import path_text
from .file_lines import check_regular_mode, open_for_reading
from ..errors import SessionDirError, SessionFileError

FILE_MODE = 0o600  # sessions hold prompts, file contents and command output: private to the user
_WRITE_FLAGS = os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_NEW_FILE_FLAGS = os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)  # a file of our own, never a link's target
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class SessionFile:
    """The durable side of a session: creates the file atomically, then appends whole lines with `O_APPEND`.

    Every method raises SessionFileError (naming the file and the OS reason) when the OS refuses.
    """

    def __init__(self, path: Path, *, exists: bool, needs_newline: bool, fsync: bool,
                 torn_at: int | None = None, size: int | None = None) -> None:
        """`torn_at`: the size of the file's complete lines when it ends in a torn line (a crash): the first
        append cuts the torn bytes off, so they never become a damaged line in the middle of the file. `size`:
        the existing file's size in bytes when it was read (None: unknown, not checked until written)."""
        self.path = path
        self.exists = exists
        self._needs_newline = needs_newline  # the file ends in a torn line: the next write starts a fresh one
        self._torn_at = torn_at
        self._fsync = fsync
        self._fd: int | None = None
        # Bytes in the file as this object last left it (None: unknown); another size means someone else
        # truncated or appended to it (`lost`): checked from the stat `lost` makes anyway, never by re-reading.
        self._end = size

    def create(self, data: bytes) -> None:
        """Publish the file with its first lines: written under a temporary name, then renamed, so a crash
        leaves either no session file or one with a complete header. The descriptor stays open for appends
        (it follows the renamed file)."""
        if self.path.exists():
            raise SessionFileError(f"session file already exists: {path_text(self.path)}")
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
        loop, a directory on the way replaced by a file: ELOOP, ENOTDIR, EACCES), `"truncated to N of M bytes"`,
        `"appended to by another process (N bytes)"` (the size is not the one this object left), or None while
        it still does. Appending through the open descriptor to a file the path no longer names would write to
        an inode nobody can reach; appending to a changed one would lose its header or glue a line to foreign
        bytes."""
        try:
            current = os.stat(self.path)
        except FileNotFoundError:
            return "deleted"
        except OSError as exc:
            return f"made unreachable ({exc.strerror or exc})"
        if not stat.S_ISREG(current.st_mode):
            from ..safe_read import describe_kind

            return f"replaced by {describe_kind(current.st_mode)}"
        if self._fd is not None:
            mine = os.fstat(self._fd)
            if (mine.st_dev, mine.st_ino) != (current.st_dev, current.st_ino):
                return "replaced by another file"
        return _size_change(current.st_size, self._end)

    def recreate(self, data: bytes, backup: Path | None) -> None:
        """Write the whole file again at `path` with `data` (after `lost`), atomically and durably; a
        non-empty file found there (one that replaced it, or it changed by someone else) is kept at `backup`
        first."""
        if backup is not None and _is_non_empty_regular(self.path):
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
            payload = b"\n" + data if self._needs_newline else data
            _write_all(fd, payload)
            self._end = start + len(payload)
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
            self._end = offset
        except OSError:
            self._needs_newline, self._end = True, None  # a torn line of our own: not someone else's change

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
        self._end = len(data)
        return fd

    def _open(self) -> int:
        """The append descriptor of the existing file. Never creates it: a recreated file would lack its header."""
        if self._fd is None:
            try:
                fd = os.open(self.path, _WRITE_FLAGS | _NONBLOCK)  # a FIFO swapped in fails instead of waiting
            except OSError as exc:
                raise self._error("open", exc) from None
            try:
                check_regular_mode(os.fstat(fd).st_mode)
                os.set_blocking(fd, True)
            except OSError as exc:
                os.close(fd)
                raise self._error("open", exc) from None
            self._fd = fd
        return self._fd

    def _error(self, action: str, exc: OSError) -> SessionFileError:
        reason = exc.strerror or str(exc)
        return SessionFileError(f"cannot {action} session file {path_text(self.path)}: {reason}", reason)


def _is_non_empty_regular(path: Path) -> bool:
    """True when `path` is a regular file (not followed when a link) holding at least one byte."""
    try:
        found = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(found.st_mode) and found.st_size > 0


def _size_change(size: int, expected: int | None) -> str | None:
    """How a file of `size` bytes differs from the `expected` size (None: unknown, never a change)."""
    if expected is None or size == expected:
        return None
    if size < expected:
        return f"truncated to {size} of {expected} bytes"
    return f"appended to by another process ({size - expected} bytes)"


def _keep_backup(path: Path, backup: Path) -> None:
    if backup.is_file() and not backup.is_symlink():
        return  # a crash between backup and rewrite left it: it already holds the original bytes
    try:
        os.link(path, backup)
    except OSError:
        try:
            copy_private(path, backup)
        except OSError as exc:
            raise SessionFileError(f"cannot back up session file {path_text(path)} before migrating it: "
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
        raise SessionDirError(exc.errno, f"session directory {path_text(directory)} is not a directory: "
                              f"{exc.strerror or exc}") from None
    try:
        mode = os.stat(directory).st_mode
    except OSError as exc:
        raise SessionDirError(exc.errno, f"session directory {path_text(directory)} is not a directory: "
                              f"{exc.strerror or exc}") from None
    from ..safe_read import describe_kind

    raise SessionDirError(None, f"session directory {path_text(directory)} is not a directory: it is "
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
