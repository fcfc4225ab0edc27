"""Session statistics for `get_session_stats`: message counts, token and cost totals, context-window usage.

Scope (seed 000, "get_session_stats"; what the reference agent reports, found by experiment: counts over a
file with an abandoned branch and a compaction):
- message counts, `tokens` and `cost` cover the whole session file: every entry, abandoned branches,
  compacted history and failed attempts a retry hid included (you paid for them and they are in the file).
  Messages are the `message` entries (`listing.file_messages`: what session listings count), whatever their role;
  `get_state`'s `messageCount` is the one that counts the conversation the model sees now. Tokens and cost sum
  assistant messages, tool-reported `usage` on `toolResult` messages, `compaction` and `branch_summary`
  summaries, and `usage` entries (session-format.md, "UsageEntry");
- `contextUsage` is the context estimate the compaction trigger uses (`compaction/tokens.context_tokens`, given
  by the caller): the last response's reported usage plus chars/4 estimates of the messages after it, or,
  when no response reported usage, estimates of every message plus the system prompt and tool definitions
  (compaction.md). Right after a compaction no response has measured the new context yet, so `tokens` and
  `percent` are null until a response comes (with or without reported usage).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, TypedDict, Union, cast

from ..config_values import is_number
from ..messages import sent_form
from .entries import AgentMessage, BranchSummaryEntry, CompactionEntry, MessageEntry, SessionEntry, UsageEntry
from .listing import file_messages

if TYPE_CHECKING:
    from ...ai.types import Model

TOKEN_KEYS = ("input", "output", "cacheRead", "cacheWrite")
CHARS_PER_TOKEN = 4
IMAGE_CHARS = 4800
"""An image counts as 1,200 tokens: roughly what providers bill for a typical screenshot."""

_USAGE_ENTRY_TYPES = ("compaction", "branch_summary", "usage")
_UsageHolder = Union[CompactionEntry, BranchSummaryEntry, UsageEntry]
"""The shapes of `_USAGE_ENTRY_TYPES`: each may carry `usage`."""


class ContextUsage(TypedDict):
    """`get_session_stats.contextUsage`: `percent` is `tokens / contextWindow * 100`; both null right after a
    compaction (see the module docstring)."""

    tokens: int | None
    contextWindow: int | float
    percent: float | None


def session_stats(*, session_file: str | None, session_id: str, entries: list[SessionEntry],
                  branch: list[SessionEntry], model: Model | None, context_tokens: int) -> dict[str, object]:
    """The `get_session_stats` data: `{sessionFile, sessionId, userMessages, assistantMessages, toolCalls,
    toolResults, totalMessages, tokens{input, output, cacheRead, cacheWrite, total}, cost, contextUsage?}`.

    `entries`: every entry of the file (what the counts and totals cover); `branch`: the active branch (root →
    leaf); `context_tokens`: the session's context estimate (`CompactionController.context_tokens`).
    `cost` is in dollars. `contextUsage` is left out without a model or context window.
    """
    tokens, cost = usage_totals(entries)
    stats: dict[str, object] = {"sessionFile": session_file, "sessionId": session_id,
                                **message_counts(file_messages(entries)), "tokens": tokens, "cost": cost}
    measured = _measured_since_compaction(branch)
    usage = context_usage(context_tokens if measured else None, model)
    if usage is not None:
        stats["contextUsage"] = usage
    return stats


def message_counts(messages: list[AgentMessage]) -> dict[str, int]:
    """`{userMessages, assistantMessages, toolCalls, toolResults, totalMessages}`; tool calls are the
    `toolCall` blocks of assistant messages."""
    roles = [m.get("role") for m in messages]
    calls = sum(1 for m in messages if m.get("role") == "assistant" for block in _blocks(m)
                if block.get("type") == "toolCall")
    return {"userMessages": roles.count("user"), "assistantMessages": roles.count("assistant"),
            "toolCalls": calls, "toolResults": roles.count("toolResult"), "totalMessages": len(messages)}


def usage_totals(entries: Iterable[SessionEntry]) -> tuple[dict[str, int], float]:
    """Token totals `{input, output, cacheRead, cacheWrite, total}` and the cost in dollars over `entries`."""
    tokens = dict.fromkeys(TOKEN_KEYS, 0)
    cost = 0.0
    for usage in _entry_usages(entries):
        for key in TOKEN_KEYS:
            tokens[key] += _int(usage.get(key))
        breakdown = usage.get("cost")
        cost += _number(breakdown.get("total")) if isinstance(breakdown, dict) else 0.0
    return {**tokens, "total": sum(tokens.values())}, cost


def _entry_usages(entries: Iterable[SessionEntry]) -> Iterable[dict[str, object]]:
    """The usage dicts of `entries`: of assistant and toolResult messages, and of the `_USAGE_ENTRY_TYPES`."""
    for entry in entries:
        kind = entry.get("type")
        usage: object = None
        if kind == "message":
            message = cast(MessageEntry, entry).get("message")
            if isinstance(message, dict) and message.get("role") in ("assistant", "toolResult"):
                usage = message.get("usage")
        elif kind in _USAGE_ENTRY_TYPES:
            usage = cast(_UsageHolder, entry).get("usage")
        if isinstance(usage, dict):
            yield usage


def context_usage(tokens: int | None, model: Model | None) -> ContextUsage | None:
    """`{tokens, contextWindow, percent}` for a context of `tokens`, or None without a model or context window.

    `percent` is `tokens / contextWindow * 100`. `tokens=None` (a compaction happened after the last reported
    usage) gives `tokens: null, percent: null`.
    """
    window = (model or {}).get("contextWindow")
    if not isinstance(window, (int, float)) or isinstance(window, bool) or window <= 0:
        return None
    percent = None if tokens is None else tokens / window * 100
    return ContextUsage(tokens=tokens, contextWindow=window, percent=percent)


def reported_tokens(message: AgentMessage) -> int:
    """Context size measured by an assistant response; 0 for other messages and failed or aborted turns,
    whose usage does not describe a complete request."""
    if message.get("role") != "assistant" or message.get("stopReason") in ("error", "aborted"):
        return 0
    usage = message.get("usage")
    if not isinstance(usage, dict):
        return 0
    return _int(usage.get("totalTokens")) or sum(_int(usage.get(key)) for key in TOKEN_KEYS)


def estimate_tokens(message: AgentMessage) -> int:
    """chars/4 (rounded up) of what a message puts in the model's context, measured on the form the model is
    sent (`messages.sent_form`): text, thinking, tool-call names and arguments, tool output, the user messages
    that bash runs and summaries become; `IMAGE_CHARS` per image. 0 for a message the model is not sent (a
    failed or aborted turn, whose partial tool-call arguments can be megabytes; a bash run excluded from
    context), so the estimate cannot set off a compaction that would not shrink any request."""
    sent = sent_form(message)
    if sent is None:
        return 0
    return math.ceil(sum(_block_chars(block) for block in _blocks(sent)) / CHARS_PER_TOKEN)


def _blocks(message: AgentMessage) -> list[dict[str, object]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []


def _block_chars(block: dict[str, object]) -> int:
    kind = block.get("type")
    if kind == "image":
        return IMAGE_CHARS
    if kind == "toolCall":
        arguments = block.get("arguments")
        text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False, default=str)
        return len(str(block.get("name", ""))) + len(text)
    value = block.get("thinking") if kind == "thinking" else block.get("text")
    return len(value) if isinstance(value, str) else 0


def _measured_since_compaction(branch: list[SessionEntry]) -> bool:
    """False when the branch's latest compaction is newer than its latest successful assistant response. A
    response counts with or without reported usage: after one, `context_tokens` has a sound estimate again
    (reported usage, or chars/4 of the rebuilt context plus the system prompt and tools)."""
    for entry in reversed(branch):
        if entry.get("type") == "compaction":
            return False
        message = entry.get("message") if entry.get("type") == "message" else None
        if isinstance(message, dict) and _answered(message):
            return True
    return True


def _answered(message: AgentMessage) -> bool:
    """A complete assistant response (not a failed or aborted turn)."""
    return message.get("role") == "assistant" and message.get("stopReason") not in ("error", "aborted")


def _number(value: object) -> float:
    """A finite JSON number of sane size as float, else 0 (session files are user data: hand edits, other
    writers; a 400-digit integer would overflow `float`)."""
    return float(value) if is_number(value) else 0.0


def _int(value: object) -> int:
    """A positive token count, else 0."""
    return max(0, int(_number(value)))
