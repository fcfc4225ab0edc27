"""Session messages as plain transcript text for a summarisation request, and the files their tool calls touched.

Each message renders as labelled text (`[User]: ...`, `[Assistant]: ...`, `[Tool call]: name {json}`,
`[Tool result]: ...`), the line format seed 003 shows in its `compactedText` example. Plain text keeps the
model from treating the transcript as a conversation to continue. Thinking is left out (it is not part of the
context the summary replaces), and failed or aborted assistant turns too (the model never sees them).
"""

from __future__ import annotations

import json
from typing import Any

from ..session.entries import AgentMessage

TOOL_RESULT_CHARS = 2000
"""Tool output kept per result in a summary request; longer output is cut with a note of what was left out."""

READ_TOOLS = ("read",)
MODIFY_TOOLS = ("write", "edit")


def is_context_visible(message: AgentMessage) -> bool:
    """True when the message reaches the model (`coding/messages.py` drops the others)."""
    role = message.get("role")
    if role == "assistant":
        return message.get("stopReason") not in ("error", "aborted")
    if role == "bashExecution":
        return not message.get("excludeFromContext")
    return role in ("user", "toolResult", "custom", "compactionSummary", "branchSummary")


def render_message(message: AgentMessage, *, tool_result_chars: int | None = TOOL_RESULT_CHARS) -> str:
    """The transcript text of one message ("" for messages the model does not see). `tool_result_chars`:
    cut tool output longer than this (None keeps it whole, as verbatim-line compaction needs)."""
    if not is_context_visible(message):
        return ""
    role = message["role"]
    if role == "assistant":
        return _assistant_text(message)
    if role == "toolResult":
        return "[Tool result]: " + _cut(_content_text(message.get("content")), tool_result_chars)
    if role == "bashExecution":
        output = _cut(str(message.get("output") or "").rstrip("\n"), tool_result_chars)
        return f"[User ran]: {message.get('command', '')}" + (f"\n{output}" if output else "")
    if role == "compactionSummary":
        return str(message.get("summary") or "")  # earlier transcript text or an earlier note, as it was
    if role == "branchSummary":
        return f"[Branch summary]: {message.get('summary') or ''}"
    label = "User" if role == "user" else "Note"
    return f"[{label}]: {_content_text(message.get('content'))}"


def serialize(messages: list[AgentMessage]) -> str:
    """The messages' transcript texts, separated by blank lines (summary requests)."""
    return "\n\n".join(text for text in (render_message(m) for m in messages) if text)


def _assistant_text(message: AgentMessage) -> str:
    parts = []
    text = "".join(b.get("text", "") for b in _blocks(message) if b.get("type") == "text").strip()
    if text:
        parts.append(f"[Assistant]: {text}")
    for block in _blocks(message):
        if block.get("type") == "toolCall":
            arguments = json.dumps(block.get("arguments"), ensure_ascii=False, default=str)
            parts.append(f"[Tool call]: {block.get('name', '')} {arguments}")
    return "\n".join(parts)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    pieces = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text":
            pieces.append(str(block.get("text", "")))
        elif isinstance(block, dict) and block.get("type") == "image":
            pieces.append("[image]")
    return "\n".join(pieces)


def _blocks(message: AgentMessage) -> list[dict[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _cut(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... {len(text) - limit} more characters not shown]"


def keep_tail(text: str, max_chars: int) -> str:
    """`text`, or its last `max_chars` characters after a note saying how much was left out (a request that
    would not fit the model's context window keeps the newest part)."""
    if len(text) <= max_chars:
        return text
    return f"[... {len(text) - max_chars} earlier characters not shown]\n{text[-max_chars:]}"


# -- file operations -------------------------------------------------------------------------------------------


def file_operations(messages: list[AgentMessage]) -> tuple[set[str], set[str]]:
    """(read, modified) file paths named by the `path` argument of `read` / `write` and `edit` tool calls."""
    read: set[str] = set()
    modified: set[str] = set()
    for message in messages:
        if message.get("role") != "assistant":
            continue
        for block in _blocks(message):
            arguments = block.get("arguments")
            path = arguments.get("path") if isinstance(arguments, dict) else None
            if block.get("type") != "toolCall" or not isinstance(path, str) or not path:
                continue
            if block.get("name") in READ_TOOLS:
                read.add(path)
            elif block.get("name") in MODIFY_TOOLS:
                modified.add(path)
    return read, modified


def file_details(messages: list[AgentMessage], previous: Any = None) -> dict[str, list[str]]:
    """`{readFiles, modifiedFiles}` of `messages` plus those of `previous` (an earlier summary's `details`,
    which carries its lists forward). A file both read and modified is listed as modified only."""
    read, modified = file_operations(messages)
    if isinstance(previous, dict):
        read |= {p for p in previous.get("readFiles") or [] if isinstance(p, str)}
        modified |= {p for p in previous.get("modifiedFiles") or [] if isinstance(p, str)}
    return {"readFiles": sorted(read - modified), "modifiedFiles": sorted(modified)}


def with_file_lists(summary: str, details: dict[str, list[str]]) -> str:
    """`summary` followed by `<files-read>` / `<files-modified>` blocks (only those that are not empty)."""
    blocks = [summary.strip()]
    for tag, key in (("files-read", "readFiles"), ("files-modified", "modifiedFiles")):
        if details.get(key):
            blocks.append(f"<{tag}>\n" + "\n".join(details[key]) + f"\n</{tag}>")
    return "\n\n".join(blocks)
