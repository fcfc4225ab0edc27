"""The single-writer lock of a session file: an advisory `flock` on a `<session file>.lock` beside it.

A process takes the lock when it starts writing a session (opening it to resume, or creating it) and holds it
until it closes the session, so two agent-forge processes never interleave appends in one file. The lock file
holds the holder's pid for the error message. The kernel drops a `flock` when its holder dies (even by
SIGKILL), so a lock file left behind by a crash never blocks anyone: it is simply taken over.

The lock belongs to the file, not to the name it was reached by: `acquire` resolves symlinks first, so a
session opened through a link and through its real path shares one lock. A hard link (another name of the
same inode) has its own lock file, so a held lock also holds a `flock` on the session file itself (`hold_inode`,
taken once the file exists and again after it is rewritten): a second process reaching the file by a hard link
is refused too (its message cannot name the holder's pid).

Locks are per open file description, so a second lock on the same file from the same process also fails;
callers that reopen their own session hand the lock over instead (see `SessionStore.open`). Where `fcntl` is
missing (Windows) locking is a no-op.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..paths import path_text, same_file
from .durable import FILE_MODE
from ..errors import SessionFileError, SessionLockError

_ATTEMPTS = 20  # each retry means another process replaced the lock file in between: give up eventually
_held: set[SessionLock] = set()


LOCK_SUFFIX = ".lock"


def lock_path_for(session_path: Path) -> Path:
    """`<dir>/<name>.jsonl` → `<dir>/<name>.jsonl.lock` (not matched by session listings, which glob `*.jsonl`)."""
    return session_path.with_name(session_path.name + LOCK_SUFFIX)


class SessionLock:
    """A held lock. Build it with `SessionLock.acquire`; `release` is idempotent."""

    def __init__(self, session_path: Path, fd: int | None) -> None:
        self.session_path = session_path
        self._fd = fd
        self._inode_fd: int | None = None  # a flock on the session file itself: see `hold_inode`

    @classmethod
    def acquire(cls, session_path: str | os.PathLike[str]) -> SessionLock:
        """Take the lock of `session_path` (symlinks resolved: `session_path` on the lock is the real path)
        without waiting.

        Raises SessionLockError when another process (or another store of this process) holds it, and
        SessionFileError when the lock file cannot be created (e.g. a read-only directory, or a symlink planted
        at the lock file's name).
        """
        path = Path(os.path.realpath(session_path))
        try:
            import fcntl
        except ImportError:
            return cls(path, None)
        for _ in range(_ATTEMPTS):
            fd = _open_lock_file(path)
            if _try_flock(fcntl, fd, path) and _still_linked(fd, lock_path_for(path)):
                _write_pid(fd)
                lock = cls(path, fd)
                _held.add(lock)
                return lock
            os.close(fd)  # the previous holder unlinked the file we locked: lock the current one
        raise SessionFileError(f"cannot lock session file {path_text(path)}: its lock file keeps changing")

    @property
    def held(self) -> bool:
        return self._fd is not None

    def hold_inode(self) -> None:
        """Also lock the file now at `session_path` (a `flock` on the file itself, shared by all its hard
        links); a lock on a file it replaced is dropped. Raises SessionLockError when another process holds
        it. Opening never blocks and only a regular file is locked (anything else: nothing to hold)."""
        try:
            import fcntl
        except ImportError:
            return
        self._drop_inode()
        try:
            fd = os.open(self.session_path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return  # the file is gone or unreadable: its own open reports that
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._inode_fd, fd = fd, -1
        except BlockingIOError:
            raise SessionLockError(self.session_path, None) from None
        except OSError:
            pass  # no flock on this filesystem: the lock file still guards this name
        finally:
            if fd >= 0:
                os.close(fd)

    def _drop_inode(self) -> None:
        if self._inode_fd is not None:
            fd, self._inode_fd = self._inode_fd, None
            os.close(fd)

    def release(self) -> None:
        """Remove the lock file, then drop the lock (in that order, so nobody locks a file about to vanish)."""
        self._drop_inode()
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        _held.discard(self)
        try:
            if _still_linked(fd, lock_path_for(self.session_path)):
                lock_path_for(self.session_path).unlink()
        except OSError:
            pass  # a stale lock file is harmless: the flock, not the file, is the lock
        finally:
            os.close(fd)

    def abandon(self) -> None:
        """Drop the lock as an exiting process does: the flocks go, the lock file stays behind (stale: its
        pid names no live holder). For in-process runs that stand for a process (`agent_forge.testing`)."""
        self._drop_inode()
        if self._fd is not None:
            fd, self._fd = self._fd, None
            _held.discard(self)
            os.close(fd)

    def __repr__(self) -> str:
        return f"SessionLock({str(self.session_path)!r}, held={self.held})"


def held_locks() -> frozenset[SessionLock]:
    """The locks this process holds now."""
    return frozenset(_held)


def release_held_locks() -> None:
    """Release every lock this process holds: the last resort of an interrupted start-up (Ctrl-C before a
    session could be closed), so no lock file is left behind."""
    for lock in list(_held):
        lock.release()


def _open_lock_file(path: Path) -> int:
    try:
        # O_NOFOLLOW: the pid is written into the lock file, so a link there must not redirect that write.
        # O_NONBLOCK: a FIFO planted at the lock file's name must not make the open wait.
        flags = (os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_NONBLOCK", 0))
        return os.open(lock_path_for(path), flags, FILE_MODE)
    except OSError as exc:
        raise SessionFileError(f"cannot create lock file for session file {path_text(path)}: "
                               f"{exc.strerror or exc}") from None


def _try_flock(fcntl: object, fd: int, path: Path) -> bool:
    """True once locked; raises SessionLockError (naming the holder) when someone else holds it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # type: ignore[attr-defined]
    except BlockingIOError:
        pid = _read_pid(fd)
        os.close(fd)
        raise SessionLockError(path, pid) from None
    except OSError as exc:  # e.g. a filesystem without flock support: refuse rather than write unguarded
        os.close(fd)
        raise SessionFileError(f"cannot lock session file {path_text(path)}: {exc.strerror or exc}") from None
    return True


def _still_linked(fd: int, lock_path: Path) -> bool:
    """True when `lock_path` still names the file behind `fd`."""
    try:
        mine = os.fstat(fd)
    except OSError:
        return False
    return same_file(mine, lock_path)


def _write_pid(fd: int) -> None:
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except OSError:
        pass  # the pid only improves the error message others see


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
