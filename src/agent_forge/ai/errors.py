"""Exceptions of the provider layer.

Provider `stream()` functions never raise once started: every failure below except `UnknownApiError` is
caught inside the provider and becomes the final `error` event, its `str()` being the message's
`errorMessage`. Only `UnknownApiError` reaches callers (from `registry.get_stream_function`).

    AIError
    ├── UnknownApiError          no provider module for a model's `api` (also a LookupError)
    ├── MissingApiKeyError       no credential; the message names the env var to set when known
    └── StreamFailure            the request or its response stream failed
        ├── HttpStatusError      non-2xx answer: "<status> <body text>"
        ├── ApiStreamError       the API reported an error inside the stream (text: the raw error JSON)
        └── StreamProtocolError  malformed SSE/JSON, or the stream ended before its terminal event
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
    """The API answered with a non-2xx status. `status`: HTTP status code; `body`: response body text."""

    def __init__(self, status: int, body: str, retry_after_ms: int | None = None):
        super().__init__(f"{status} {body}")
        self.status = status
        self.body = body
        self.retry_after_ms = retry_after_ms
        """The server's `retry-after-ms` / `retry-after` hint (RFC 9110 §10.2.3), in milliseconds, if any."""


class ApiStreamError(StreamFailure):
    """The API sent an error object inside an otherwise successful stream."""


class StreamProtocolError(StreamFailure):
    """The stream broke the API's framing: bad JSON, unknown shape, or an early end."""
