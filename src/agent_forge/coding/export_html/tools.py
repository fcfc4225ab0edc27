"""Tool calls (the arguments an assistant sent) and tool results (what came back), per built-in tool."""

from __future__ import annotations

from typing import Callable

from .blocks import image, note, raw_json
from .context import Record
from .highlight import code_block
from .text import esc, strip_ansi


def tool_call(item: Record) -> str:
    """A tool call block: tool name and id, then its arguments laid out for the tool (`bash` command, `write`
    content, `edit` replacements as a diff, ...); unknown tools show their arguments as JSON."""
    name, args = item.get("name"), item.get("arguments")
    render = _CALLS.get(name) if isinstance(name, str) and isinstance(args, dict) else None
    body = render(args) if render is not None else raw_json(args)
    if isinstance(item.get("argumentsError"), str):
        body += note(f"Arguments could not be parsed: {item['argumentsError']}", "error")
    return (f'<div class="tool-call"><div class="tool-head"><span class="tool-name">{esc(name)}</span>'
            f'<span class="tool-id">{esc(item.get("id", ""))}</span></div>{body}</div>')


def tool_result(message: Record, call: Record | None) -> str:
    """A `toolResult` message's body: its text (file contents highlighted for `read`, terminal codes removed
    otherwise), its images, and from `details` the edit diff and truncation notes. `call` is the matching
    tool call block when the session has it."""
    texts, images = _split_content(message.get("content"))
    text = "\n".join(texts)
    args = call.get("arguments") if call and isinstance(call.get("arguments"), dict) else {}
    path = args.get("path") if isinstance(args.get("path"), str) else None
    if message.get("toolName") == "read" and path and not message.get("isError"):
        parts = [code_block(text, filename=path)]
    else:
        parts = [code_block(strip_ansi(text)) if text else note("(no output)")]
    parts.extend(image(item) for item in images)
    parts.extend(_details(message.get("details")))
    return "".join(parts)


def _split_content(value: object) -> tuple[list[str], list[Record]]:
    if isinstance(value, str):
        return [value], []
    items = value if isinstance(value, list) else []
    texts = [str(b.get("text", "")) for b in items if isinstance(b, dict) and b.get("type") == "text"]
    images = [b for b in items if isinstance(b, dict) and b.get("type") == "image"]
    return texts, images


def _details(details: object) -> list[str]:
    if not isinstance(details, dict):
        return []
    parts = []
    if isinstance(details.get("diff"), str) and details["diff"]:
        parts.append(code_block(details["diff"], "diff"))
    truncation = details.get("truncation")
    if isinstance(truncation, dict) and truncation.get("truncated"):
        parts.append(note("Output was truncated."))
    if isinstance(details.get("fullOutputPath"), str):
        parts.append(note(f"Full output: {details['fullOutputPath']}"))
    return parts


# --- arguments per tool ----------------------------------------------------------------------------------


def _text(args: Record, key: str) -> str:
    value = args.get(key)
    return value if isinstance(value, str) else ("" if value is None else str(value))


def _path(args: Record, suffix: str = "") -> str:
    return f'<div class="tool-path">{esc(_text(args, "path"))}{esc(suffix)}</div>'


def _bash(args: Record) -> str:
    timeout = f'<div class="note">timeout {esc(args["timeout"])} s</div>' if "timeout" in args else ""
    return code_block(_text(args, "command"), "bash") + timeout


def _read(args: Record) -> str:
    window = [f"{key} {args[key]}" for key in ("offset", "limit") if key in args]
    return _path(args, f" ({', '.join(window)})" if window else "")


def _write(args: Record) -> str:
    return _path(args) + code_block(_text(args, "content"), filename=_text(args, "path"))


def _edit(args: Record) -> str:
    edits = args.get("edits")
    if not isinstance(edits, list):  # older single-replacement shape
        edits = [{"oldText": args.get("oldText", ""), "newText": args.get("newText", "")}]
    diffs = [_replacement(edit) for edit in edits]
    return _path(args) + "".join(diffs)


def _replacement(edit: object) -> str:
    if not isinstance(edit, dict):
        return raw_json(edit)
    old = [f"-{line}" for line in _text(edit, "oldText").split("\n")]
    new = [f"+{line}" for line in _text(edit, "newText").split("\n")]
    return code_block("\n".join(old + new), "diff")


_CALLS: dict[str, Callable[[Record], str]] = {
    "bash": _bash,
    "read": _read,
    "write": _write,
    "edit": _edit,
}
"""Tool name → renderer of its arguments; other tools (grep, find, ls, plugin tools) show JSON."""
