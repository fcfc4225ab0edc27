"""Messages by role (user, assistant, toolResult, bashExecution, custom, summaries) as cards."""

from __future__ import annotations

from typing import Callable

from .blocks import image, note, raw_json, thinking
from .context import Card, Record, RenderContext
from .highlight import code_block
from .markdown import render_markdown
from .text import esc, strip_ansi
from .tools import tool_call, tool_result


def message_card(message: object, context: RenderContext) -> Card:
    """The card of any message dict; unknown roles show the message as JSON."""
    role = message.get("role") if isinstance(message, dict) else None
    render = _ROLES.get(role) if isinstance(role, str) else None
    if render is None:
        return Card("message unknown", f"Message ({role})" if role else "Message", raw_json(message))
    return render(message, context)


def content(value: object) -> str:
    """A message's `content`: a string (markdown) or a list of blocks; anything else is shown as JSON."""
    if isinstance(value, str):
        return render_markdown(value)
    if isinstance(value, list):
        return "".join(map(block, value))
    return raw_json(value)


def block(item: object) -> str:
    """One content block: `text` (markdown), `thinking`, `image`, `toolCall`; other kinds as JSON."""
    kind = item.get("type") if isinstance(item, dict) else None
    if kind == "text":
        return render_markdown(str(item.get("text", "")))
    render = _BLOCKS.get(kind) if isinstance(kind, str) else None
    return render(item) if render is not None else raw_json(item)


_BLOCKS: dict[str, Callable[[Record], str]] = {"thinking": thinking, "image": image, "toolCall": tool_call}


def _user(message: Record, context: RenderContext) -> Card:
    return Card("user", "User", content(message.get("content")))


def _assistant(message: Record, context: RenderContext) -> Card:
    body = content(message.get("content"))
    stop = message.get("stopReason")
    if isinstance(message.get("errorMessage"), str):
        body += note(f"Error: {message['errorMessage']}", "error")
    elif stop in _STOP_NOTES:
        body += note(_STOP_NOTES[stop], "error")
    if stop == "toolUse":  # the file holds no result: exported while the call ran, or the agent stopped in it
        body += "".join(note(f"{call.get('name')} {call.get('id')}: {NO_RESULT}", "error")
                        for call in _calls(message) if str(call.get("id")) not in context.answered)
    return Card("assistant", "Assistant", body, usage_meta(message))


def _calls(message: Record) -> list[Record]:
    blocks = message.get("content") if isinstance(message.get("content"), list) else []
    return [b for b in blocks if isinstance(b, dict) and b.get("type") == "toolCall"]


NO_RESULT = "no result recorded (the call was still running, or the agent stopped before it finished)"

_STOP_NOTES = {"aborted": "Aborted.", "length": "Stopped: output token limit reached.", "error": "Error."}


def usage_meta(message: Record) -> str:
    """`provider/model · thinking · in N · out N · cache read N · $cost · seconds`, each part present only
    when the message has it."""
    parts = []
    if message.get("model"):
        parts.append(f"{message.get('provider', '?')}/{message['model']}")
    if message.get("thinkingLevel") not in (None, "off"):
        parts.append(f"thinking {message['thinkingLevel']}")
    usage = message.get("usage")
    if isinstance(usage, dict):
        parts.extend(_usage_parts(usage))
    if isinstance(message.get("durationMs"), (int, float)):
        parts.append(f"{message['durationMs'] / 1000:.1f} s")
    return "".join(f'<span class="meta">{esc(part)}</span>' for part in parts)


def _usage_parts(usage: Record) -> list[str]:
    labels = (("input", "in"), ("output", "out"), ("cacheRead", "cache read"), ("cacheWrite", "cache write"))
    parts = [f"{label} {_count(usage[key])}" for key, label in labels
             if key in usage and (usage[key] or key in ("input", "output"))]
    cost = usage.get("cost")
    if isinstance(cost, dict) and isinstance(cost.get("total"), (int, float)) and cost["total"]:
        parts.append(f"${cost['total']:.4f}")
    return parts


def _count(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def _tool_result(message: Record, context: RenderContext) -> Card:
    call_id = message.get("toolCallId")
    call = context.tool_calls.get(call_id) if isinstance(call_id, str) else None
    failed = bool(message.get("isError"))
    title = f"Tool result: {message.get('toolName', '?')}" + (" (error)" if failed else "")
    return Card("tool-result error-result" if failed else "tool-result", title, tool_result(message, call))


def _bash_execution(message: Record, context: RenderContext) -> Card:
    output = strip_ansi(str(message.get("output") or ""))
    body = code_block(str(message.get("command", "")), "bash")
    body += code_block(output) if output else note("(no output)")
    if message.get("cancelled"):
        body += note("Cancelled.", "error")
    elif message.get("exitCode") not in (0, None):
        body += note(f"Exit code {message['exitCode']}", "error")
    if message.get("truncated"):
        body += note(f"Output truncated. Full output: {message.get('fullOutputPath') or 'not kept'}")
    if message.get("excludeFromContext"):
        body += note("Not sent to the model.")
    return Card("bash-execution", "Shell command (user)", body)


def _custom(message: Record, context: RenderContext) -> Card:
    body = content(message.get("content", ""))
    if message.get("display") is False:
        body += note("Hidden in the terminal view.")
    return Card("custom", f"Plugin message: {message.get('customType', '?')}", body)


def _summary(title: str) -> Callable[[Record, RenderContext], Card]:
    def render(message: Record, context: RenderContext) -> Card:
        return Card("summary", title, render_markdown(str(message.get("summary", ""))))

    return render


_ROLES: dict[str, Callable[[Record, RenderContext], Card]] = {
    "user": _user,
    "assistant": _assistant,
    "toolResult": _tool_result,
    "bashExecution": _bash_execution,
    "custom": _custom,
    "branchSummary": _summary("Branch summary"),
    "compactionSummary": _summary("Compaction summary"),
}
"""Message role → card renderer (message-types.md lists the roles)."""
