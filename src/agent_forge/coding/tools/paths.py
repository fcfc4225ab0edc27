"""Resolve a path given to a tool against the tool's working directory."""

from __future__ import annotations

import os

from ...agent.types import ToolError


def resolve_tool_path(path: str, cwd: str) -> str:
    """Absolute, normalised form of `path`: a leading `~` is expanded, a relative path is joined to `cwd`.

    Symlinks are not resolved, so messages keep the names the model used. Raises `ToolError` for an empty
    path, or one the OS cannot represent (a NUL character, a lone surrogate).
    """
    if not path:
        raise ToolError("path must not be empty")
    if "\x00" in path:
        raise ToolError("path must not contain a NUL character")
    try:
        os.fsencode(path)
    except UnicodeEncodeError:
        raise ToolError("path contains characters that cannot be used in a file name") from None
    expanded = os.path.expanduser(path)
    return os.path.abspath(os.path.join(cwd, expanded))
