"""The `read` tool: lines of a text file (offset, limit, head truncation) or an image file as base64."""

from __future__ import annotations

import asyncio
import base64
import codecs
import io
import os
import shlex
from typing import TYPE_CHECKING, BinaryIO

from ...agent.types import ToolError, ToolResult, ToolUpdate, text_result
from ...ai.types import JsonValue
from .args import check_object, optional_int, require_string
from .file_access import LOCAL, FileAccess
from .file_kinds import MAX_IMAGE_BYTES, SNIFF_BYTES, image_mime_type, looks_binary, open_regular
from ..paths import path_text
from .paths import resolve_tool_path
from .truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    TruncationResult,
    append_notice,
    format_size,
    truncate_head,
)
from ...words import counted

if TYPE_CHECKING:
    from .line_window import LineSpan


_READ_SLACK_BYTES = 8
"""Read this much past the byte limit so that dropping a cut character or the BOM still leaves the text over
the limit, and truncation is reported."""

_BOM = b"\xef\xbb\xbf"

DESCRIPTION = (
    f"Read a file. Text comes back from line `offset` (1-indexed, default 1), at most {DEFAULT_MAX_LINES} lines "
    f"or {format_size(DEFAULT_MAX_BYTES)}, whichever comes first; `limit` asks for fewer lines. When more of "
    "the file remains, the result ends with a note giving the `offset` to continue from. PNG, JPEG, GIF and "
    "WebP images are returned as images. Binary files are refused: inspect them with bash."
)

PARAMETERS: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File to read, relative to the working directory or absolute"},
        "offset": {"type": "number", "description": "First line to return, 1-indexed (default 1)"},
        "limit": {"type": "number", "description": "Maximum number of lines to return"},
    },
    "required": ["path"],
}


class ReadTool:
    """`read(path, offset?, limit?)`; `details` is `{"truncation": TruncationResult | None}`.

    `offset` 0 is taken as 1, since models often mean "from the start". Errors (`ToolError`): missing file,
    directory or other non-regular file, binary file, image over `MAX_IMAGE_BYTES`, offset past the end.

    Lines past the shown ones are counted only up to `COUNT_LIMIT_BYTES` into the file (a huge or growing file
    is not scanned to its end): beyond that the notice says more lines follow instead of giving the total,
    and `details.truncation` totals cover the scanned part only.
    """

    name = "read"
    read_only = True  # runs unasked under the `ask` approval policy (coding/approvals.py)
    label = "Read"
    description = DESCRIPTION
    parameters = PARAMETERS

    files: FileAccess = LOCAL  # where text comes from (`file_access.py`): the disk, or an editor's buffers

    def __init__(self, cwd: str):
        self.cwd = cwd

    async def execute(self, tool_call_id: str, args: dict[str, JsonValue],
                      on_update: ToolUpdate | None = None) -> ToolResult:
        args = check_object(args)
        path = resolve_tool_path(require_string(args, "path"), self.cwd)
        offset = optional_int(args, "offset", minimum=0) or 1
        limit = optional_int(args, "limit", minimum=1)
        text = await self.files.read_text(path)
        if text is not None:  # the editor's version of the file, shown as the disk's would be
            return _text_result(io.BytesIO(text.encode("utf-8", "replace")), path, offset, limit)
        # A thread, because scanning a multi-gigabyte file must not stall the event loop.
        return await asyncio.to_thread(read_file, path, offset, limit)


def read_file(path: str, offset: int = 1, limit: int | None = None) -> ToolResult:
    """The `read` result for the absolute `path` (see `ReadTool`)."""
    try:
        with open(open_regular(path, os.O_RDONLY), "rb") as f:
            head = f.read(SNIFF_BYTES)
            mime = image_mime_type(head)
            if mime:
                return _image_result(f, mime, path)
            if looks_binary(head):
                raise ToolError(f"{path_text(path)} looks like a binary file ({format_size(os.fstat(f.fileno()).st_size)}); "
                                "read shows only text and images. Inspect it with bash (e.g. `file`, `xxd | head`).")
            f.seek(0)
            return _text_result(f, path, offset, limit)
    except FileNotFoundError:
        raise ToolError(f"File not found: {path_text(path)}") from None
    except PermissionError:
        raise ToolError(f"Permission denied: {path_text(path)}") from None
    except OSError as exc:
        raise ToolError(f"Cannot read {path_text(path)}: {exc.strerror or exc}") from None


