"""Where the full output of long shell commands is kept: one private directory per session, pruned at start-up.

Layout: `<temp dir>/agent-forge-<uid>/bash-output/<session id>/bash-<random>.log` (`mcp-<server>-<random>.log`
for a cut MCP result), plus `owner.json`
(`OwnerRecord`: the session file and the pid of the process that last used the directory). The temp dir is
`TMPDIR` (else `TEMP`, `TMP`, then `/tmp`). It is the temp dir, not the session directory,
because these files can be hundreds of megabytes of transient output: they must not fill the disk or quota
that holds the sessions themselves, and the OS may clear them at reboot (a session then only loses the
complete output, never its truncated copy in the session file).

A directory is removed (`prune`, run once per process in the background; `OutputDir.remove` for in-memory
sessions at exit) when nothing in it changed for `MAX_AGE_DAYS`, or when no live process owns it and its
session file does not exist (the session was deleted, or it was a `--no-session` run that was killed).
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from pathlib import Path
from typing import TypedDict

from ..private_temp import private_dir, user_temp_dir

MAX_AGE_DAYS = 7
"""Full outputs of a session untouched for this long are deleted at the next start-up of any agent-forge."""
MAX_AGE_S = MAX_AGE_DAYS * 24 * 3600
OWNER_FILE = "owner.json"
LEGACY_PREFIX = "agent-forge-bash-"  # files of older versions, directly in the temp dir: pruned by age
PRUNE_WAIT_S = 10.0  # the first new output file waits at most this long for a slow prune to finish
_SAFE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}")


class OwnerRecord(TypedDict):
    """`owner.json`: `sessionFile` is the session's file (null for an in-memory session), `pid` the process
    that last wrote into the directory."""

    sessionFile: str | None
    pid: int


def outputs_root() -> Path:
    """`<temp dir>/agent-forge-<uid>/bash-output` (`private_temp.user_temp_dir`)."""
    return user_temp_dir() / "bash-output"


class OutputDir:
    """The full-output directory of one session, made on first use."""

    def __init__(self, session_id: str, session_file: str | None):
        self.session_id = session_id
        self.session_file = session_file
        self.used = False  # a file was made here by this process
        self.made = False  # this process made (or found) the directory: `remove` takes it, even with no file

    @property
    def path(self) -> Path:
        return outputs_root() / _dir_name(self.session_id)

    def create_file(self, prefix: str = "bash") -> tuple[int, str]:
        """A new private `<prefix>-<random>.log` here (`bash-...`; an MCP server's results `mcp-<server>-...`):
        (open descriptor, path). `prefix` must be safe in a file name. Raises OSError."""
        directory = self._ensure()
        flags = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
                 | getattr(os, "O_BINARY", 0))
        path = str(directory / f"{prefix}-{os.urandom(8).hex()}.log")
        fd = os.open(path, flags, 0o600)
        self.used = True
        return fd, path

    def remove(self) -> None:
        """Delete the directory and what it holds (nothing happens when it was never made)."""
        if self.used or self.made:
            remove_tree(self.path)

    def _ensure(self) -> Path:
        wait_for_pruning()  # a prune must not delete the directory it is about to be given
        directory = self.path
        private_dir(directory.parent.parent)
        private_dir(directory.parent, inside_private=True)
        private_dir(directory, inside_private=True)
        self.made = True
        if not self.used:
            _write_owner(directory, OwnerRecord(sessionFile=self.session_file, pid=os.getpid()))
        return directory


class SessionOutputs:
    """The output directories of every session one process ran commands for (new_session and switches move
    on to another), latest last."""

    def __init__(self) -> None:
        self._dirs: list[OutputDir] = []

    def current(self, session_id: str, session_file: str | None) -> OutputDir:
        """The directory of session `session_id` (whose file is `session_file`, None in memory)."""
        latest = self._dirs[-1] if self._dirs else None
        if latest is None or latest.session_id != session_id:
            latest = OutputDir(session_id, session_file)
            self._dirs.append(latest)
        return latest

    def remove_memory_outputs(self) -> None:
        """In-memory sessions end with the process: their full outputs go with them."""
        for directory in self._dirs:
            if directory.session_file is None:
                directory.remove()


def _write_owner(directory: Path, record: OwnerRecord) -> None:
    """Replace `owner.json` in `directory` whole (a reader never sees half of it); a failed write (a full temp
    dir) leaves no temp file behind. Raises OSError."""
    temp = directory / f".{OWNER_FILE}.{os.getpid()}"
    try:
        temp.write_text(json.dumps(record), encoding="utf-8")
        os.replace(temp, directory / OWNER_FILE)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


_process_dir: OutputDir | None = None


def process_output_dir() -> OutputDir:
    """The directory of commands run outside a session (a tool used on its own): `process-<pid>`, removed by
    the first prune after this process ended."""
    global _process_dir
    if _process_dir is None:
        _process_dir = OutputDir(f"process-{os.getpid()}", None)
    return _process_dir


def _dir_name(session_id: str) -> str:
    """The session id when it is a safe single path component (ids come from files that may be hand-edited),
    else a digest of it."""
    if _SAFE_NAME.fullmatch(session_id) and session_id not in (".", ".."):
        return session_id
    import hashlib

    return "id-" + hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]


# pruning


def prune(now: float | None = None) -> list[Path]:
    """Remove the stale session directories (see the module docstring) and legacy files older than the age
    limit; returns what was removed. Errors are skipped: another process may be pruning too."""
    now = time.time() if now is None else now
    removed: list[Path] = []
    try:
        root = outputs_root()
        entries = list(os.scandir(root)) if root.is_dir() else []
    except OSError:
        entries = []
    for entry in entries:
        if entry.is_dir(follow_symlinks=False) and _is_stale(Path(entry.path), now):
            remove_tree(Path(entry.path))
            removed.append(Path(entry.path))
    removed.extend(_prune_legacy(now))
    return removed


def _is_stale(directory: Path, now: float) -> bool:
    if now - _newest_mtime(directory) > MAX_AGE_S:
        return True
    owner = _read_owner(directory)
    if _alive(owner.get("pid")):
        return False  # its session may not have written its file yet
    session_file = owner.get("sessionFile")
    return not isinstance(session_file, str) or not os.path.exists(session_file)


def _read_owner(directory: Path) -> dict:
    try:
        value = json.loads((directory / OWNER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _alive(pid: object) -> bool:
    if type(pid) is not int or pid <= 0:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: it exists
    except (OverflowError, OSError):
        return False
    return True


def _newest_mtime(directory: Path) -> float:
    newest = 0.0
    try:
        newest = directory.stat().st_mtime
        for entry in os.scandir(directory):
            newest = max(newest, entry.stat(follow_symlinks=False).st_mtime)
    except OSError:
        pass
    return newest


def _prune_legacy(now: float) -> list[Path]:
    """`agent-forge-bash-*.log` files of older versions, directly in the temp dir, older than the age limit."""
    removed: list[Path] = []
    try:
        entries = [e for e in os.scandir(outputs_root().parent.parent) if e.name.startswith(LEGACY_PREFIX)]
    except OSError:
        return removed
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
            if (entry.is_file(follow_symlinks=False) and now - info.st_mtime > MAX_AGE_S
                    and (not hasattr(os, "getuid") or info.st_uid == os.getuid())):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            continue
    return removed


def remove_tree(path: Path) -> None:
    """Delete a directory of plain files (and the directory); links are removed, never followed."""
    try:
        entries = list(os.scandir(path))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                remove_tree(Path(entry.path))
            else:
                os.unlink(entry.path)
        except OSError:
            continue
    try:
        os.rmdir(path)
    except OSError:
        pass


_pruner: threading.Thread | None = None
_pruner_lock = threading.Lock()


def start_pruning() -> None:
    """Run `prune` once per process, in a background thread (start-up must not wait for the temp dir)."""
    global _pruner
    with _pruner_lock:
        if _pruner is None:
            _pruner = threading.Thread(target=prune, name="agent-forge-prune-outputs", daemon=True)
            _pruner.start()


def wait_for_pruning() -> None:
    thread = _pruner
    if thread is not None and thread is not threading.current_thread():
        thread.join(PRUNE_WAIT_S)
