"""MCP server tools as agent tools: names, results, progress and cancellation (`docs/mcp.md`, "Tools").

A server's tool `t` of server `s` is the agent tool `s_t`, with every character outside `[A-Za-z0-9_-]` made
`_` and cut to 64 characters (the providers' name rule). Names that still clash (with another MCP tool, a
built-in or a plugin tool) are all given a suffix `_<8 hex digits>` hashed from server and tool name, so the
outcome does not depend on which server connected first.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
from typing import TYPE_CHECKING, Callable, Iterable, Mapping

from ...agent.types import ToolError, ToolResult, ToolUpdate
from ...ai.types import JsonValue, UserContent
from ..tools.file_kinds import image_data_problem
from ..tools.output_files import OutputDir
from ..tools.truncate import (DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncationResult, append_notice, format_size,
                              truncate_head)
from .deadline import CallDeadlines, CallExpired
from ...words import counted
from .limits import MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, MAX_PROGRESS_CHARS, cut, one_line, shown_name

if TYPE_CHECKING:
    from mcp_types import ContentBlock, Tool

    from .connection import ServerConnection

MAX_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def base_name(server: str, tool: str) -> str:
    """`<server>_<tool>` made to fit `^[A-Za-z0-9_-]{1,64}$`."""
    return _UNSAFE.sub("_", f"{server}_{tool}")[:MAX_NAME]


def hashed_name(server: str, tool: str) -> str:
    """The clash-free form of `base_name`: its first 55 characters, `_` and 8 hex digits of a hash."""
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{base_name(server, tool)[:MAX_NAME - 9]}_{digest}"


def assign_names(entries: Iterable[tuple[str, str]],
                 taken: Iterable[str]) -> tuple[dict[tuple[str, str], str], list[tuple[str, str]]]:
    """Agent tool names for `(server, tool)` pairs, none in `taken` (the other tools of the session), and the
    clashes as `(server, message)`. Every pair whose base name is shared (or taken) gets its hashed name."""
    entries = list(entries)
    taken = set(taken)
    counts: dict[str, int] = {}
    for server, tool in entries:
        counts[base_name(server, tool)] = counts.get(base_name(server, tool), 0) + 1
    names, clashes = {}, []
    for server, tool in entries:
        base = base_name(server, tool)
        if counts[base] > 1 or base in taken:
            names[(server, tool)] = hashed_name(server, tool)
            clashes.append((server, f"MCP tool {shown_name(tool)} of server {server!r}: the name {base} is not "
                                    f"unique; offered as {names[(server, tool)]}"))
        else:
            names[(server, tool)] = base
    return names, clashes


class McpTool:
    """One server tool; `execute` calls it on the server's live connection.

    Errors (`ToolError`): the server is not connected, the call failed (connection lost, timeout, a JSON-RPC
    error), or the result has `isError`. Abort cancels the call: the SDK sends `notifications/cancelled`, and the
    partial result says so. From stdin EOF on, a call still running after `pluginHandlerTimeoutMs` is cancelled
    the same way and fails (`deadline.py`). Text over the `bash` limits is cut (head kept) with a notice naming
    the file holding all of it."""

    def __init__(self, connection: ServerConnection, tool: Tool, name: str,
                 output_dir: Callable[[], OutputDir] | None = None, deadlines: CallDeadlines | None = None,
                 limit: float | None = None):
        self.connection = connection
        self.limit = limit  # seconds a call may run (`toolTimeoutMs`, print mode's default), None: no limit
        self.deadlines = deadlines or CallDeadlines()
        self.server = connection.config.name
        self.tool_name: str = tool.name
        self.name = name
        self.label = f"{self.server}: {one_line(getattr(tool, 'title', None) or tool.name, MAX_NAME_CHARS)}"
        self.description = cut(tool.description, MAX_DESCRIPTION_CHARS, "the server's description") \
            if tool.description else f"Tool {one_line(tool.name, MAX_NAME_CHARS)} of MCP server {self.server}"
        self.parameters: dict[str, JsonValue] = offered_schema(tool.input_schema)
        # the server's word that the tool changes nothing: it then runs unasked under `approvals: ask`. The SDK
        # model's field is `read_only_hint` (`readOnlyHint` is only its wire alias, not an attribute)
        self.read_only = getattr(getattr(tool, "annotations", None), "read_only_hint", None) is True
        self.output_dir = output_dir

    async def execute(self, tool_call_id: str, args: dict[str, JsonValue], on_update: ToolUpdate) -> ToolResult:
        progress = _Progress(on_update)
        try:
            result = await self.deadlines.run(self.connection.call_tool(self.tool_name, args, progress.report),
                                              self.limit)
        except CallExpired as exc:
            raise ToolError(expiry_message(exc, self.server, f"the call of {self.tool_name}")) from None
        except asyncio.CancelledError:
            progress.cancelled(self.server)
            raise
        content, details = truncated(to_content(result), {"server": self.server, "tool": self.tool_name},
                                     self.output_dir)
        if getattr(result, "is_error", False):
            raise ToolError(_text_of(content) or f"MCP tool {self.tool_name} failed", details)
        return ToolResult(content=content or [{"type": "text", "text": "(no output)"}], details=details)


def expiry_message(exc: CallExpired, server: str, what: str) -> str:
    """Why a call that `CallDeadlines` cancelled failed: its own limit or the deadline after stdin closed."""
    told = "it was cancelled (the server was sent notifications/cancelled)"
    if exc.limit:
        return f"MCP server {server}: {what} did not end within {exc.seconds:g} s (toolTimeoutMs); {told}"
    return (f"MCP server {server}: {what} was still running {exc.seconds:g} s after stdin closed or the session "
            f"was closed (pluginHandlerTimeoutMs); {told}")


def truncated(content: list[UserContent], details: dict[str, object],
              output_dir: Callable[[], OutputDir] | None) -> tuple[list[UserContent], dict[str, object]]:
    """`(content, details)` with text over the `bash` limits cut (head kept, images kept) and a notice naming
    the file in `output_dir()` holding all of it; `details` then has `truncation` and `fullOutputPath`."""
    text = _text_of(content)
    cut = truncate_head(text, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES)
    if not cut["truncated"]:
        return content, details
    where, path = _save(text, output_dir, f"mcp-{details.get('server')}")
    notice = f"[{_shown(cut)}.{where}]"
    images = [block for block in content if block.get("type") == "image"]
    kept: list[UserContent] = [{"type": "text", "text": append_notice(cut["content"], notice)}, *images]
    return kept, {**details, "truncation": cut, "fullOutputPath": path}


def _shown(cut: TruncationResult) -> str:
    """What the kept head is: `Showing the first 2000 lines (50KB) of 9000 lines (1.2MB)`, or for a first line
    over the byte limit `Line 1 is longer than 50KB; only its first 50KB are shown (1 line, 20MB in all)`, as
    `read` says it."""
    lines, size = counted(cut["totalLines"], "line"), format_size(cut["totalBytes"])
    if cut["firstLineExceedsLimit"]:
        kept = format_size(cut["maxBytes"])
        return f"Line 1 is longer than {kept}; only its first {kept} are shown ({lines}, {size} in all)"
    shown = f"{counted(cut['outputLines'], 'line')} ({format_size(cut['outputBytes'])})"
    return f"Showing the first {shown} of {lines} ({size})"


def _save(text: str, output_dir: Callable[[], OutputDir] | None, prefix: str) -> tuple[str, str | None]:
    """`text` in a new `<prefix>-<random>.log` of `output_dir()` (`prefix`: `mcp-<server>`, a server name is
    safe in a file name): `(the notice's sentence, its path or None)`."""
    if output_dir is None:
        return " The full output was not saved.", None
    try:
        fd, path = output_dir().create_file(prefix)
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass") as out:
            out.write(text)
    except OSError as exc:
        return f" Full output not saved: {exc.strerror or exc}", None
    return f" Full output: {path}", path


class _Progress:
    """MCP progress notifications as `tool_execution_update` partial results."""

    def __init__(self, on_update: ToolUpdate):
        self.on_update = on_update
        self.last = ""

    async def report(self, progress: float, total: float | None, message: str | None) -> None:
        amount = f"{progress:g}/{total:g}" if total is not None else f"{progress:g}"
        message = cut(message, MAX_PROGRESS_CHARS, "the progress message") if message else message
        self.last = f"progress {amount}" + (f": {message}" if message else "")
        self.on_update(ToolResult(content=[{"type": "text", "text": self.last}],
                                  details={"progress": progress, "total": total, "message": message}))

    def cancelled(self, server: str) -> None:
        text = f"Cancelled: MCP server {server} was sent notifications/cancelled."
        self.on_update(ToolResult(content=[{"type": "text", "text": f"{self.last}\n{text}" if self.last else text}]))


def to_content(result: object) -> list[UserContent]:
    """Tool result blocks: text, images, embedded resources as text headed by their URI, resource links and
    audio described in a line, and `structuredContent` as JSON text when there is no text block (servers
    SHOULD send its serialised form as text too; then that text is what the model gets)."""
    blocks: list[UserContent] = []
    for item in getattr(result, "content", None) or []:
        block = _block(item)
        if block is not None:
            blocks.append(block)
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        if not any(b.get("type") == "text" for b in blocks):
            blocks.append({"type": "text", "text": json.dumps(structured, ensure_ascii=False, indent=2)})
    return blocks


def _block(item: ContentBlock) -> UserContent | None:
    kind = getattr(item, "type", None)
    if kind == "text":
        return {"type": "text", "text": item.text}
    if kind == "image":
        return checked_image(item.data, item.mime_type, "Image")
    if kind == "resource":
        resource = item.resource
        if getattr(resource, "text", None) is not None:
            return {"type": "text", "text": f"[Resource {resource.uri}]\n{resource.text}"}
        size = len(getattr(resource, "blob", "") or "") * 3 // 4
        return {"type": "text", "text": f"[Resource {resource.uri}: {resource.mime_type or 'binary'}, "
                                        f"about {format_size(size)}, not shown]"}
    if kind == "resource_link":
        return {"type": "text", "text": f"[Resource link {item.uri}" + (f": {item.name}]" if item.name else "]")}
    if kind == "audio":
        return {"type": "text", "text": f"[Audio: {item.mime_type}, not shown]"}
    return {"type": "text", "text": f"[Content of type {kind!r} not shown]"} if kind else None


def checked_image(data: object, mime: object, what: str) -> UserContent:
    """An image block of `data` (base64) if it passes `image_data_problem`, else a line of text saying why it is
    not shown (`what` heads it: `Image`, `Resource <uri>`)."""
    problem = image_data_problem(data, mime)
    if problem is None:
        return {"type": "image", "data": data, "mimeType": mime}  # type: ignore[typeddict-item]
    return {"type": "text", "text": f"[{what}: not shown, {problem}]"}


def _text_of(content: list[UserContent]) -> str:
    return "\n".join(block["text"] for block in content if block.get("type") == "text")


def offered_schema(schema: object) -> dict[str, JsonValue]:
    """The tool's input schema as offered to the model: an object schema (`{"type": "object"}` when missing)."""
    if not isinstance(schema, Mapping):
        return {"type": "object", "properties": {}}
    out = dict(schema)
    out.setdefault("type", "object")
    if out.get("type") == "object":
        out.setdefault("properties", {})
    return out
