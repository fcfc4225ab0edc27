"""Is a failed assistant turn a context overflow, i.e. did the request not fit the model's context window?

`retry_policy.is_context_overflow` knows the wording of Anthropic, OpenAI, Google, Groq, OpenRouter, Mistral
and Bedrock; this module adds the local servers and gateways whose wording differs, and HTTP 413:

| source | error text (excerpt) |
| --- | --- |
| Anthropic | `prompt is too long: 210000 tokens > 200000 maximum`, `request_too_large` (413) |
| OpenAI, vLLM, OpenRouter, Mistral | `context_length_exceeded`, `maximum context length is N tokens` |
| Google | `The input token count (N) exceeds the maximum number of tokens allowed` |
| xAI | `This model's maximum prompt length is N but the request contains M tokens` |
| Ollama | `prompt too long; exceeded max context length by N tokens` |
| llama.cpp server | `the request exceeds the available context size` |
| LM Studio | `tokens to keep from the initial prompt is greater than the context length` |
| GitHub Copilot | `prompt token count of N exceeds the limit of M` |
| Moonshot (Kimi) | `exceeded model token limit` |
"""

from __future__ import annotations

import re
from typing import Any

from ..retry_policy import http_status, is_context_overflow

_MORE_OVERFLOW = re.compile(
    r"request_too_large|request entity too large|prompt too long|exceeded max context length"
    r"|exceeds the available context size|greater than the context length|maximum prompt length"
    r"|exceeds the limit of \d+|exceeded model token limit|context size has been exceeded",
    re.IGNORECASE,
)


def is_overflow_error(error_message: str) -> bool:
    """True when a provider error text says the request was larger than the context window (or HTTP 413)."""
    if not error_message:
        return False
    return (is_context_overflow(error_message) or bool(_MORE_OVERFLOW.search(error_message))
            or http_status(error_message) == 413)


def is_overflow(message: Any) -> bool:
    """True for an assistant message that failed (`stopReason: "error"`) with an overflow error."""
    return (isinstance(message, dict) and message.get("role") == "assistant"
            and message.get("stopReason") == "error" and is_overflow_error(str(message.get("errorMessage") or "")))
