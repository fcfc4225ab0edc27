"""Exceptions of the provider layer.

Provider `stream()` functions never raise once started: every failure below except `UnknownApiError` is
caught inside the provider and becomes the final `error` event, its `str()` being the message's
`errorMessage`. Only `UnknownApiError` reaches callers (from `registry.get_stream_function`).

    AIError
    ├── UnknownApiError          no provider module for a model's `api` (also a LookupError)
    ├── MissingApiKeyError       no credential; the message names the env var to set when known
    └── StreamFailure            the request or its response stream failed
        ├── HttpStatusError      non-2xx answer: "HTTP <status> from <url>: <message>"
        ├── ApiStreamError       the API reported an error inside the stream (text: the raw error JSON)
        ├── UnexpectedResponseError  a 2xx answer that is no event stream, or an empty one:
        │                        "<status> <reason> ..." (its 2xx status marks it as not worth retrying)
        ├── StreamIdleTimeout    no data for the idle timeout, or response headers not complete within it:
        │                        "Read timed out: ..." (retryable)
        └── StreamProtocolError  malformed SSE/JSON, or the stream ended before its terminal event
            ├── MalformedChunkError  an event's data is not a JSON object; the stream driver turns it into a
            │                    StreamProtocolError "Malformed JSON in <where> from <url>: <reason>; the data
            │                    starts: \"...\"" (URL without query; data escaped, at most 200 characters)
            └── StreamLimitError a line, an event or a whole message over the stream limits (`ai.sse`),
                                 never retried
"""

from __future__ import annotations


class AIError(Exception):
    """Base of every error the provider layer defines."""


class UnknownApiError(AIError, LookupError):
    """`api` names no known provider module."""

    def __init__(self, api: str):
        super().__init__(f"Unknown api: {api!r}")
        self.api = api


class MissingApiKeyError(AIError):
    """No API key was supplied for a provider that needs one."""


class StreamFailure(AIError):
    """A provider request or its response stream failed; `str(exc)` is the `errorMessage`."""


class HttpStatusError(StreamFailure):
    """The API answered with a non-2xx status. `status`: HTTP status code; `body`: the response body's text (the
    API's own error message when it sent its documented error JSON: `providers/_response_body.py`); `url`: where
    the request went, shown without user info or query. Its text: `HTTP 400 from <url>: <body>` (without a
    `url`, as sessions written before it read: `400 <body>`)."""

    def __init__(self, status: int, body: str, retry_after_ms: int | None = None, *, url: str | None = None):
        super().__init__(f"HTTP {status} from {url}: {body}" if url is not None else f"{status} {body}")
        self.status = status
        self.body = body
        self.retry_after_ms = retry_after_ms
        """The server's `retry-after-ms` / `retry-after` hint (RFC 9110 §10.2.3), in milliseconds, if any."""


class ApiStreamError(StreamFailure):
    """The API sent an error object inside an otherwise successful stream."""


class StreamProtocolError(StreamFailure):
    """The stream broke the API's framing: bad JSON, unknown shape, or an early end."""


class MalformedChunkError(StreamProtocolError):
    """An event's data did not parse as a JSON object. `where`: "stream chunk" or "<name> event"; `reason`: the
    parser's words. The stream driver (`providers._sse_exchange`) adds the URL and the start of the data to the text."""

    def __init__(self, where: str, reason: str):
        super().__init__(f"Malformed JSON in {where}: {reason}")
        self.where = where
        self.reason = reason


class StreamLimitError(StreamProtocolError):
    """An event-stream line or event, or a streamed message, exceeded the limits in `ai.sse` (MAX_LINE_CHARS,
    MAX_EVENT_CHARS, MAX_MESSAGE_CHARS)."""


class UnexpectedResponseError(StreamFailure):
    """A 2xx answer that is not a usable event stream: plain JSON, an HTML page, or a stream with no events.

    The text starts with the HTTP status, so retry policies that read a leading status see a 2xx and do not
    retry: the same request gets the same answer. `status`: the HTTP status code."""

    def __init__(self, status: int, text: str):
        super().__init__(text)
        self.status = status


class StreamIdleTimeout(StreamFailure):
    """No bytes arrived for `idle_s` seconds (settings `httpIdleTimeoutMs`); worth retrying."""

    def __init__(self, idle_s: float, waiting_for: str | None = None):
        if waiting_for is None:
            text = f"Read timed out: no data from the server for {idle_s:g} s (settings httpIdleTimeoutMs)"
        else:  # bytes came, but too slowly: the deadline is for the whole of `waiting_for`
            text = f"Read timed out: {waiting_for} did not arrive within {idle_s:g} s (settings httpIdleTimeoutMs)"
        super().__init__(text)
        self.idle_s = idle_s
