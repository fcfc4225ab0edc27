"""Where agent-forge keeps its files (the agent dir, its sessions dir, the project resource dir), and how a path
is written in a message for a person (`path_text`), and the small file helpers every part of `coding` shares
(`same_file`, `write_all`, `sync_dir`); kept in this one module, which start-up imports anyway."""

from __future__ import annotations

import os

from ..lazy_inspect import deferred_ipaddress

with deferred_ipaddress():  # the first import of pathlib in a CLI process: see `lazy_inspect`
    from pathlib import Path

CONFIG_DIR_NAME = ".agent-forge"


class MissingDirectory(Exception):
    """The process's current directory was deleted (`rmdir` from another shell): a usage problem the command
    line reports as one `agent-forge: <message>` line with exit code 2 (`cli.run_command`)."""


def working_directory() -> str:
    """The current directory (`os.getcwd()`), the one lookup every command line path uses. Raises
    `MissingDirectory` when it no longer exists."""
    try:
        return os.getcwd()
    except OSError:
        raise MissingDirectory("the current directory no longer exists") from None


def agent_dir() -> Path:
    """`$AGENT_FORGE_DIR`, else `~/.agent-forge/agent` (DESIGN.md, Conventions)."""
    override = os.environ.get("AGENT_FORGE_DIR")
    if override:
        return Path(override).expanduser()
    return Path.home() / CONFIG_DIR_NAME / "agent"


def sessions_dir(override: str | None = None, agent: str | os.PathLike[str] | None = None) -> Path:
    """`--session-dir`, else `$AGENT_FORGE_SESSION_DIR`, else `<agent dir>/sessions` (`agent`, e.g. the SDK's
    `agent_dir`, else `agent_dir()`)."""
    chosen = override or os.environ.get("AGENT_FORGE_SESSION_DIR")
    if chosen:
        return Path(chosen).expanduser()
    return (Path(agent).expanduser() if agent else agent_dir()) / "sessions"


def project_dir(cwd: str | Path) -> Path:
    """Project-local resources: `<cwd>/.agent-forge/agent/`."""
    return Path(cwd) / CONFIG_DIR_NAME / "agent"


def path_text(path: object) -> str:
    """A file name or path, or any other name from outside (a CLI argument, a session id, a tool or model name),
    as one line of a message for a person or a model (a warning, an error, a tool result or block): every
    control and invisible character as its escape (`\\x1b`, `\\x0d`, `\\u202e`), newlines and tabs as `\\n`
    and `\\t` too (`ai/visible_text.name_text`, which any other outside name goes through)."""
    text = str(path)
    if text.isprintable():  # the usual case: no import
        return text
    from ..ai.visible_text import name_text  # only for such a name: not on the start-up path

    return name_text(text)


def write_all(fd: int, data: bytes | memoryview) -> None:
    """Write every byte of `data` to descriptor `fd`, looping over short writes (`os.write` may write fewer
    bytes than given: pipes, signals, nearly full disks). Raises the `OSError` of the write that failed."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def os_failure(exc: BaseException) -> str | None:
    """`cannot use <path>: <the OS's reason>` for an `OSError` naming a file (a user-given path the OS refused
    where no check said so first: a name over 255 bytes, no permission), so that a client never sees it as an
    internal error; None for any other exception (a bug, which front ends report as one)."""
    if not isinstance(exc, OSError) or exc.filename is None:
        return None
    return f"cannot use {path_text(exc.filename)}: {exc.strerror or exc}"


def same_file(a: str | os.PathLike[str] | os.stat_result, b: str | os.PathLike[str] | os.stat_result) -> bool:
    """Whether `a` and `b` are one file (same device and inode), each a path or the `os.stat_result` of a file
    already examined; a path that cannot be examined (missing, unreadable, a link loop) is no file: False."""
    try:
        first, second = (x if isinstance(x, os.stat_result) else os.stat(x) for x in (a, b))
    except OSError:
        return False
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


def sync_dir(directory: str | os.PathLike[str]) -> None:
    """Make a new or renamed entry of `directory` durable (fsync of the directory); best effort: not every
    platform or file system can open or fsync a directory, and the entry is there either way."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
