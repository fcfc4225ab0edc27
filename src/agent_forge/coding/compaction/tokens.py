"""How full the context is: token counts from provider usage and chars/4 estimates, and the compaction threshold.

No tokenizer is downloaded (DESIGN.md, "tokens"): the last response's reported usage measures the context up to
it, and `session_stats.estimate_tokens` (chars/4) covers what came after. Usage reported before a compaction
describes the context the compaction replaced, so it is ignored until a response arrives after it.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..session.entries import AgentMessage
from ..session.stats import CHARS_PER_TOKEN, estimate_tokens, reported_tokens
from ..settings import WINDOW_SHARE


def text_tokens(text: str) -> int:
    """chars/4, rounded up."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def estimate_messages(messages: list[AgentMessage]) -> int:
    return sum(estimate_tokens(m) for m in messages)


def overhead_tokens(system_prompt: str, tools: list[Any]) -> int:
    """Estimate of what every request carries besides the messages: the system prompt and tool schemas."""
    schemas = [{"name": getattr(t, "name", ""), "description": getattr(t, "description", ""),
                "parameters": getattr(t, "parameters", {})} for t in tools]
    return text_tokens(system_prompt) + text_tokens(json.dumps(schemas, ensure_ascii=False, default=str))


def context_tokens(messages: list[AgentMessage], overhead: int = 0) -> int:
    """Tokens of the next request: the usage of the newest successful response that came after the latest
    compaction, plus estimates of the messages after it; without such a response, estimates of every message
    plus `overhead` (system prompt and tools, which reported usage already includes); 0 for an empty context
    (nothing has been sent yet: the reference reports 0 for a fresh session)."""
    if not messages:
        return 0
    since = _compaction_time(messages)
    for index in range(len(messages) - 1, -1, -1):
        reported = _reported(messages[index], since)
        if reported:
            return reported + estimate_messages(messages[index + 1:])
    return estimate_messages(messages) + overhead


def _compaction_time(messages: list[AgentMessage]) -> int | None:
    """Timestamp (ms) of the compaction summary that opens the context, if one does."""
    if messages and messages[0].get("role") == "compactionSummary":
        stamp = messages[0].get("timestamp")
        return stamp if isinstance(stamp, int) else 0
    return None


def _reported(message: AgentMessage, since: int | None) -> int:
    stamp = message.get("timestamp")
    # A kept message measured the context before the compaction. `>=`: the first call after a compaction can
    # start within the millisecond the compaction was written; the kept messages are far older.
    if since is not None and not (isinstance(stamp, int) and stamp >= since):
        return 0
    return reported_tokens(message)


def over_threshold(tokens: int, context_window: int, reserve_tokens: int) -> bool:
    """The automatic trigger (reference compaction.md): `tokens > context_window - reserve_tokens`. False without
    a usable context window."""
    return context_window > 0 and tokens > context_window - reserve_tokens


def output_budget(model: dict[str, Any], prompt_tokens: int, floor: int = 1024) -> int:
    """`max_tokens` for a summarisation request: the model's output limit, lowered so prompt and answer fit the
    context window, never below `floor`."""
    limit = int(model.get("maxTokens") or 0) or 8192
    window = int(model.get("contextWindow") or 0)
    room = window - prompt_tokens if window > 0 else limit
    return max(floor, min(limit, room))


def answer_reserve(model: dict[str, Any]) -> int:
    """Tokens a summary request keeps free for its answer: the model's output limit, at most 16,384 and at
    most `1/WINDOW_SHARE` of its context window (a small local model's output limit can equal its window,
    which would leave no room for the transcript)."""
    reserve = min(int(model.get("maxTokens") or 8192), 16384)
    window = int(model.get("contextWindow") or 0)
    return min(reserve, window // WINDOW_SHARE) if window > 0 else reserve


def prompt_char_budget(model: dict[str, Any], reserve_output: int) -> int:
    """Characters a summarisation prompt may have so that `reserve_output` tokens of answer still fit (90% of
    the window, to leave room for the estimate's error)."""
    window = int(model.get("contextWindow") or 0)
    if window <= 0:
        return 1 << 30
    return max(4000, int((window * 0.9 - reserve_output) * CHARS_PER_TOKEN))
