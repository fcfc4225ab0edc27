"""The private per-user temp directory `<temp dir>/agent-forge-<uid>`: full shell outputs, `/copy`'s file.

The temp dir is `TMPDIR` (else `TEMP`, `TMP`, then `/tmp`), usually shared by every user of the machine, so
each directory made here is checked to be this user's own real directory (not a link another user planted,
not theirs), mode 0700, and files in it are created 0600 without following links.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def user_temp_dir() -> Path:
    """`<temp dir>/agent-forge-<uid>` (not made here; no `tempfile` import: the prune runs during start-up)."""
    temp = next((os.environ[name] for name in ("TMPDIR", "TEMP", "TMP") if os.environ.get(name)), "/tmp")
    user = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return Path(os.path.abspath(temp)) / f"agent-forge-{user}"


def private_dir(path: Path, *, inside_private: bool = False) -> None:
    """Make `path` a directory only this user can enter; refuse one that is a link, someone else's (a shared
    temp dir) or open to others (group or other permission bits: they could replace its files): OSError.
    `inside_private`: its parent passed this check, so no other user reaches it and its mode is not checked."""
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        pass
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
        raise OSError(f"{path} is not a private directory of this user")
    if not inside_private and stat.S_IMODE(info.st_mode) & 0o077:
        raise OSError(f"{path} is not a private directory of this user (mode {stat.S_IMODE(info.st_mode):o}; "
                      f"`chmod 700` it)")


def write_private_file(name: str, text: str) -> Path:
    """Write `text` (UTF-8) to `user_temp_dir()/name`, replacing it whole; returns the path. The file is new,
    mode 0600, written beside it first (`durable.write_new_private`) and renamed over it, so a link planted
    under that name is replaced, never followed. `name` must be a plain file name. Raises OSError (the
    directory is not private, a full disk: nothing half-written is left)."""
    from .session.durable import write_new_private  # a `/copy`, not start-up (the prune imports this module)

    directory = user_temp_dir()
    private_dir(directory)
    temp = directory / f".{name}.{os.getpid()}.{os.urandom(4).hex()}"
    write_new_private(temp, text.encode("utf-8"))
    try:
        os.replace(temp, directory / name)
    except OSError:
        temp.unlink(missing_ok=True)
        raise
    return directory / name
