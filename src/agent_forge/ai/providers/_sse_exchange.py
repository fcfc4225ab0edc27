"""The HTTP/SSE stream driver of the SSE providers: one POST, its answer read as an event stream a network read
at a time, each SSE event turned into stream events by the provider's `SseHandler` (what it reads of a failed
or unexpected answer is in `_response_body`)."""

from __future__ import annotations

from contextlib import aclosing
from typing import TYPE_CHECKING, AsyncIterator, Callable, Iterable, Iterator

from .. import json_wire
from ..errors import HttpStatusError, MalformedChunkError, StreamIdleTimeout, StreamProtocolError, UnexpectedResponseError
from ..options import StreamOptions
from ..sse import SSEDecoder, SSEEvent, feed_events
from ..transport_errors import TransportFailure, check_headers, check_url, shown_url, transport_error
from ._common import Event, HttpRequest, SseHandler, guarded
from ._response_body import BodyHead, body_bytes, describe_answer, error_body, retry_after_ms, sanitize_snippet

if TYPE_CHECKING:
    import httpx2


def stream_api(handler: SseHandler, options: StreamOptions,
               prepare: Callable[[], HttpRequest]) -> AsyncIterator[Event]:
    """The body of every SSE provider's `stream()`: the guarded events of one SSE request; `prepare()` builds
    it (its errors become the error event). Closing it closes the HTTP response."""
    return guarded(handler.builder, _exchange(options, prepare, handler), options)


async def _exchange(
    options: StreamOptions, prepare: Callable[[], HttpRequest], handler: SseHandler
) -> AsyncIterator[Iterable[Event]]:
    """The events of one SSE request, an iterable a network read (`_read_events`), then those of the body's
    end."""
    import httpx2

    from ..tls import ssl_context_for

    request = prepare()
    check_url(request.url)
    check_headers(request.headers)
    timeout = httpx2.Timeout(options.timeout_s, read=options.idle_timeout_s or None)
    answering = False  # the response began: a broken connection is then "mid-answer"
    verify = ssl_context_for(request.url)  # one per request loaded the CA bundle each time (~20 ms CPU)
    async with httpx2.AsyncClient(transport=options.transport, timeout=timeout, verify=verify) as client:
        try:
            response = await _response_head(client, request, options.idle_timeout_s)
            answering = True
            try:
                if not 200 <= response.status_code < 300:
                    body = await error_body(response, request.url) + _keyless_hint(response.status_code,
                                                                                  request.headers)
                    raise HttpStatusError(response.status_code, body, retry_after_ms(response.headers),
                                          url=shown_url(request.url))
                async for events in _read_events(response, handler, request.url):
                    yield events
            finally:
                await response.aclose()
        except httpx2.ReadTimeout:
            raise StreamIdleTimeout(options.idle_timeout_s or options.timeout_s) from None
        except (httpx2.TransportError, httpx2.DecodingError, httpx2.InvalidURL, OSError, OverflowError,
                ExceptionGroup) as exc:
            raise transport_error(exc, request.url, answering) from None
    yield list(handler.end_of_stream())


async def _response_head(client: httpx2.AsyncClient, request: HttpRequest, deadline_s: float | None
                         ) -> httpx2.Response:
    """Send `request` and wait for the status line and headers, all of them within `deadline_s` (the idle
    timeout, settings `httpIdleTimeoutMs`): the read timeout alone restarts with every byte, so a server
    trickling its headers a byte a second would hold the request for ever. Raises `StreamIdleTimeout`."""
    import asyncio

    built = client.build_request("POST", request.url, headers=request.headers, content=request.body)
    try:
        async with asyncio.timeout(deadline_s):
            return await client.send(built, stream=True)
    except TimeoutError:
        raise StreamIdleTimeout(deadline_s or 0, waiting_for="the response headers") from None


