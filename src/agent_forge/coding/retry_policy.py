"""Which failed assistant turns are worth retrying, and how long to wait before each retry.

Pure functions over the `errorMessage` texts the provider layer writes (see `ai/errors.py`): an HTTP failure
reads `"HTTP <status> from <url>: <message>"` (older sessions: `"<status> <body>"`), an error the API sent
inside a stream is its raw error JSON, a broken stream is `"Stream ended before ..."` or a transport exception
as `"<ExceptionClass>: <text>"`.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from ..ai.overflow import is_overflow_error, without_http_origin

_STATUS = re.compile(r"^\s*(\d{3})(?=[:\s]|$)")


@functools.cache
def _transient_text() -> re.Pattern[str]:
    """Compiled on the first failed turn: start-up does not pay for it."""
    return re.compile(
        # provider wording for overload, rate limits and server-side failures
        r"overloaded|rate[_ ]?limit|too many requests|server[_ ]error|internal (?:server )?error|\bapi_error\b"
        r"|service[_ ]unavailable|bad gateway|gateway time-?out|temporarily unavailable|try again later"
        # transport failures (httpx2 / builtin exception names as `describe_error` writes them) and broken streams
        r"|\b(?:Connect|Read|Write|Pool)(?:Error|Timeout)\b|RemoteProtocolError|NetworkError"
        r"|Connection(?:Reset|Refused|Aborted)Error|BrokenPipeError|\bTimeoutError\b|IncompleteReadError"
        r"|connection (?:reset|refused|aborted|closed|error)|peer closed connection|server disconnected"
        r"|timed out|socket hang up|ECONNRESET|ETIMEDOUT|fetch failed|\bterminated\b|stream ended before"
        # `ai/transport_errors.py` wording
        r"|cannot connect to|closed the connection",
        re.IGNORECASE,
    )


@functools.cache
def _transient_status() -> re.Pattern[str]:
    """Google's canonical codes of transient failures (google.rpc.Code: 503, 429, 500, 504) as the tag of an
    in-stream Gemini error (`<message> (UNAVAILABLE)`, `_response_body.provider_error`): upper case, in the
    tags, so a message merely saying "unavailable" or "internal" does not count."""
    return re.compile(r"\((?:[^()]*, )?(?:UNAVAILABLE|RESOURCE_EXHAUSTED|INTERNAL|DEADLINE_EXCEEDED)(?:, [^()]*)?\)\s*$")


def is_context_overflow(error_message: str) -> bool:
    """True when the text says the request did not fit the model's context window (every API's wording is
    in `ai.overflow.OVERFLOW_PATTERNS`). Compaction, not a plain retry, recovers from these."""
    return is_overflow_error(error_message)


def http_status(error_message: str) -> int | None:
    """The HTTP status an `HttpStatusError` text starts with (`"HTTP 429 from <url>: ..."`, and as older sessions
    hold it `"429 {...}"`, `"503: ..."`), else None."""
    match = _STATUS.match(without_http_origin(error_message))
    return int(match.group(1)) if match else None


def is_retryable_error(error_message: str) -> bool:
    """True when the failure is transient, so the same request may succeed later.

    Accepted:
    - HTTP 408, 429 and 5xx (500, 502, 503, 504, 529 overloaded, ...) except 501 and 505, which never heal;
    - without a status: overloaded / rate-limit / server-error wording (Anthropic `overloaded_error`,
      `rate_limit_error`, `api_error`; OpenAI `server_error`; Gemini's UNAVAILABLE, RESOURCE_EXHAUSTED,
      INTERNAL and DEADLINE_EXCEEDED tags), and network failures: connect/read/write
      errors and timeouts, connection reset/refused/closed, a stream that ended before its terminal event.
    Rejected: context overflow texts (checked first, see `is_context_overflow`), any other status (400, 401,
    403, 404, 413, ...), and every other text (missing API key, malformed JSON, unknown api, ...).
    """
    if not error_message or is_context_overflow(error_message):
        return False
    status = http_status(error_message)
    if status is not None:
        return status in (408, 429) or (500 <= status <= 599 and status not in (501, 505))
    return bool(_transient_text().search(error_message) or _transient_status().search(error_message))


def is_retryable_message(message: Any) -> bool:
    """True for an assistant message that failed (`stopReason: "error"`, never `"aborted"`) with a transient
    `errorMessage`."""
    return (isinstance(message, dict) and message.get("role") == "assistant"
            and message.get("stopReason") == "error"
            and is_retryable_error(str(message.get("errorMessage") or "")))


def backoff_delay_ms(attempt: int, base_delay_ms: int, max_delay_ms: int = 0) -> int:
    """Wait before retry number `attempt` (1-based): `base_delay_ms * 2 ** (attempt - 1)` milliseconds,
    capped at `max_delay_ms` when that is positive (settings `retry.baseDelayMs`, `retry.maxAgentDelayMs`).
    Raises ValueError for an attempt below 1 or a negative delay."""
    if attempt < 1 or base_delay_ms < 0 or max_delay_ms < 0:
        raise ValueError(f"invalid backoff input: attempt={attempt}, base={base_delay_ms}, max={max_delay_ms}")
    delay = base_delay_ms * 2 ** (attempt - 1)
    return min(delay, max_delay_ms) if max_delay_ms > 0 else delay


def hinted_delay_ms(failed: Any, backoff_ms: int, max_delay_ms: int = 0) -> int:
    """The wait before a retry: the exponential backoff, or the server's `retryAfterMs` hint (set by the
    providers from `retry-after`) when that is longer, so a rate-limited API is not hammered; capped at
    `max_delay_ms` (settings `retry.maxAgentDelayMs`) when that is positive."""
    hint = failed.get("retryAfterMs") if isinstance(failed, dict) else None
    delay = max(backoff_ms, hint) if isinstance(hint, int) and not isinstance(hint, bool) else backoff_ms
    return min(delay, max_delay_ms) if max_delay_ms > 0 else delay
