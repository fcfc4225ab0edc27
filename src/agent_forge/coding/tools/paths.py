"""Resolve a path given to a tool against the tool's working directory."""

from __future__ import annotations

import os

from ...agent.types import ToolError
from ..paths import path_text


def resolve_tool_path(path: str, cwd: str) -> str:
    """Absolute, normalised form of `path`: a leading `~` is expanded, a relative path is joined to `cwd`.

    Symlinks are not resolved, so messages keep the names the model used. Raises `ToolError` for an empty
    path, one the OS cannot represent (a NUL character, a lone surrogate), or one ending in `/` (or `/.`,
    `/..`) that names no directory: normalising would drop the mark, and `x.txt/` would reach the file `x.txt`
    (the shell says `Not a directory`; `write dir/` would create a file).
    """
    if not path:
        raise ToolError("path must not be empty")
    if "\x00" in path:
        raise ToolError("path must not contain a NUL character")
    try:
        os.fsencode(path)
    except UnicodeEncodeError:
        raise ToolError("path contains characters that cannot be used in a file name") from None
    joined = os.path.join(cwd, os.path.expanduser(path))
    if _names_a_directory(joined) and not os.path.isdir(joined):
        what = "not a directory" if os.path.lexists(joined.rstrip("/.")) else "no such directory"
        raise ToolError(f"{path_text(path)}: {what} (a path ending in / names a directory; without it, it names a file)")
    return os.path.abspath(joined)


def _names_a_directory(path: str) -> bool:
    return path.endswith(("/", "/.", "/..")) or (os.altsep is not None and path.endswith(os.altsep))
