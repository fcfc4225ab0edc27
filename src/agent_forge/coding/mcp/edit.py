"""Changing an `mcp.json` file: `agent-forge mcp add` and `agent-forge mcp remove` (`docs/mcp.md`, "Commands").

The file is read as it is (a missing file is an empty one), one server entry is added, replaced or removed, and
the result replaces the file atomically (a temporary file in the same directory, then `os.replace`; through a
symbolic link, its target is replaced). Every other key of the file and every other server stays as it was, in
its order. The read, change and write happen under an exclusive `fcntl` lock on a sibling lock file
(`.<name>.lock` next to the real file), so concurrent `mcp add`/`mcp remove` runs lose nothing. A file that is not valid JSON or whose `mcpServers` is not an object is left alone (`McpFileError`);
so is an entry that would not load (checked with the loader's own rules).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigFileError
from ..paths import path_text
from ..safe_read import read_json_file
from .config import NAME_RULE, parse_servers

if TYPE_CHECKING:
    from ...ai.types import JsonValue


class McpFileError(ValueError):
    """The file cannot be changed as asked; `str()` says why, naming the file."""


class InvalidServerEntry(McpFileError):
    """The name or entry to add could never be valid (`NAME_RULE`, the loader's entry rules), whatever the
    file holds: a usage error (`agent-forge mcp` exits 2 for it, docs/mcp.md)."""


def add_server(path: Path, name: str, entry: dict[str, JsonValue], *, replace: bool = False) -> bool:
    """Add server `name` to the `mcp.json` at `path` (created with its directory when missing). Returns whether
    an entry of that name was replaced (only with `replace`; else an existing name is an `McpFileError`); a name
    or entry that could never load is an `InvalidServerEntry`."""
    if not NAME_RULE.fullmatch(name):
        raise InvalidServerEntry(f"invalid server name {name!r}: use 1 to 64 letters, digits, '_' or '-'")
    _, problems = parse_servers({name: entry}, environ={})
    real = [p for p in problems if "not set" not in p]  # `${VAR}` is expanded when the server starts
    if real:
        raise InvalidServerEntry(real[0].split(": ", 1)[-1].removesuffix("; skipped"))
    with _locked(path):
        data, servers = _read(path)
        existed = name in servers
        if existed and not replace:
            raise McpFileError(f"{path_text(path)}: a server named {name!r} exists already (remove it first, or add "
                               "--force)")
        servers[name] = entry
        _write(path, data, servers)
    return existed


def remove_server(path: Path, name: str) -> None:
    """Remove server `name` from the `mcp.json` at `path`; `McpFileError` when it has none of that name."""
    with _locked(path):
        data, servers = _read(path, missing_ok=False)
        if name not in servers:
            listed = ", ".join(servers) or "none"
            raise McpFileError(f"{path_text(path)}: no server named {name!r} (servers: {listed})")
        del servers[name]
        _write(path, data, servers)



@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `.<name>.lock` beside the real file (the file itself is replaced, so a lock on
    it would not serialise writers); the lock file stays, empty, for the next writer."""
    target = Path(os.path.realpath(path))
    lock = target.with_name(f".{target.name}.lock")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise McpFileError(f"{path_text(path)}: cannot be locked: {exc.strerror or exc}; the file was not "
                           "changed") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _read(path: Path, *, missing_ok: bool = True) -> tuple[dict[str, JsonValue], dict[str, JsonValue]]:
    try:
        data = read_json_file(path, if_blank={})
    except FileNotFoundError:
        if not missing_ok:
            raise McpFileError(f"{path_text(path)}: no such file") from None
        data = {}
    except (ConfigFileError, OSError) as exc:
        raise McpFileError(f"{path_text(path)}: {getattr(exc, 'strerror', None) or exc}; the file was not "
                           "changed") from None
    if not isinstance(data, dict):
        raise McpFileError(f"{path_text(path)}: expected a JSON object with \"mcpServers\"; the file was not changed")
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise McpFileError(f"{path_text(path)}: \"mcpServers\" is not an object; the file was not changed")
    return data, servers


def _write(path: Path, data: dict[str, JsonValue], servers: dict[str, JsonValue]) -> None:
    data["mcpServers"] = servers
    target = Path(os.path.realpath(path))
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        mode = target.stat().st_mode & 0o777 if target.exists() else 0o600  # it may hold tokens
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise McpFileError(f"{path_text(path)}: cannot be written: {exc.strerror or exc}") from None