async def _read_events(response: httpx2.Response, handler: SseHandler, url: str) -> AsyncIterator[Iterable[Event]]:
    """The handler's events for the SSE events of a 2xx `response`, until its terminal event or EOF: for each
    network read, a generator making them as they are taken (`_Reading.events`).

    Raises `UnexpectedResponseError` when the body is not an event stream (judged from the content type and,
    for a mislabelled one, its first bytes) or holds no event besides `[DONE]`."""
    body = BodyHead(body_bytes(response))
    if "event-stream" not in response.headers.get("content-type", "").lower() and not await body.looks_like_sse():
        head = await body.fill_head()
        raise UnexpectedResponseError(response.status_code, describe_answer(response, head, "is not an event stream"))
    decoder, reading = SSEDecoder(), _Reading(handler, url)
    async with aclosing(body.chunks()) as chunks:
        async for chunk in chunks:
            sse: list[SSEEvent] = []
            failure = feed_events(decoder, chunk, sse)
            reading.screen(chunk)
            if sse or failure:
                yield reading.events(sse, failure)
            if reading.over:
                break
    if not reading.over and decoder.pending:  # a clean EOF (`Connection: close`) inside an event
        raise TransportFailure(f"The server closed the connection mid-answer ({shown_url(url)}): the stream "
                               "ended inside an event")
    if not reading.seen:
        raise UnexpectedResponseError(response.status_code, describe_answer(response, body.head, "sent no events"))


class _Reading:
    """The handler's side of `_read_events`: SSE events in, stream events out, until the terminal event."""

    def __init__(self, handler: SseHandler, url: str) -> None:
        self.handler, self.url = handler, url
        self.seen = 0  # SSE events handled
        self.over = False  # the terminal event (or a leading [DONE]) came: no more are read
        self._tail = b""  # the last bytes of the previous read: a run of digits may go on in the next
        handler.screened = True

    def screen(self, chunk: bytes) -> None:
        """Keep `handler.screened` true while `chunk` and the reads before it hold no run of 19 digits (one
        search a read, not one an event; a run split between two reads is seen in the overlap). Once false it
        stays false: an event may have begun in any earlier read."""
        if self.handler.screened:
            self.handler.screened = not json_wire.has_long_number(self._tail + chunk)
            self._tail = chunk[-(json_wire.LONG_NUMBER_DIGITS - 1):]

    def events(self, batch: list[SSEEvent], failure: Exception | None) -> Iterator[Event]:
        """The stream events of `batch`'s SSE events, up to the terminal one, each SSE event handled only when
        the events before it were taken: the message the events point into is then never ahead of what its
        reader was given (its `usage` goes out with every update). Raises what the handler raised, worded by
        `_problem`, or else `failure` (what decoding the read raised after `batch`) unless the terminal event
        came first."""
        handler = self.handler
        for sse in batch:
            if not self.seen and sse.data.strip() == "[DONE]":
                self.over = True  # OpenAI's end-of-stream marker before anything else: an empty answer
                return
            self.seen += 1
            try:
                events = handler.handle(sse)
            except Exception as exc:  # noqa: BLE001 - worded, or passed on as it is
                raise _problem(exc, sse, self.url) from None
            yield from events
            if handler.finished:
                self.over = True
                return
        if failure is not None:
            raise failure


_SHOWN_DATA = 200  # characters of a malformed event's data quoted in the error


def _problem(exc: Exception, sse: SSEEvent, url: str) -> Exception:
    """What `handler.handle(sse)` raising `exc` fails the stream with: a shape no parser check caught (a field
    of the wrong type deep in an event) becomes a `StreamProtocolError` naming the event, never a raw
    TypeError; data that is no JSON object (`MalformedChunkError`, any API) gets the URL and the start of the
    data, as the transport errors do; anything else is `exc` itself."""
    if isinstance(exc, MalformedChunkError):
        shown = sanitize_snippet(sse.data, _SHOWN_DATA)
        return StreamProtocolError(f"Malformed JSON in {exc.where} from {shown_url(url)}: {exc.reason}; "
                                   f'the data starts: "{shown}"')
    if isinstance(exc, (TypeError, AttributeError, KeyError, IndexError)):
        return StreamProtocolError(f"The stream sent a {sse.event or 'data'} event of an unexpected shape "
                                   f"({type(exc).__name__}: {exc})")
    return exc


_CREDENTIAL_HEADERS = frozenset({"authorization", "x-api-key", "x-goog-api-key"})


def _keyless_hint(status: int, headers: dict[str, str]) -> str:
    """For a 401/403 to a request that carried no credential (a keyless local server, `compat.apiKeyRequired:
    false`): say so, since the server's own words rarely do."""
    if status not in (401, 403) or any(name.lower() in _CREDENTIAL_HEADERS for name in headers):
        return ""
    return (' (the request carried no API key: this provider has none configured; set "apiKey" for it in '
            "models.json or add it to auth.json)")
