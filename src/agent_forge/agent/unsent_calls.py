"""Tool calls that never run: those of a failed or aborted assistant turn (`loop.py` ends such a turn with its
partial calls; `ai/transform.py` never sends the turn to a model again)."""

from __future__ import annotations

from typing import Any

from ..ai.types import AssistantMessage

UNSENT_ARGUMENT_CHARS = 2000
"""A failed or aborted turn's tool calls never run and are never sent to a model again (`ai/transform.py`), so
each string in their arguments keeps this many characters (a list this many items): a call cut off while
streaming megabytes of `content` must not stay megabytes in memory, the session file and every `get_messages`."""


def cut_unsent_arguments(message: AssistantMessage) -> None:
    """Cut the tool-call arguments of a failed or aborted `message` in place (`UNSENT_ARGUMENT_CHARS`); what
    is cut is replaced by a note saying how much (`… [2,998,000 more characters cut: the call never ran]`)."""
    for block in message.get("content") or []:
        if isinstance(block, dict) and block.get("type") == "toolCall" and "arguments" in block:
            try:
                block["arguments"] = _cut_value(block["arguments"])
            except RecursionError:  # nested deeper than a parser would build: nothing of it is worth keeping
                block["arguments"] = {}


def _cut_value(value: Any) -> Any:
    if isinstance(value, str) and len(value) > UNSENT_ARGUMENT_CHARS:
        left = len(value) - UNSENT_ARGUMENT_CHARS
        return f"{value[:UNSENT_ARGUMENT_CHARS]}… [{left:,} more characters cut: the call never ran]"
    if isinstance(value, dict):
        return {key: _cut_value(item) for key, item in value.items()}
    if isinstance(value, list):
        kept = [_cut_value(item) for item in value[:UNSENT_ARGUMENT_CHARS]]
        left = len(value) - len(kept)
        return kept + [f"… [{left:,} more items cut: the call never ran]"] if left else kept
    return value
