"""Writing a session file crash-safely: creating it atomically, appending whole lines, replacing it whole.

Durability: a new file appears atomically (written under a temporary name, then renamed) with its header and
first entries; each later append writes its whole lines with one `os.write` (another only for what a short write
left) to a descriptor opened with `O_APPEND`, with no user-space buffering. A process killed at any moment thus leaves every acknowledged entry in the file and at
worst a torn last line; parsing skips lines that are not JSON objects and the next append starts on a fresh
line. A failed append (a full disk) is cut back to the file's previous end, so the file never holds a torn
line in its middle. A whole-file rewrite (migration of an old version) is also atomic and keeps the original
as a backup. Reading and parsing the bytes is `reading.py`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..paths import path_text, sync_dir, write_all
from .file_lines import check_regular_mode, open_for_reading
from ..errors import SessionDirError, SessionFileError

FILE_MODE = 0o600  # sessions hold prompts, file contents and command output: private to the user
# Read and write: `lost` reads back the file's last bytes through the same descriptor (`pread`).
_WRITE_FLAGS = os.O_RDWR | os.O_APPEND | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_NEW_FILE_FLAGS = os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)  # a file of our own, never a link's target
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
TAIL_BYTES = 4096
"""How many of the file's last bytes `SessionFile.lost` compares with those it wrote (one page: a same-size
overwrite within the file system's timestamp tick still shows there)."""


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
        # The file as this object last left it (None: unknown): its size, modification time and last bytes.
        # Another size means someone else truncated or appended to it, another time or other last bytes that
        # someone overwrote it in place (`lost`): checked from one stat and one page, never by re-reading it.
        self._end = size
        self._mtime: int | None = None
        self._tail: bytes | None = None
        if exists and size is not None:
            self._remember_path(size)

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
        return _size_change(current.st_size, self._end) or self._overwritten(current)

    def _overwritten(self, current: os.stat_result) -> str | None:
        """`"overwritten in place by another process (same size, N bytes)"` when a file of the size this object
        left has another modification time (a `touch` counts too: the file is kept as the backup, nothing is
        lost) or other last bytes; None when it looks as this object left it or that is unknown."""
        if self._end is None or self._tail is None:
            return None
        try:
            same = current.st_mtime_ns == self._mtime and _read_tail(self.path, self._fd, self._end) == self._tail
        except OSError:  # unreadable now: the write that follows says why
            return None
        return None if same else f"overwritten in place by another process (same size, {self._end} bytes)"

    def _remember(self, fd: int, end: int) -> None:
        """Note the file as this object just left it through `fd`: `end` bytes (the last ones read back)."""
        self._end = end
        try:
            self._mtime, self._tail = os.fstat(fd).st_mtime_ns, _read_tail(self.path, fd, end)
        except OSError:  # the size alone is still checked
            self._mtime = self._tail = None

    def _remember_path(self, size: int) -> None:
        """Note an existing file of `size` bytes (as it was read) before the first write; nothing when it is
        already another size (`lost` reports that) or cannot be read."""
        try:
            current = os.stat(self.path)
            if current.st_size == size:
                self._mtime, self._tail = current.st_mtime_ns, _read_tail(self.path, None, size)
        except OSError:
            self._mtime = self._tail = None

    def recreate(self, data: bytes, backup: Path | None) -> Path | None:
        """Write the whole file again at `path` with `data` (after `lost`), atomically and durably; a
        non-empty file found there (one that replaced it, or it changed by someone else) is kept first at
        `backup`, or the first of its numbered names that is free (`numbered_backup`); returns where."""
        kept = None
        if backup is not None and _is_non_empty_regular(self.path):
            kept = keep_new_backup(self.path, backup)
        self.close()
        self._fd = self._publish(data, durable=True)
        self._needs_newline = False
        return kept

    def append(self, data: bytes) -> None:
        """Append whole lines with one `os.write` (more only if the OS writes part of them). When the OS
        refuses (a full disk: ENOSPC; a file size limit: EFBIG), the bytes of `data` already written are cut
        off again, so the file ends with its last complete line and a retry appends nothing twice."""
        fd = self._open()
        start: int | None = None
        try:
            start = self._cut_torn_tail(fd, os.lseek(fd, 0, os.SEEK_END))
            payload = b"\n" + data if self._needs_newline else data
            write_all(fd, payload)
            if self._fsync:
                os.fsync(fd)
        except OSError as exc:
            self._cut_back(fd, start)
            raise self._error("write", exc) from None
        self._needs_newline = False
        self._remember(fd, start + len(payload))

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
            self._needs_newline, self._end = True, None  # a torn line of our own: not someone else's change
            self._tail = None
            return
        self._remember(fd, offset)

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
            write_all(fd, data)
            if durable:
                os.fsync(fd)
            os.replace(temp, self.path)
        except OSError as exc:
            os.close(fd)
            temp.unlink(missing_ok=True)
            raise self._error("write", exc) from None
        if durable:
            sync_dir(self.path.parent)
        self._end, self._mtime, self._tail = len(data), os.fstat(fd).st_mtime_ns, data[-TAIL_BYTES:]
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


def _read_tail(path: Path, fd: int | None, end: int) -> bytes:
    """The bytes of the file before offset `end` (at most `TAIL_BYTES`), read through `fd` or, when None, a
    descriptor of its own (never blocking). Raises OSError."""
    count = min(end, TAIL_BYTES)
    if fd is not None:
        return os.pread(fd, count, end - count)
    own = os.open(path, os.O_RDONLY | _NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        return os.pread(own, count, end - count)
    finally:
        os.close(own)


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


MAX_BACKUPS = 1000
"""How many numbered backups of one kind `keep_new_backup` makes beside a session file before it gives up."""


def numbered_backup(backup: Path, number: int) -> Path:
    """`<file>.changed.bak` for 0, `<file>.changed.1.bak` for 1, ...: the backup names tried in turn."""
    return backup if number == 0 else backup.with_name(f"{backup.name.removesuffix('.bak')}.{number}.bak")


def keep_new_backup(path: Path, backup: Path) -> Path:
    """Keep the file at `path` as a new backup, never over an earlier one: at `backup` or the first free name
    of `numbered_backup` (a hard link when possible, else a private copy); returns it. Raises
    SessionFileError when none can be made."""
    for number in range(MAX_BACKUPS):
        target = numbered_backup(backup, number)
        try:
            try:
                os.link(path, target, follow_symlinks=False)
            except FileExistsError:
                continue
            except OSError:  # no hard links here: a copy, made only where nothing is
                with open_for_reading(path) as handle:
                    write_new_private(target, handle.read())
            return target
        except FileExistsError:
            continue
        except OSError as exc:
            raise SessionFileError(f"cannot back up session file {path}: {exc.strerror or exc}") from None
    raise SessionFileError(f"cannot back up session file {path}: {MAX_BACKUPS} backups of it exist already")


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
        write_all(fd, data)
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
        write_all(fd, data)
        os.fsync(fd)
    except OSError:
        os.close(fd)
        target.unlink(missing_ok=True)
        raise
    os.close(fd)
