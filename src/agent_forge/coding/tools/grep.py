"""The `grep` tool: search file contents for a regular expression (or literal text), honouring `.gitignore`,
with `rg` when it is on PATH and a pure-Python search otherwise."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import stat
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Iterable, TypedDict

from ...agent.types import ToolError, ToolResult, ToolUpdate, text_result
from ...ai.types import JsonValue
from .args import check_object, json_type, optional_int, require_string
from ..errors import ExternalSearchError
from .external_search import os_refusals, ripgrep, stream_lines
from .file_kinds import check_regular_mode, open_regular
from .globs import path_matcher
from .ignore_walk import walk
from .paths import resolve_tool_path
from .search_output import MAX_LINE_CHARS, cannot_search, finish, search_root, shorten_line, skip_notices
from .truncate import DEFAULT_MAX_BYTES, format_size
from ..paths import path_text
from ...words import counted

DEFAULT_LIMIT = 100
"""Matches returned unless the call asks for another `limit` (reference agent's grep tool)."""

_BINARY_SNIFF_BYTES = 8192

DESCRIPTION = (
    "Search file contents for a regular expression (or literal text with literal=true). Returns matching lines "
    "as path:line: text (context lines as path-line- text), paths relative to the searched directory. "
    f"Respects .gitignore; hidden files are included. At most {DEFAULT_LIMIT} matches (change with limit) or "
    f"{format_size(DEFAULT_MAX_BYTES)} of output; lines longer than {MAX_LINE_CHARS} characters are shortened."
)

PARAMETERS: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "Regular expression to search for (literal text with literal=true)"},
        "path": {"type": "string", "description": "Directory or file to search (default: the working directory)"},
        "glob": {"type": "string", "description": "Only search files matching this glob, e.g. '*.py' or 'src/**/*.ts'"},
        "ignoreCase": {"type": "boolean", "description": "Case-insensitive search (default false)"},
        "literal": {"type": "boolean", "description": "Treat pattern as literal text, not a regex (default false)"},
        "context": {"type": "number", "description": "Lines of context before and after each match (default 0)"},
        "limit": {"type": "number", "description": f"Maximum number of matches (default {DEFAULT_LIMIT})"},
    },
    "required": ["pattern"],
}


@dataclass(frozen=True)
class GrepQuery:
    """A validated call: absolute `target` (directory or file), options as in PARAMETERS."""

    pattern: str
    target: str
    glob: str | None
    ignore_case: bool
    literal: bool
    context: int
    limit: int

    def regex(self) -> re.Pattern[str]:
        """The compiled pattern for the Python search; an invalid regex is a `ToolError`."""
        source = re.escape(self.pattern) if self.literal else self.pattern
        try:
            return re.compile(source, re.IGNORECASE if self.ignore_case else 0)
        except re.error as exc:
            raise ToolError(f"Invalid regular expression {self.pattern!r}: {exc}") from None


@dataclass
class Matches:
    """Output lines collected so far; `full` once `limit` matches are in (trailing context may still come).
    `unreadable` / `unlisted`: files and directories skipped because the OS refused them, as
    `<relative path> (<reason>)`."""

    limit: int
    lines: list[str] = field(default_factory=list)
    count: int = 0
    shortened: bool = False
    unreadable: list[str] = field(default_factory=list)
    unlisted: list[str] = field(default_factory=list)

    @property
    def full(self) -> bool:
        return self.count >= self.limit

    def add(self, rel: str, number: int, text: str, *, match: bool) -> None:
        text, cut = shorten_line(text)
        self.shortened |= cut
        self.lines.append(f"{rel}:{number}: {text}" if match else f"{rel}-{number}- {text}")
        self.count += match

    def skip_file(self, rel: str, exc: OSError) -> None:
        self.unreadable.append(_refused(rel, exc))

    def skip_dir(self, rel: str, exc: OSError) -> None:
        self.unlisted.append(_refused(rel, exc))


def _refused(rel: str, exc: OSError) -> str:
    return f"{path_text(rel)} ({exc.strerror or exc})"


class GrepTool:
    """`grep(pattern, path?, glob?, ignoreCase?, literal?, context?, limit?)`.

    `details`: `{"matchLimitReached": limit | None, "linesTruncated": bool, "truncation"?: TruncationResult}`.
    Errors (`ToolError`): missing path, invalid regex, a failing `rg`. `use_external=False` forces the Python
    search (tests; both give the same lines for ordinary patterns, `rg` using Rust regex syntax).
    """

    name = "grep"
    read_only = True  # runs unasked under the `ask` approval policy (coding/approvals.py)
    label = "Grep"
    description = DESCRIPTION
    parameters = PARAMETERS

    def __init__(self, cwd: str, *, use_external: bool = True):
        self.cwd = cwd
        self.use_external = use_external

    async def execute(self, tool_call_id: str, args: dict[str, JsonValue],
                      on_update: ToolUpdate | None = None) -> ToolResult:
        query = parse_query(check_object(args), self.cwd)
        matches = Matches(query.limit)
        rg = ripgrep() if self.use_external else None
        if rg is not None:
            await _search_with_rg(rg, query, matches)
        else:
            await _in_thread(lambda stop: search_python(query, matches, stop))
        return _result(matches)


