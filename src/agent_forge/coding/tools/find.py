"""The `find` tool: paths matching a glob under a directory, honouring `.gitignore`, listed with `fd` when it
is on PATH and a pure-Python walk otherwise; the glob itself is always matched here (`path_matcher`), so both
agree."""

from __future__ import annotations

import asyncio
import stat
import threading
from typing import Callable

from ...agent.types import ToolError, ToolResult, ToolUpdate, text_result
from ...ai.types import JsonValue
from .args import check_object, json_type, optional_int, require_string
from ..errors import ExternalSearchError
from .external_search import fd, os_refusals, stream_lines
from .globs import path_matcher
from .ignore_walk import git_root, walk
from .paths import resolve_tool_path
from .search_output import finish, search_root, skip_notices
from .truncate import DEFAULT_MAX_BYTES, format_size
from ..paths import path_text
from ...words import counted

DEFAULT_LIMIT = 1000
"""Paths returned unless the call asks for another `limit` (reference agent's find tool)."""

DESCRIPTION = (
    "Find files and directories by glob pattern, e.g. '*.py', 'src/**/*.ts' or 'test_*'. A pattern without '/' "
    "matches names at any depth; one with '/' is matched against the path relative to the searched directory. "
    "Returns relative paths, one per line, directories ending in '/'. Respects .gitignore; hidden files are "
    f"included. At most {DEFAULT_LIMIT} results (change with limit) or {format_size(DEFAULT_MAX_BYTES)}."
)

PARAMETERS: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "Glob pattern to match, e.g. '*.py', '**/test_*.py'"},
        "path": {"type": "string", "description": "Directory to search (default: the working directory)"},
        "limit": {"type": "number", "description": f"Maximum number of results (default {DEFAULT_LIMIT})"},
    },
    "required": ["pattern"],
}


class FindTool:
    """`find(pattern, path?, limit?)`; `details`: `{"resultLimitReached": limit | None, "truncation"?}`.

    Results are sorted. With `fd` the walk may stop at the limit before seeing every path, so which paths a
    truncated answer holds can vary; the Python walk goes in path order. Errors (`ToolError`): missing
    directory, a path that is a file, a failing `fd`.
    """

    name = "find"
    read_only = True  # runs unasked under the `ask` approval policy (coding/approvals.py)
    label = "Find"
    description = DESCRIPTION
    parameters = PARAMETERS

    def __init__(self, cwd: str, *, use_external: bool = True):
        self.cwd = cwd
        self.use_external = use_external

    async def execute(self, tool_call_id: str, args: dict[str, JsonValue],
                      on_update: ToolUpdate | None = None) -> ToolResult:
        args = check_object(args)
        pattern = require_string(args, "pattern").strip()
        if not pattern:
            raise ToolError("Parameter 'pattern' must not be empty")
        path = args.get("path")
        if path is not None and not isinstance(path, str):
            raise ToolError(f"Parameter 'path' must be a string, got {json_type(path)}")
        top = resolve_tool_path(path or ".", self.cwd)
        _check_top(top)
        limit = optional_int(args, "limit", minimum=1) or DEFAULT_LIMIT
        unlisted: list[str] = []
        found = await find_paths(top, pattern, limit, use_external=self.use_external, unlisted=unlisted)
        return _result(found, limit, unlisted)


def _check_top(top: str) -> None:
    """Raise `ToolError` unless `top` is a directory, naming the OS's reason for one it cannot examine (a link
    loop is no missing path, a directory without read permission has no entries to find)."""
    info = search_root(top)
    if not stat.S_ISDIR(info.st_mode):
        raise ToolError(f"Not a directory: {path_text(top)}")


async def find_paths(top: str, pattern: str, limit: int, *, use_external: bool = True,
                     unlisted: list[str] | None = None) -> list[str]:
    """Up to `limit + 1` matching relative paths (one more than asked, to tell that the limit was hit).
    `unlisted` gains `<relative path> (<the OS's reason>)` for each directory that could not be listed."""
    wanted = path_matcher(pattern)
    found: list[str] = []
    skipped = unlisted if unlisted is not None else []

    def collect(rel: str, is_dir: bool) -> bool:
        if wanted(rel, is_dir):
            found.append(rel + "/" if is_dir else rel)
        return len(found) <= limit

    program = fd() if use_external else None
    if program is not None and (program[1] or git_root(top) is not None):
        await _list_with_fd(program, top, collect, skipped)
    else:
        await _walk_in_thread(top, collect, skipped)
    return found


async def _walk_in_thread(top: str, collect: Callable[[str, bool], bool], unlisted: list[str]) -> None:
    stop = threading.Event()

    def note(rel: str, exc: OSError) -> None:
        unlisted.append(_refused(rel, exc))

    def run() -> None:
        for rel, is_dir in walk(top, stop=stop, on_unlistable=note):
            if not collect(rel, is_dir):
                return

    try:
        await asyncio.to_thread(run)
    finally:
        stop.set()


async def _list_with_fd(program: tuple[str, bool], top: str, collect: Callable[[str, bool], bool],
                        unlisted: list[str]) -> None:
    """List everything under `top` with fd (it prints directories with a trailing `/`); the directories it
    could not list go to `unlisted` (`--show-errors`: fd is silent about them otherwise)."""
    path, no_require_git = program
    argv = [path, "--hidden", "--color=never", "--show-errors", "--exclude", ".git", "--base-directory", top]
    argv += ["--no-require-git"] if no_require_git else []
    argv += ["--", "."]

    def feed(raw: bytes) -> bool:
        line = raw.decode("utf-8", "replace").removeprefix("./")
        return collect(line.rstrip("/"), line.endswith("/")) if line else True

    try:
        refused, _ = os_refusals(await stream_lines(argv, feed))
    except ExternalSearchError as exc:
        raise ToolError(f"find failed: {exc}") from None
    unlisted += [_refused(rel, exc) for rel, exc in refused]


def _refused(rel: str, exc: OSError) -> str:
    return f"{path_text(rel)} ({exc.strerror or exc})"


def _result(found: list[str], limit: int, unlisted: list[str]) -> ToolResult:
    hit = len(found) > limit
    paths = sorted(found)[:limit] if not hit else sorted(found[:limit])
    details: dict[str, object] = {"resultLimitReached": limit if hit else None}
    skipped = skip_notices([], unlisted)
    if not paths:
        return text_result(*finish(["No files found matching the pattern"], skipped, details))
    notices = [f"Stopped at {counted(limit, 'result')}: use limit={limit * 2} for more, or refine the pattern"
               ] if hit else []
    text, details = finish(paths, notices + skipped, details)
    return text_result(text, details)
