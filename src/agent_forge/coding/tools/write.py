"""The `write` tool: create or overwrite a file with UTF-8 text, creating missing parent directories."""

from __future__ import annotations

import os
from typing import Any

from ...agent.types import ToolError, ToolResult, ToolUpdate, text_result
from .args import check_object, require_string
from .paths import resolve_tool_path

DESCRIPTION = (
    "Write `content` to a file as UTF-8, replacing the file if it exists and creating missing parent "
    "directories. Use it for new files or complete rewrites; for changes to part of a file, prefer edit."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File to write, relative to the working directory or absolute"},
        "content": {"type": "string", "description": "The complete new content of the file"},
    },
    "required": ["path", "content"],
}


class WriteTool:
    """`write(path, content)` → `Successfully wrote N bytes to <path>` (N = UTF-8 bytes, `path` as given).

    Characters UTF-8 cannot encode (lone surrogates from JSON escapes) are written as `?`.
    Errors (`ToolError`): the path is a directory, or the OS refuses (permissions, a file in the way).
    """

    name = "write"
    label = "Write"
    description = DESCRIPTION
    parameters = PARAMETERS

    def __init__(self, cwd: str):
        self.cwd = cwd

    async def execute(self, tool_call_id: str, args: dict[str, Any], on_update: ToolUpdate | None = None) -> ToolResult:
        args = check_object(args)
        given = require_string(args, "path")
        content = require_string(args, "content")
        path = resolve_tool_path(given, self.cwd)
        data = content.encode("utf-8", "replace")
        write_bytes(path, data)
        return text_result(f"Successfully wrote {len(data)} bytes to {given}")


def write_bytes(path: str, data: bytes) -> None:
    """Write `data` to the absolute `path`, creating parents; OS failures become `ToolError`."""
    if os.path.isdir(path):
        raise ToolError(f"{path} is a directory; give a file path.")
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    except OSError as exc:
        raise ToolError(f"Cannot write {path}: {exc.strerror or exc}") from None