def parse_query(args: dict[str, JsonValue], cwd: str) -> GrepQuery:
    pattern = require_string(args, "pattern")
    if not pattern:
        raise ToolError("Parameter 'pattern' must not be empty")
    target = resolve_tool_path(_optional_str(args, "path") or ".", cwd)
    _check_target(target)
    return GrepQuery(pattern=pattern, target=target, glob=_optional_str(args, "glob") or None,
                     ignore_case=_optional_bool(args, "ignoreCase"), literal=_optional_bool(args, "literal"),
                     context=optional_int(args, "context", minimum=0) or 0,
                     limit=optional_int(args, "limit", minimum=1) or DEFAULT_LIMIT)


def _check_target(target: str) -> None:
    """Raise `ToolError` unless `target` is a directory or a regular file: one the OS cannot examine (a link loop,
    no permission) is named with its reason, a FIFO or device with what it is (searching it would wait for a
    writer, or read for ever), as `read` does; so is a directory that cannot be listed or a file that cannot be
    read (no match could be found in them)."""
    info = search_root(target)
    if not stat.S_ISDIR(info.st_mode):
        check_regular_mode(info.st_mode, target)
        refusal = _reading_refusal(target)
        if refusal is not None:
            raise cannot_search(target, refusal)


def _reading_refusal(path: str) -> OSError | None:
    """The OS's error for a regular file that cannot be opened for reading (no permission), else None."""
    try:
        os.close(open_regular(path, os.O_RDONLY))
    except OSError as exc:
        return exc
    return None


def _optional_str(args: dict[str, JsonValue], name: str) -> str | None:
    value = args.get(name)
    if value is not None and not isinstance(value, str):
        raise ToolError(f"Parameter '{name}' must be a string, got {json_type(value)}")
    return value


def _optional_bool(args: dict[str, JsonValue], name: str) -> bool:
    value = args.get(name)
    if value in (None, "false"):
        return False
    if value == "true":  # models sometimes quote booleans
        return True
    if not isinstance(value, bool):
        raise ToolError(f"Parameter '{name}' must be a boolean, got {json_type(value)}")
    return value


async def _in_thread(work: Callable[[threading.Event], None]) -> None:
    """Run a blocking search in a thread; cancelling the tool asks the thread to stop."""
    stop = threading.Event()
    try:
        await asyncio.to_thread(work, stop)
    finally:
        stop.set()


def _result(matches: Matches) -> ToolResult:
    details: dict[str, object] = {"matchLimitReached": matches.limit if matches.full else None,
                               "linesTruncated": matches.shortened}
    skipped = skip_notices(matches.unreadable, matches.unlisted)
    if not matches.lines:
        return text_result(*finish(["No matches found"], skipped, details))
    notices = []
    if matches.full:
        notices.append(f"Stopped at {counted(matches.limit, 'match', 'matches')}: use limit={matches.limit * 2} "
                       "for more, or refine the "
                       "pattern")
    if matches.shortened:
        notices.append(f"Lines over {MAX_LINE_CHARS} characters were shortened: read the file for the whole line")
    text, details = finish(matches.lines, notices + skipped, details)
    return text_result(text, details)


# -- Python search ---------------------------------------------------------------------------------------


def search_python(query: GrepQuery, matches: Matches, stop: threading.Event) -> None:
    """Search every non-ignored text file under the target (or the target file itself) in path order."""
    regex = query.regex()
    if os.path.isfile(query.target):
        _search_file(query.target, os.path.basename(query.target), regex, query.context, matches)
        return
    wanted = _glob_filter(query.glob)
    for rel, is_dir in walk(query.target, stop=stop, on_unlistable=matches.skip_dir):
        if is_dir or not wanted(rel) or os.path.islink(os.path.join(query.target, rel)):
            continue
        if not _search_file(os.path.join(query.target, rel), rel, regex, query.context, matches):
            return


def _glob_filter(glob: str | None) -> Callable[[str], bool]:
    """`glob` as `rg --glob` reads it for ordinary patterns; a leading `!` excludes instead."""
    if not glob:
        return lambda rel: True
    negated = glob.startswith("!")
    matches = path_matcher(glob[1:] if negated else glob)
    return lambda rel: matches(rel, False) != negated