def _image_result(f: BinaryIO, mime: str, path: str) -> ToolResult:
    size = os.fstat(f.fileno()).st_size
    if size > MAX_IMAGE_BYTES:
        raise ToolError(f"{path_text(path)} is an image of {format_size(size)}, over the {format_size(MAX_IMAGE_BYTES)} "
                        "limit for images.")
    f.seek(0)
    data = base64.b64encode(f.read()).decode("ascii")
    return ToolResult(
        content=[{"type": "text", "text": f"Read image file [{mime}]"},
                 {"type": "image", "data": data, "mimeType": mime}],
        details={"truncation": None},
    )


def _text_result(f: BinaryIO, path: str, offset: int, limit: int | None) -> ToolResult:
    from .line_window import COUNT_LIMIT_BYTES, locate_lines  # by the first read: start-up does not pay

    last = offset + limit - 1 if limit else None
    # At most DEFAULT_MAX_LINES lines are shown; one more tells truncate_head that lines were cut.
    needed = min(last or offset + DEFAULT_MAX_LINES, offset + DEFAULT_MAX_LINES)
    span = locate_lines(f, offset, last, enough=needed, count_limit=COUNT_LIMIT_BYTES)
    if span.start is None:
        where = "is empty" if span.total_lines == 0 else f"has {counted(span.total_lines, 'line')}"
        raise ToolError(f"offset {offset} is past the end of the file: {path_text(path)} {where}.")
    if span.total_lines == 0:
        return text_result("(empty file)", {"truncation": None})
    size = span.end - span.start
    f.seek(span.start)
    raw = f.read(min(size, DEFAULT_MAX_BYTES + _READ_SLACK_BYTES))
    if span.start == 0 and raw.startswith(_BOM):
        raw = raw[len(_BOM):]
    text = codecs.getincrementaldecoder("utf-8")("replace").decode(raw, final=len(raw) >= size)
    truncation = truncate_head(text)
    range_end = min(span.total_lines, last or span.total_lines)
    if truncation["truncated"]:
        truncation = {**truncation, "totalLines": range_end - offset + 1, "totalBytes": size}
    notice = _continuation_notice(truncation, path, offset, span)
    body = truncation["content"] if notice is None else append_notice(truncation["content"], notice)
    return text_result(body, {"truncation": truncation if truncation["truncated"] else None})


def _continuation_notice(truncation: TruncationResult, path: str, offset: int, span: LineSpan) -> str | None:
    total = span.total_lines
    shown_end = offset + truncation["outputLines"] - 1
    more = f" Use offset={shown_end + 1} to continue." if shown_end < total or not span.complete else ""
    from .line_window import COUNT_LIMIT_BYTES

    uncounted = f"not counted past {format_size(COUNT_LIMIT_BYTES)}"
    if truncation["firstLineExceedsLimit"]:
        limit, skip = format_size(DEFAULT_MAX_BYTES), truncation["outputBytes"] + 1
        command = f"sed -n '{offset}p' {shlex.quote(path)} | tail -c +{skip} | head -c {DEFAULT_MAX_BYTES}"
        return (f"[Line {offset} is longer than {limit}; only its first {limit} are shown. "
                f"See the rest with bash, e.g. `{command}`.{more}]")
    if truncation["truncated"]:
        by_bytes = f" ({format_size(DEFAULT_MAX_BYTES)} limit)" if truncation["truncatedBy"] == "bytes" else ""
        if not span.complete:
            return f"[Showing lines {offset}-{shown_end}{by_bytes}; more lines in file ({uncounted}).{more}]"
        return f"[Showing lines {offset}-{shown_end} of {total}{by_bytes}.{more}]"
    if not span.complete:
        return f"[More lines in file ({uncounted}).{more}]"
    if shown_end < total:
        return f"[{counted(total - shown_end, 'more line')} in file.{more}]"
    return None

