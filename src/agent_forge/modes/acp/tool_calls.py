"""What an editor shows of a tool call: ACP `kind`, `title`, `locations` and `content` from the tool's name,
arguments and result (schema `ToolCall`, `ToolCallUpdate`, `ToolCallContent`).

Paths in locations and diffs are absolute (ACP requires it). write and edit carry `diff` content: while pending
the text the model sent (the new file, or each replacement), once done the whole file before and after the call
(`witness.py`: read when the call's turn came and when its change was done). Other tools carry their result
text as `content`; bash's output streams into its call as it arrives.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ...coding.paths import path_text

if TYPE_CHECKING:
    from .witness import FileChange

KINDS = {"read": "read", "ls": "read", "write": "edit", "edit": "edit", "bash": "execute", "grep": "search",
         "find": "search"}
MAX_SNAPSHOT_BYTES = 2 * 1024 * 1024
"""A file larger than this gets no whole-file diff (its edits are still shown): an editor diffs both texts."""
MAX_TITLE = 120


def kind_of(name: str) -> str:
    """ACP `ToolKind`: the built-in tools' nature, `fetch` for tools named so, `other` for the rest (MCP,
    plugins)."""
    if name in KINDS:
        return KINDS[name]
    return "fetch" if "fetch" in name.lower() else "other"


def title_of(name: str, args: dict[str, Any]) -> str:
    """One line (each part through `path_text`): `Read src/a.py`, `Edit b.txt`, the command of a bash call, `grep TODO in src`."""
    path = path_text(_str(args.get("path")))  # every outside part on one line: the model may send any string
    if name == "bash":
        text = _str(args.get("command")).strip().splitlines()
        title = path_text(text[0]) + (" …" if len(text) > 1 else "") if text else "bash"
    elif name in ("read", "write", "edit", "ls"):
        title = f"{name.capitalize()} {path or '.'}"
    elif name in ("grep", "find"):
        title = f"{name} {path_text(_str(args.get('pattern')))}" + (f" in {path}" if path else "")
    else:
        title = path_text(name)
    return title if len(title) <= MAX_TITLE else title[: MAX_TITLE - 1] + "…"


def locations_of(name: str, args: dict[str, Any], cwd: str, line: int | None = None) -> list[dict[str, Any]]:
    """The files a call touches (absolute paths), with the line it starts at when known: `read`'s `offset`,
    an edit's first changed line (`line`, from its result)."""
    path = args.get("path")
    if not isinstance(path, str) or not path or name not in KINDS or name == "bash":
        return []
    location: dict[str, Any] = {"path": absolute(path, cwd)}
    offset = args.get("offset") if name == "read" else line
    if isinstance(offset, int) and not isinstance(offset, bool) and offset >= 0:
        location["line"] = offset
    return [location]


def pending_content(name: str, args: dict[str, Any], cwd: str) -> list[dict[str, Any]]:
    """The diffs the model asked for, before the call runs (an empty list for other tools)."""
    path = args.get("path")
    if not isinstance(path, str) or not path:
        return []
    full = absolute(path, cwd)
    if name == "write" and isinstance(args.get("content"), str):
        return [{"type": "diff", "path": full, "oldText": None, "newText": args["content"]}]
    if name == "edit":
        edits = args.get("edits") if isinstance(args.get("edits"), list) else [args]
        return [{"type": "diff", "path": full, "oldText": e["oldText"], "newText": e["newText"]}
                for e in edits if isinstance(e, dict) and isinstance(e.get("oldText"), str)
                and isinstance(e.get("newText"), str)]
    return []


def result_content(name: str, args: dict[str, Any], result: dict[str, Any], cwd: str,
                   change: FileChange | None, failed: bool) -> list[dict[str, Any]]:
    """Content of a finished call: a whole-file diff for a successful write/edit whose `change` could be read
    (`witness.py`; the diffs the model asked for when it is unknown), else the result's text and images."""
    if name in ("write", "edit") and not failed:
        if change is not None and isinstance(change.after, str):
            return [{"type": "diff", "path": change.path, "oldText": change.before, "newText": change.after}]
        return pending_content(name, args, cwd) or output_content(result)
    return output_content(result, fenced=(name == "bash"))


def output_content(result: Any, *, fenced: bool = False) -> list[dict[str, Any]]:
    """A tool result's (or partial result's) blocks as ACP `content` items; bash output in a code fence."""
    blocks = result.get("content") if isinstance(result, dict) else None
    items: list[dict[str, Any]] = []
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            text = block["text"]
            items.append(_content({"type": "text", "text": _fence(text) if fenced else text}))
        elif block.get("type") == "image" and isinstance(block.get("data"), str):
            items.append(_content({"type": "image", "data": block["data"],
                                   "mimeType": str(block.get("mimeType") or "image/png")}))
    return items


def read_text(path: str) -> str | None:
    """A regular file's UTF-8 text when it is at most `MAX_SNAPSHOT_BYTES`, else None."""
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > MAX_SNAPSHOT_BYTES:
            return None
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def absolute(path: str, cwd: str) -> str:
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))


def _content(block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content", "content": block}


def _fence(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}\n{text.rstrip(chr(10))}\n{fence}"


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""