def _search_file(path: str, rel: str, regex: re.Pattern[str], context: int, matches: Matches) -> bool:
    """Add this file's matches with context; False once the limit is reached (and its trailing context
    added). Binary files are skipped, and so is anything not a regular file (opening a FIFO for reading would
    wait for a writer for ever; opening some devices has side effects); a file the OS refuses is skipped and
    noted in `matches`."""
    try:
        with os.fdopen(open_regular(path, os.O_RDONLY), "rb") as handle:
            if b"\0" in handle.read(_BINARY_SNIFF_BYTES):
                return True
            handle.seek(0)
            return _scan(handle, rel, regex, context, matches)
    except ToolError:
        return True
    except OSError as exc:
        matches.skip_file(rel, exc)
        return True


def _scan(handle: Iterable[bytes], rel: str, regex: re.Pattern[str], context: int, matches: Matches) -> bool:
    before: deque[tuple[int, str]] = deque(maxlen=context)
    after = 0
    for number, raw in enumerate(handle, 1):
        line = raw.rstrip(b"\n").rstrip(b"\r").decode("utf-8", "replace")
        if regex.search(line):
            if matches.full:
                return False
            for item in before:
                matches.add(rel, *item, match=False)
            before.clear()
            matches.add(rel, number, line, match=True)
            after = context
        elif after > 0:
            matches.add(rel, number, line, match=False)
            after -= 1
        else:
            before.append((number, line))
        if matches.full and after == 0:
            return False
    return not matches.full


# -- ripgrep ---------------------------------------------------------------------------------------------


async def _search_with_rg(rg: str, query: GrepQuery, matches: Matches) -> None:
    is_file = os.path.isfile(query.target)
    argv = [rg, "--json", "--line-number", "--color=never", "--hidden", "--no-require-git", "--sort", "path"]
    argv += ["--ignore-case"] if query.ignore_case else []
    argv += ["--fixed-strings"] if query.literal else []
    argv += ["--glob", query.glob] if query.glob else []
    argv += ["--glob", "!.git", "--context", str(query.context), "--regexp", query.pattern, "--"]
    argv.append(os.path.basename(query.target) if is_file else ".")
    cwd = os.path.dirname(query.target) if is_file else query.target
    reader = _RgReader(matches, query.context)
    try:
        _note_rg_refusals(await stream_lines(argv, reader.feed, ok_codes=(0, 1), cwd=cwd), cwd, matches)
    except ExternalSearchError as exc:
        failure = _note_rg_refusals(str(exc), cwd, matches)
        if failure and not matches.lines:  # rg also exits 2 after unreadable files: those are noted, not failures
            raise ToolError(f"grep failed: {failure}") from None
    except ValueError as exc:  # a record over the stream limit
        raise ToolError(f"grep failed: {exc}") from None


def _note_rg_refusals(stderr: str, cwd: str, matches: Matches) -> str:
    """Note in `matches` each file or directory rg reported as refused by the OS; the rest of `stderr` (a real
    failure, or "")."""
    refused, rest = os_refusals(stderr)
    for rel, exc in refused:
        (matches.skip_dir if os.path.isdir(os.path.join(cwd, rel)) else matches.skip_file)(rel, exc)
    return rest


class _RgReader:
    """Feeds `rg --json` records into `Matches`; after the limit, only the last match's trailing context."""

    def __init__(self, matches: Matches, context: int):
        self.matches = matches
        self.after = context  # context lines still wanted once the limit is reached
        self.last_line = 0

    def feed(self, raw: bytes) -> bool:
        try:
            record = json.loads(raw)
        except ValueError:
            return True
        kind = record.get("type")
        if kind not in ("match", "context"):
            return not self.matches.full
        data = record["data"]
        if self.matches.full:  # only lines directly after the last match, as many as `context`
            if kind != "context" or self.after == 0 or data["line_number"] != self.last_line + 1:
                return False
            self.after -= 1
        rel = _rg_text(data["path"]).removeprefix("./")
        line = _rg_text(data["lines"]).rstrip("\n").rstrip("\r")
        self.matches.add(rel, data["line_number"], line, match=kind == "match")
        self.last_line = data["line_number"]
        return not (self.matches.full and self.after == 0)


class RgText(TypedDict, total=False):
    """ripgrep's `--json` "arbitrary data": `text` when it is UTF-8, else `bytes` (base64)."""

    text: str
    bytes: str


def _rg_text(value: RgText) -> str:
    """rg's `{"text": ...}`, or `{"bytes": base64}` for data that is not UTF-8."""
    if "text" in value:
        return value["text"]
    return base64.b64decode(value.get("bytes", "")).decode("utf-8", "replace")
