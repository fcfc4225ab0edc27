"""The `write` tool: create or overwrite a file with UTF-8 text, creating missing parent directories."""

from __future__ import annotations

import asyncio
import os
import stat

from ...agent.types import ToolError, ToolResult, ToolUpdate, text_result
from ...ai.types import JsonValue
from .args import check_object, require_string
from .file_access import LOCAL, FileAccess
from .file_queue import hold
from .file_replace import replace_contents
from .paths import resolve_tool_path
from ..paths import path_text
from ...words import counted

DESCRIPTION = (
    "Write `content` to a file as UTF-8, replacing the file if it exists and creating missing parent "
    "directories. Use it for new files or complete rewrites; for changes to part of a file, prefer edit."
)

PARAMETERS: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File to write, relative to the working directory or absolute"},
        "content": {"type": "string", "description": "The complete new content of the file"},
    },
    "required": ["path", "content"],
}


class WriteTool:
    """`write(path, content)` → `Successfully wrote N bytes to <path>` (N = UTF-8 bytes, `path` as given).

    Characters UTF-8 cannot encode (lone surrogates from JSON escapes) are written as `?`. A symlink to a
    regular file is followed. Errors (`ToolError`): the path is a directory, FIFO, device or socket; a file
    stands where a parent directory should be (`Not a directory: <path>`); the OS refuses (permissions, disk
    full). Writes and edits of one file run one after another, in call order (`file_queue.py`). A failed
    write changes nothing: the old file keeps its bytes, a new one is not left behind
    (`write_bytes`).
    """

    name = "write"
    label = "Write"
    description = DESCRIPTION
    parameters = PARAMETERS

    files: FileAccess = LOCAL  # where text goes (`file_access.py`): the disk, or an editor's buffers

    def __init__(self, cwd: str):
        self.cwd = cwd

    async def execute(self, tool_call_id: str, args: dict[str, JsonValue],
                      on_update: ToolUpdate | None = None) -> ToolResult:
        args = check_object(args)
        given = require_string(args, "path")
        content = require_string(args, "content")
        path = resolve_tool_path(given, self.cwd)
        data = content.encode("utf-8", "replace")
        async with hold(path):  # before the first await: writes and edits of one file apply in call order
            with self.files.changing(tool_call_id, path):
                if not await self.files.write_text(path, data.decode("utf-8")):
                    # A thread, because even a regular file on a slow or full disk must not stall the event loop.
                    await asyncio.to_thread(write_bytes, path, data)
        return text_result(f"Successfully wrote {counted(len(data), 'byte')} to {path_text(given)}")


def write_bytes(path: str, data: bytes) -> None:
    """Make the file at the absolute `path` hold `data`, creating missing parents; blocking, so call it off the
    event loop.

    All or nothing (`file_replace.replace_contents`): on failure the old file is byte for byte as it was, and
    a new file and the parent directories made for it are gone. Only a regular file (or a new one) is written.
    Raises `ToolError`.
    """
    try:
        made = _missing_parents(path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        try:
            replace_contents(path, data)
        except BaseException:
            _remove_directories(made)
            raise
    except OSError as exc:
        raise ToolError(f"Cannot write {path_text(path)}: {exc.strerror or exc}") from None


def _missing_parents(path: str) -> list[str]:
    """The ancestors of `path` that do not exist yet, deepest first. Raises `ToolError` when the nearest
    existing one is not a directory: otherwise `makedirs` reports it as the puzzling "File exists"."""
    missing = []
    parent = os.path.dirname(path)
    while True:
        try:
            mode = os.stat(parent).st_mode
        except (FileNotFoundError, NotADirectoryError):
            missing.append(parent)
            parent = os.path.dirname(parent)
            continue
        if not stat.S_ISDIR(mode):
            raise ToolError(f"Not a directory: {path_text(parent)} (a file is in the way of {path_text(path)})")
        return missing


def _remove_directories(directories: list[str]) -> None:
    """Remove the (deepest first) directories a failed write made; one something else put a file in stays."""
    for directory in directories:
        try:
            os.rmdir(directory)
        except OSError:
            return
