"""Replacing a file's content all or nothing: a write that fails (full disk, quota, file size limit) leaves the
old bytes, or no file at all."""

from __future__ import annotations

import errno
import os
import stat

from .file_kinds import check_target, open_regular
from ..paths import same_file, sync_dir, write_all

_TEMP_NAME_BYTES = 200  # of the target's name in the temp file's: with the suffix it stays under NAME_MAX (255)
_CANNOT_RESERVE = {errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS}  # filesystems without posix_fallocate
_CANNOT_SYNC = {errno.EINVAL, errno.EOPNOTSUPP, errno.ENOSYS}
_RENAME_REFUSED = {errno.EBUSY, errno.EXDEV, errno.EPERM, errno.EACCES}
"""A file that is a mount point (a bind-mounted file in a container), or someone else's in a sticky directory,
cannot be renamed over, but may still be written."""


class _InPlace(Exception):
    """The file cannot be replaced by a new one (see `replace_contents`): it must be overwritten in place."""


def replace_contents(path: str, data: bytes) -> None:
    """Make the file at the absolute `path` hold exactly `data`, creating it when missing; blocking.

    A symlink is followed: its final target gets the new content, the link stays a link. The data goes to a
    temp file `.<name>.<random>.tmp` beside the target, is fsynced, gets the old file's permission bits (a new
    file: 0o666 less the umask) and owner, and is renamed over the target; a failure removes the temp file.
    A file is overwritten in place instead when a new inode would be wrong or cannot be made: it has other
    hard links (they would keep the old content), its owner or group cannot be given to a new file (not
    root), its directory is not writable, or the rename is refused (a bind-mounted file). In place, the space
    is reserved first (`posix_fallocate`), so a full disk fails before a byte changes; if writing fails anyway
    (a copy-on-write filesystem), the old bytes are put back. A file without write permission for us is
    refused, as opening it for writing would be. Raises `OSError` (the file as it was), or `ToolError` for a
    file of a kind that is never written (`file_kinds.check_target`).
    """
    try:
        info: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        info = None
    if info is not None:
        check_target(info, path, writing=True)
        if not os.access(path, os.W_OK):  # a rename would get past a read-only file's mode: it must not
            os.close(open_regular(path, os.O_WRONLY))  # raises with the OS's own reason (EACCES, EROFS)
    target = os.path.realpath(path)
    try:
        if info is not None and not same_file(target, info):
            raise _InPlace  # a link realpath cannot follow (`/proc/<pid>/fd/<n>` of a deleted file)
        _replace(target, data, info)
    except _InPlace:
        _overwrite(path, data)


def _replace(target: str, data: bytes, info: os.stat_result | None) -> None:
    if info is not None and (info.st_nlink > 1 or not _can_own(info)):
        raise _InPlace
    try:
        fd, temp = _create_temp(target)
    except PermissionError:
        if info is None:
            raise
        raise _InPlace from None
    try:
        _fill(fd, data, info)
        try:
            os.replace(temp, target)
        except OSError as exc:
            if exc.errno in _RENAME_REFUSED and info is not None:
                raise _InPlace from None
            raise
    except BaseException:
        _unlink_quietly(temp)
        raise
    sync_dir(os.path.dirname(target))


def _fill(fd: int, data: bytes, info: os.stat_result | None) -> None:
    """Write the temp file `fd` durably, with the old file's (`info`) ownership; closes `fd`."""
    try:
        write_all(fd, data)
        if info is not None:
            _copy_ownership(fd, info)
        _fsync(fd)
    finally:
        os.close(fd)

def _can_own(info: os.stat_result) -> bool:
    """Whether a new file of ours can take `info`'s owner (root can give any; others keep their own)."""
    return not hasattr(os, "geteuid") or os.geteuid() == 0 or info.st_uid == os.geteuid()


def _create_temp(target: str) -> tuple[int, str]:
    """A new empty file beside `target`, opened for writing; (descriptor, path)."""
    directory, name = os.path.split(target)
    prefix = os.fsdecode(b"." + os.fsencode(name)[:_TEMP_NAME_BYTES] + b".")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    while True:
        temp = os.path.join(directory, f"{prefix}{os.urandom(8).hex()}.tmp")
        try:
            return os.open(temp, flags, 0o666), temp
        except FileExistsError:  # 64 random bits: only a planted name gets here
            continue


def _copy_ownership(fd: int, info: os.stat_result) -> None:
    """Give the temp file the old file's permission bits, owner and group; `_InPlace` when the group cannot
    be given (a group the user is not in)."""
    own = os.fstat(fd)
    if hasattr(os, "fchown") and (own.st_uid, own.st_gid) != (info.st_uid, info.st_gid):
        try:
            os.fchown(fd, info.st_uid, info.st_gid)
        except PermissionError:
            raise _InPlace from None
    os.fchmod(fd, stat.S_IMODE(info.st_mode))  # after chown, which clears the setuid and setgid bits


def _overwrite(path: str, data: bytes) -> None:
    """Write `data` over the file at `path` in place (its inode, links and owner stay), restoring its old bytes
    when a write fails after the space was reserved."""
    fd = open_regular(path, os.O_RDWR)
    try:
        old = _read_all(fd)
        _reserve(fd, len(data), len(old))
        try:
            _put(fd, data)
        except OSError:
            try:
                _put(fd, old)
            except OSError:
                pass  # nothing better is left to do: the first error is the one reported
            raise
    finally:
        os.close(fd)


def _reserve(fd: int, size: int, old_size: int) -> None:
    """Allocate `size` bytes for the file now, so a full disk or quota fails before its content changes."""
    if size <= old_size:
        return
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as exc:
        if exc.errno in _CANNOT_RESERVE:
            return
        try:
            os.ftruncate(fd, old_size)  # a failed reservation may have grown the file (never its old bytes)
        except OSError:
            pass
        raise


def _put(fd: int, data: bytes) -> None:
    os.lseek(fd, 0, os.SEEK_SET)
    write_all(fd, data)
    os.ftruncate(fd, len(data))
    _fsync(fd)


def _fsync(fd: int) -> None:
    """`os.fsync`, where a filesystem that cannot sync (some FUSE and network ones) is no failure; a late
    ENOSPC or EIO (NFS reports them here) is."""
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in _CANNOT_SYNC:
            raise


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
