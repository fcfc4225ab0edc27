"""Export a session to one self-contained HTML file: checks, output path, atomic write, error mapping.

Standard library only at import time: the renderer (markdown-it-py, pygments) is imported when a page is built,
so a missing dependency is reported as an ExportError instead of breaking the importer.

The output path is resolved through symlinks (the page goes to the link's target; the link stays) and must be
a regular file or not exist: a device, FIFO, socket or directory there is refused, never replaced. The page is
written under a temporary name and renamed over the target, so readers never see half a page. A new file is
private to the user (0600), like the session it comes from: the page holds the whole conversation. A file that
already exists keeps its permission bits (and, where the OS allows, its owner and group).

What may be replaced is limited, as the path may come from a client or a model: a relative path must resolve
(symlinks included) inside the working directory; an existing file is replaced only when it looks like an earlier
HTML export (its name ends in `.html`/`.htm`, or it starts with `<!DOCTYPE html>`); a path holding a NUL
character is refused by name. A path that names an open descriptor (`/dev/stdout`, `/dev/stderr`, `/dev/fd/N`,
`/proc/self/fd/N`, or a symlink to one) is no file: a session export refuses it, naming the path as given (in the
terminal UI or a protocol mode that descriptor is the screen or the protocol channel); `agent-forge --export`
writes the page to its own descriptor instead (`named_descriptor`).
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from ..paths import path_text, same_file
from ..session.entries import is_entry, iso_timestamp
from ..session.store import SessionStore
from .context import Record
from ..errors import ExportError, SessionFileError
from ..safe_read import is_dir

FILE_PREFIX = "agent-forge-session-"
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class SessionSnapshot:
    """What an export needs, taken at one moment: `header` (session line), `entries` (file order), `leaf_id`,
    and `path` of the session file (None for an in-memory session)."""

    header: Record
    entries: Sequence[Record]
    leaf_id: str | None
    path: Path | None

    @classmethod
    def of_store(cls, store: SessionStore) -> SessionSnapshot:
        """A snapshot of `store` (a new list of its stored entry dicts, which the store never mutates)."""
        return cls(dict(store.header), store.entries, store.leaf_id, store.path)


def default_output_name(snapshot: SessionSnapshot) -> str:
    """`agent-forge-session-<session file stem>.html`, or `<session id>` in place of the stem without a file."""
    stem = snapshot.path.stem if snapshot.path is not None else str(snapshot.header.get("id", "session"))
    return f"{FILE_PREFIX}{_UNSAFE_NAME.sub('-', stem).strip('-') or 'session'}.html"


def resolve_output_path(output_path: str | os.PathLike[str] | None, snapshot: SessionSnapshot,
                        cwd: str | os.PathLike[str]) -> Path:
    """Where the page goes: `output_path` (`~` expanded, relative to `cwd`; an existing directory receives
    the default name), or the default name in `cwd` when it is None or empty. Parent directories are not
    created: a mistyped directory is an error, not a new tree."""
    if output_path is None or not os.fspath(output_path):
        return Path(cwd, default_output_name(snapshot)).absolute()
    if "\0" in os.fspath(output_path):
        raise ExportError("The output path must not contain a NUL character")
    path = Path(cwd, os.path.expanduser(os.fspath(output_path))).absolute()
    return path / default_output_name(snapshot) if is_dir(path) else path


_DESCRIPTOR = re.compile(r"/dev/(?:(?P<std>stdin|stdout|stderr)|fd/(?P<fd>\d+))"
                         r"|/proc/(?P<pid>self|thread-self|\d+)(?:/task/\d+)?/fd/(?P<proc_fd>\d+)")
_STANDARD = {"stdin": 0, "stdout": 1, "stderr": 2}
_LINK_HOPS = 40  # the kernel's own limit on symlinks in one lookup (ELOOP)


def named_descriptor(output_path: str | os.PathLike[str] | None, cwd: str | os.PathLike[str]) -> int | None:
    """The descriptor number `output_path` names, directly or through symlinks (`/dev/stdout` is 1, `/dev/fd/3` is
    3, `/proc/<this pid>/fd/2` is 2), else None; -1 for a descriptor of another process (`/proc/<pid>/fd/N`).
    `realpath` cannot tell: it turns `/dev/stdout` into `/proc/<pid>/fd/pipe:[N]` or into the redirected file."""
    if output_path is None or not os.fspath(output_path) or "\0" in os.fspath(output_path):
        return None
    current = os.path.join(cwd, os.path.expanduser(os.fspath(output_path)))
    for _ in range(_LINK_HOPS):
        current = os.path.join(os.path.realpath(os.path.dirname(current)), os.path.basename(current))
        found = _DESCRIPTOR.fullmatch(current)
        if found is not None:
            return _descriptor_number(found)
        try:
            current = os.path.join(os.path.dirname(current), os.readlink(current))
        except OSError:
            return None  # not a symlink (or unreadable): an ordinary path
    return None


def _descriptor_number(found: re.Match[str]) -> int:
    if found["std"] is not None:
        return _STANDARD[found["std"]]
    if found["fd"] is not None:
        return int(found["fd"])
    ours = found["pid"] in ("self", "thread-self", str(os.getpid()))
    return int(found["proc_fd"]) if ours else -1


def check_not_descriptor(output_path: str | os.PathLike[str] | None, cwd: str | os.PathLike[str]) -> None:
    """Raise ExportError when `output_path` names an open descriptor (`named_descriptor`), quoting it as given."""
    if named_descriptor(output_path, cwd) is not None:
        raise ExportError(f"Cannot write {path_text(os.fspath(output_path or ''))}: it names an open descriptor "
                          "(standard output, a pipe or a terminal), not a file; give a file path")


def check_confined(output_path: str | os.PathLike[str] | None, target: Path, cwd: str | os.PathLike[str]) -> None:
    """Raise ExportError when a relative `output_path` (not `~`) resolved to `target` (symlinks resolved) lies
    outside `cwd`: "relative paths are under the cwd" (docs/rpc.md) must hold for `../../etc/passwd` too."""
    if output_path is None or os.path.isabs(os.path.expanduser(os.fspath(output_path))):
        return
    root = os.path.realpath(cwd)
    if os.path.commonpath([root, str(target)]) != root:
        raise ExportError(f"Cannot write {path_text(target)}: a relative output path must stay inside the working "
                          f"directory {path_text(root)}; give an absolute path to write elsewhere")


def check_exportable(snapshot: SessionSnapshot) -> None:
    """Raise ExportError for an in-memory session and for one without a single message."""
    if snapshot.path is None:
        raise ExportError("Cannot export an in-memory session (started with --no-session): it has no session "
                          "file. Start the agent without --no-session to keep and export conversations.")
    if not any(entry.get("type") == "message" for entry in snapshot.entries):
        raise ExportError("Nothing to export: the session has no messages yet. Send a prompt first.")


def render_html(snapshot: SessionSnapshot) -> str:
    """The page of `snapshot` as text. Raises ExportError when markdown-it-py or pygments is missing."""
    try:
        from .page import render_page
    except ImportError as exc:
        raise ExportError(f"HTML export needs the markdown-it-py and pygments packages ({exc}); "
                          "reinstall agent-forge with its dependencies") from None
    entries = [entry for entry in snapshot.entries if is_entry(entry)]
    source = str(snapshot.path) if snapshot.path is not None else None
    return render_page(snapshot.header, entries, leaf_id=snapshot.leaf_id, source=source,
                       exported_at=iso_timestamp())


def write_export(snapshot: SessionSnapshot, output_path: str | os.PathLike[str] | None,
                 cwd: str | os.PathLike[str]) -> Path:
    """Check, render and write `snapshot`; returns the absolute path written (symlinks resolved). Raises
    ExportError, also for a target that is not a regular file or is the session file itself."""
    check_exportable(snapshot)
    check_not_descriptor(output_path, cwd)
    target = Path(os.path.realpath(resolve_output_path(output_path, snapshot, cwd)))
    check_confined(output_path, target, cwd)
    existing = _existing_target(target, snapshot)
    page = render_html(snapshot)
    # "replace": a character UTF-8 cannot encode must not fail the export (`clean` already removes them).
    _write_atomically(target, page.encode("utf-8", "replace"), existing)
    return target


def export_store(store: SessionStore, output_path: str | os.PathLike[str] | None = None, *,
                 cwd: str | os.PathLike[str] | None = None) -> Path:
    """Export a live session (`cwd` defaults to the session's working directory). Raises ExportError."""
    return write_export(SessionSnapshot.of_store(store), output_path, cwd if cwd is not None else store.cwd)


def export_session_file(session_path: str | os.PathLike[str], output_path: str | os.PathLike[str] | None = None,
                        *, cwd: str | os.PathLike[str] | None = None,
                        on_warning: Callable[[str], None] | None = None) -> Path:
    """Export a session file (`agent-forge --export`); `cwd` (default: the process's) anchors relative and
    default output paths; `on_warning(text)` hears what reading the file found damaged (`load_warnings`: the
    page lacks it). Raises ExportError, also for a file that is missing or not a session."""
    try:
        store = open_for_export(session_path, on_warning)
    except SessionFileError as exc:
        raise ExportError(str(exc)) from None
    try:
        return write_export(SessionSnapshot.of_store(store), output_path, cwd if cwd is not None else os.getcwd())
    finally:
        store.close()


def open_for_export(session_path: str | os.PathLike[str],
                    on_warning: Callable[[str], None] | None = None) -> SessionStore:
    """`session_path` opened for reading, each of its `load_warnings` (what the page will lack) given to
    `on_warning` first. Raises SessionFileError."""
    store = SessionStore.open(session_path)
    for warning in store.load_warnings if on_warning is not None else ():
        on_warning(str(warning))
    return store


def _existing_target(target: Path, snapshot: SessionSnapshot) -> os.stat_result | None:
    """The status of the regular file at `target` (symlinks already resolved), None when nothing is there.
    Raises ExportError for anything else there, and for the session file itself."""
    try:
        status = os.lstat(target)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ExportError(f"Cannot write {path_text(target)}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(status.st_mode):
        raise ExportError(f"Cannot write {path_text(target)}: it is {_file_kind(status.st_mode)}, not a regular file")
    if snapshot.path is not None and same_file(status, snapshot.path):
        raise ExportError(f"Cannot write {path_text(target)}: it is the session file being exported")
    if not _earlier_export(target):
        raise ExportError(f"Cannot write {path_text(target)}: the file exists and is not an earlier HTML export "
                          "(a .html or .htm file, or a page starting with <!DOCTYPE html>); choose another path")
    return status


def _earlier_export(target: Path) -> bool:
    """Whether the existing regular file `target` may be replaced by a page (see the module docstring)."""
    if target.suffix.lower() in (".html", ".htm"):
        return True
    try:
        with open(target, "rb") as handle:
            start = handle.read(len(_DOCTYPE))
    except OSError:
        return False
    return start.lower() == _DOCTYPE.lower()


_DOCTYPE = b"<!DOCTYPE html>"


def _file_kind(mode: int) -> str:
    kinds = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
             (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"),
             (stat.S_ISLNK, "a symbolic link that does not resolve (a loop)"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")

def _write_atomically(target: Path, data: bytes, existing: os.stat_result | None) -> None:
    """Write under a temporary name in the target's directory, then rename: readers never see half a page.
    A new file gets mode 0600 (mkstemp's); `existing` (the file replaced) passes on its permission bits and,
    best effort, its owner."""
    try:
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise ExportError(f"Cannot write {path_text(target)}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            if existing is not None:
                _keep_attributes(handle.fileno(), existing)
            handle.write(data)
        os.replace(temp, target)
    except OSError as exc:
        Path(temp).unlink(missing_ok=True)
        raise ExportError(f"Cannot write {path_text(target)}: {exc.strerror or exc}") from None


def _keep_attributes(fd: int, existing: os.stat_result) -> None:
    """Give the new file the replaced one's permission bits (setuid/setgid/sticky left out) and owner."""
    os.fchmod(fd, stat.S_IMODE(existing.st_mode) & 0o777)
    if hasattr(os, "fchown") and (existing.st_uid, existing.st_gid) != (os.getuid(), os.getgid()):
        try:
            os.fchown(fd, existing.st_uid, existing.st_gid)
        except OSError:
            pass  # only root may give a file away: the file is then ours, with the original permission bits
