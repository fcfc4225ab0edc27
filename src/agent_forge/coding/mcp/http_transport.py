"""The streamable HTTP transport for MCP servers: the SDK's, with the stdio transport's cap on one message
(`stdio_transport.MAX_MESSAGE_BYTES`, `docs/mcp.md`, "Connections").

The SDK caps one server-sent event (1 MiB by default; here the common cap), but reads a JSON response body whole
(`response.aread()`), however long: a response hook wraps each JSON body so that reading more than the cap
raises `ResponseTooLong`, which the SDK turns into an error answer to that request (the server stays connected:
the next response is a message of its own). An HTTP error status is named in the error answer it gives
(`http_status`).
"""

from __future__ import annotations

import contextlib
import functools
from typing import TYPE_CHECKING, AsyncIterator

from .config import McpServerConfig
from .http_status import NamedStatusStream, StatusNotes
from .stdio_transport import MAX_MESSAGE_BYTES, size_text
from .wire import install_in_http_client

if TYPE_CHECKING:
    import httpx2
    from mcp.client._transport import TransportStreams


@contextlib.asynccontextmanager
async def http_transport(config: McpServerConfig, limit: int = MAX_MESSAGE_BYTES) -> AsyncIterator[TransportStreams]:
    """The SDK's streamable HTTP streams for `config.url`, with `config.headers` on every request; one JSON
    response or server-sent event may hold at most `limit` bytes; an HTTP error status is named in the error
    answer the SDK makes of it (`http_status.StatusNotes`)."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    install_in_http_client()  # lone surrogates repaired, as on stdio

    async def cap(response: httpx2.Response) -> None:
        if response.headers.get("content-type", "").lower().startswith("application/json"):
            response.stream = _capped_stream(response.stream, limit)

    notes = StatusNotes()  # an HTTP error status, named in the SDK's stand-in for it
    client = httpx2.AsyncClient(headers=dict(config.headers), timeout=httpx2.Timeout(30, read=300),
                                event_hooks={"response": [cap, notes.on_response]})
    async with client:
        async with streamable_http_client(config.url or "", http_client=client,
                                          max_sse_event_size=limit) as (read, write):
            yield NamedStatusStream(read, notes), write


def _capped_stream(stream: httpx2.AsyncByteStream, limit: int) -> httpx2.AsyncByteStream:
    return _capped_class()(stream, limit)


@functools.cache
def _capped_class() -> type[httpx2.AsyncByteStream]:
    """The capped stream's class, made once httpx2 is imported (it is, by the SDK, when a server is configured)."""
    import httpx2

    class ResponseTooLong(httpx2.StreamError):
        """A subclass of the error the SDK reports as a failed response (not a failed connection)."""

    class Capped(httpx2.AsyncByteStream):
        def __init__(self, stream: httpx2.AsyncByteStream, limit: int) -> None:
            self.stream, self.limit, self.seen = stream, limit, 0

        @property
        def elapsed(self) -> object:  # httpx's `Response.elapsed` reads it from the stream it made
            return getattr(self.stream, "elapsed", None)

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self.stream:
                self.seen += len(chunk)
                if self.seen > self.limit:
                    raise ResponseTooLong(f"the server's answer is longer than {size_text(self.limit)} "
                                          f"({self.seen:,} bytes read); the rest of it was not read")
                yield chunk

        async def aclose(self) -> None:
            await self.stream.aclose()

    return Capped
