"""The `ls` tool: the entries of one directory, sorted, directories marked with `/`, dotfiles included, and
`.gitignore`d entries marked ` (ignored)`."""

from __future__ import annotations

import asyncio
import os

from ...agent.types import ToolError, ToolResult, ToolUpdate, text_result
from ...ai.types import JsonValue
from .args import check_object, json_type, optional_int
from .paths import resolve_tool_path
from .search_output import finish
from .truncate import DEFAULT_MAX_BYTES, format_size
from ..paths import path_text

DEFAULT_LIMIT = 500
"""Entries returned unless the call asks for another `limit` (reference agent's ls tool)."""

DESCRIPTION = (
    "List a directory: entries sorted alphabetically, directories ending in '/', dotfiles included; entries "
    f"matched by .gitignore are listed with ' (ignored)'. At most {DEFAULT_LIMIT} entries (change with limit) or "
    f"{format_size(DEFAULT_MAX_BYTES)}."
)

PARAMETERS: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Directory to list (default: the working directory)"},
        "limit": {"type": "number", "description": f"Maximum number of entries (default {DEFAULT_LIMIT})"},
    },
}


class LsTool:
    """`ls(path?, limit?)`; `details`: `{"entryLimitReached": limit | None, "truncation"?}`.

    Unlike grep and find, ls does not hide `.gitignore`d entries: the model asked for this directory, and hiding
    `node_modules/` or `.env` would invite it to recreate them. It respects the ignore files by marking those
    entries ` (ignored)`, so the model knows they are not part of the project's sources. Errors (`ToolError`):
    missing path, not a directory, unreadable directory.
    """

    name = "ls"
    read_only = True  # runs unasked under the `ask` approval policy (coding/approvals.py)
    label = "List"
    description = DESCRIPTION
    parameters = PARAMETERS

    def __init__(self, cwd: str):
        self.cwd = cwd

    async def execute(self, tool_call_id: str, args: dict[str, JsonValue],
                      on_update: ToolUpdate | None = None) -> ToolResult:
        args = check_object(args)
        path = args.get("path")
        if path is not None and not isinstance(path, str):
            raise ToolError(f"Parameter 'path' must be a string, got {json_type(path)}")
        directory = resolve_tool_path(path or ".", self.cwd)
        limit = optional_int(args, "limit", minimum=1) or DEFAULT_LIMIT
        entries = await asyncio.to_thread(list_directory, directory)
        return _result(entries, limit)


def list_directory(directory: str) -> list[str]:
    """Entry names of `directory` sorted case-insensitively (ties by exact name), `/` after directories
    (symbolic links to directories included), ` (ignored)` after entries its ignore files match. Raises
    `ToolError`."""
    try:
        with os.scandir(directory) as iterator:
            found = [(entry.name, _is_dir(entry)) for entry in iterator]
    except FileNotFoundError:
        raise ToolError(f"Path not found: {path_text(directory)}") from None
    except NotADirectoryError:
        raise ToolError(f"Not a directory: {path_text(directory)}") from None
    except OSError as exc:
        raise ToolError(f"Cannot list {path_text(directory)}: {exc.strerror or exc}") from None
    ignored = _ignored_names(directory, found)
    entries = [name + ("/" if is_dir else "") + (" (ignored)" if name in ignored else "") for name, is_dir in found]
    return sorted(entries, key=lambda name: (name.lower(), name))


def _ignored_names(directory: str, found: list[tuple[str, bool]]) -> set[str]:
    """Names of `found` that the ignore files in force for `directory` match (none when pathspec is missing)."""
    try:
        from .ignore_walk import rules_for

        rules = rules_for(directory)
        return {name for name, is_dir in found if rules.ignored(os.path.join(directory, name), is_dir)}
    except (ImportError, OSError):
        return set()


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _result(entries: list[str], limit: int) -> ToolResult:
    hit = len(entries) > limit
    details: dict[str, object] = {"entryLimitReached": limit if hit else None}
    if not entries:
        return text_result("(empty directory)", details)
    notices = [f"Showing {limit} of {len(entries)} entries: use limit={limit * 2} for more"] if hit else []
    text, details = finish(entries[:limit], notices, details)
    return text_result(text, details)
