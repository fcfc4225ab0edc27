"""Recognising context overflow: a request that did not fit the model's context window, for every wire API.

Compaction, not a plain retry, recovers from these. Providers report overflow in their own words, so detection
works on the `errorMessage` our provider modules write (an HTTP failure reads `"HTTP <status> from <url>: <the
API's message (type)>"`, older sessions `"<status> <body>"`, an in-stream
error is the API's raw error JSON; see `ai/errors.py`), plus one silent case: a successful answer whose input
alone exceeds the window (some hosts truncate instead of failing).
"""

from __future__ import annotations

import functools
import re

from .types import AssistantMessage

OVERFLOW_PATTERNS: tuple[tuple[str, str], ...] = (
    # (who says it, pattern) - wording from each API's documented or observed error bodies
    ("anthropic-messages", r"prompt is too long"),  # 400 invalid_request_error: "prompt is too long: N tokens > M"
    ("anthropic-messages", r"request_too_large|request exceeds the maximum size"),  # 413: body over the limit
    ("openai", r"context_length_exceeded|maximum context length"),  # completions, OpenRouter, DeepSeek, Mistral
    ("openai-responses", r"exceeds the context window"),  # "Your input exceeds the context window of this model"
    ("google-generative-ai", r"input token count.{0,40}exceeds the maximum"),  # 400 INVALID_ARGUMENT
    ("xai", r"maximum prompt length is \d+"),
    ("groq", r"reduce the length of the (?:messages|prompt)"),
    ("llama.cpp", r"exceeds? the available context size|exceed_context_size_error|context size has been exceeded"),
    ("lm-studio", r"greater than the context length"),
    ("ollama", r"exceeds? the (?:model'?s? )?context length|exceeded max context length|prompt too long"),
    ("github-copilot", r"exceeds the limit of \d+"),  # "prompt token count of N exceeds the limit of M"
    ("moonshot", r"exceeded model token limit"),
    ("http", r"^\s*413\b|request entity too large"),  # a body too large for any proxy on the way
    ("cerebras", r"^\s*4(?:00|13)\s*(?:status code\s*)?(?:\(no body\))?\s*$"),  # answered with an empty body
    ("generic", r"input is too long|too many tokens|context window|exceeds? the (?:model'?s? )?maximum"
                r"|input token count"),
)
"""Overflow wording per API or host; `is_overflow_error` matches any of them (case-insensitive)."""

_RATE_LIMIT = r"rate[_ ]?limit|per[ -]minute|tokens per min|\bTPM\b|\bRPM\b|quota|too many requests|throttl"
"""Rate limits that mention tokens ("tokens per minute") are transient, never overflow."""


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    # Compiled on first use, not at import: start-up does not need them (DESIGN.md start-up budget).
    overflow = re.compile("|".join(f"(?:{pattern})" for _, pattern in OVERFLOW_PATTERNS), re.IGNORECASE)
    return overflow, re.compile(_RATE_LIMIT, re.IGNORECASE)


def is_overflow_error(error_message: str) -> bool:
    """True when an `errorMessage` says the request did not fit the context window.

    Examples that match: `400 {"error":{"message":"prompt is too long: 210000 tokens > 200000 maximum"}}`,
    `{"code":"context_length_exceeded",...}`, `The input token count (1200000) exceeds the maximum number of
    tokens allowed (1048576).` Rate-limit texts never match, even when they mention tokens.
    """
    if not isinstance(error_message, str) or not error_message:
        return False
    overflow, rate_limit = _patterns()
    error_message = without_http_origin(error_message)  # `HTTP 413 from <url>: ...` reads `413 ...`; the URL is no text
    return bool(overflow.search(error_message)) and not rate_limit.search(error_message)


_HTTP_ORIGIN = re.compile(r"^\s*HTTP (\d{3}) from \S*: ?")


def without_http_origin(error_message: str) -> str:
    """An `HttpStatusError` text (`HTTP 400 from <url>: <message>`) as `400 <message>`, the form older sessions
    hold and the status checks read; any other text unchanged."""
    return _HTTP_ORIGIN.sub(r"\1 ", error_message, count=1)


def is_context_overflow(message: str | AssistantMessage, context_window: int | None = None) -> bool:
    """True when `message` shows a context overflow.

    `message`: an error text, or an assistant message dict. A message counts when its `stopReason` is `error`
    and its `errorMessage` passes `is_overflow_error`, or, given `context_window` (tokens), when it succeeded
    but its prompt (`usage.input + usage.cacheRead`) was larger than the window: the host silently truncated.
    """
    if isinstance(message, str):
        return is_overflow_error(message)
    if not isinstance(message, dict) or message.get("role", "assistant") != "assistant":
        return False
    if message.get("stopReason") == "error":
        return is_overflow_error(str(message.get("errorMessage") or ""))
    if context_window and message.get("stopReason") in ("stop", "toolUse", "length"):
        usage = message.get("usage") or {}
        return int(usage.get("input") or 0) + int(usage.get("cacheRead") or 0) > context_window
    return False
