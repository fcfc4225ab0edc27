"""The SSE decoder follows the WHATWG event-stream rules whatever the chunking."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_forge.ai.sse import SSEEvent, iter_sse


async def _chunks(parts: list[bytes]):
    for part in parts:
        yield part


async def decode(*parts: bytes) -> list[SSEEvent]:
    return [event async for event in iter_sse(_chunks(list(parts)))]


async def test_event_name_data_and_default_type():
    events = await decode(b"event: ping\ndata: {}\n\ndata: hello\n\n")
    assert events == [SSEEvent("ping", "{}", None), SSEEvent("message", "hello", None)]


async def test_multiple_data_lines_join_with_newline():
    assert await decode(b"data: a\ndata:b\ndata:  c\n\n") == [SSEEvent("message", "a\nb\n c")]


async def test_all_three_line_endings():
    events = await decode(b"data: crlf\r\n\r\ndata: cr\r\rdata: lf\n\n")
    assert [e.data for e in events] == ["crlf", "cr", "lf"]


async def test_cr_and_lf_split_across_chunks_is_one_line_end():
    # Were CR and LF two line ends, the LF would be a blank line dispatching "x" early with no "y".
    events = await decode(b"data: x\r", b"\ndata: y\r\n\r\n")
    assert events == [SSEEvent("message", "x\ny")]


async def test_comments_and_unknown_fields_are_ignored():
    events = await decode(b": keep-alive\nretry: 10\nfoo: bar\ndata: ok\n\n")
    assert events == [SSEEvent("message", "ok")]


async def test_field_without_colon_has_empty_value():
    assert await decode(b"data\n\n") == [SSEEvent("message", "")]


async def test_event_without_data_is_not_dispatched_and_type_resets():
    events = await decode(b"event: lonely\n\ndata: x\n\n")
    assert events == [SSEEvent("message", "x")]


async def test_last_event_id_persists():
    events = await decode(b"id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\n")
    assert [e.id for e in events] == ["7", "7", ""]


async def test_unterminated_last_event_is_dropped():
    assert await decode(b"data: done\n\ndata: partial\n") == [SSEEvent("message", "done")]


async def test_bom_is_stripped_and_multibyte_split_survives():
    body = "\ufeffdata: caf\u00e9 \U0001f600\n\n".encode()
    cut = body.index("\U0001f600".encode()) + 2
    assert await decode(body[:3], body[3:cut], body[cut:]) == [SSEEvent("message", "caf\u00e9 \U0001f600")]


# ---- any chunking gives the same events ----

_text = st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=12)
_events = st.lists(
    st.tuples(st.sampled_from(["", "message", "delta", "événement"]), st.lists(_text, min_size=1, max_size=3)),
    max_size=5,
)


def _encode(events: list[tuple[str, list[str]]], endings: list[str]) -> bytes:
    """One line ending per event: a CR line end followed by an LF blank line would be a single CRLF."""
    out = []
    for position, (name, lines) in enumerate(events):
        end = endings[position % len(endings)]
        out.append(f": comment{end}")
        if name:
            out.append(f"event: {name}{end}")
        out.extend(f"data: {line}{end}" for line in lines)
        out.append(end)
    return "".join(out).encode()


@settings(max_examples=200, deadline=None)
@given(events=_events, endings=st.lists(st.sampled_from(["\n", "\r", "\r\n"]), min_size=1, max_size=4),
       cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12))
def test_any_chunking_gives_the_same_events(events, endings, cuts):
    body = _encode(events, endings)
    points = sorted({c for c in cuts if c <= len(body)})
    parts = [body[a:b] for a, b in zip([0, *points], [*points, len(body)])]
    expected = [SSEEvent(name or "message", "\n".join(lines)) for name, lines in events]
    assert asyncio.run(decode(*parts)) == expected


async def _decode_limited(parts: list[bytes], **limits: int) -> list[SSEEvent]:
    return [event async for event in iter_sse(_chunks(parts), **limits)]


async def test_a_line_over_the_limit_raises_once_its_part_over_the_limit_arrives():
    from agent_forge.ai.errors import StreamLimitError

    parts = [b"data: ok\n\n", b"data: " + b"x" * 4, b"x" * 10, b"never read"]
    seen: list[SSEEvent] = []

    async def chunks():
        for part in parts:
            assert part != b"never read", "the decoder read past the line that broke the limit"
            yield part

    try:
        async for event in iter_sse(chunks(), max_line=12):
            seen.append(event)
    except StreamLimitError as exc:
        assert "longer than 12 characters" in str(exc)
    else:
        raise AssertionError("no StreamLimitError")
    assert seen == [SSEEvent("message", "ok")]


async def test_a_line_at_the_limit_and_events_at_the_limit_pass():
    # "data: xxxxxx" is 12 characters; the event's data is 6 characters plus its line end.
    assert await _decode_limited([b"data: xxxxxx\n\n"], max_line=12, max_event=7) == [SSEEvent("message", "xxxxxx")]


async def test_an_event_whose_data_lines_add_up_over_the_limit_raises():
    from agent_forge.ai.errors import StreamLimitError

    try:
        await _decode_limited([b"data: aaaa\ndata: bbbb\n\n"], max_event=9)
    except StreamLimitError as exc:
        assert "larger than 9 characters" in str(exc)
    else:
        raise AssertionError("no StreamLimitError")


async def test_the_event_limit_counts_each_event_afresh():
    events = await _decode_limited([b"data: aaaa\n\ndata: bbbb\n\n"], max_event=5)
    assert [e.data for e in events] == ["aaaa", "bbbb"]


def test_the_real_limits_are_16_and_32_mib():
    from agent_forge.ai import sse

    assert (sse.MAX_LINE_CHARS, sse.MAX_EVENT_CHARS) == (16 * 1024 * 1024, 32 * 1024 * 1024)


# Blocks a model server sends (one `data: ` line each) mixed with every other shape, so a whole body read at
# once takes the batch path for some blocks and the line-by-line path for the rest.
_block = st.one_of(
    _text.map(lambda t: f"data: {t}\n\n"), _text.map(lambda t: f"data:{t}\n\n"),
    _text.map(lambda t: f"event: delta\ndata: {t}\n\n"), _text.map(lambda t: f"id: {t}\ndata: x\n\n"),
    _text.map(lambda t: f"event: {t}\ndata: {t}\n\n"), _text.map(lambda t: f"event:{t}\ndata: x\n\n"),
    _text.map(lambda t: f"event: {t}\ndata: x\ndata: y\n\n"), _text.map(lambda t: f"event: x\ndata:{t}\n\n"),
    st.sampled_from(["\n", "\n\n", ": ping\n\n", "data: a\ndata: b\n\n", "data: cr\r\n\r\n", "data: open\n"]),
)


async def _events_or_error(parts: list[bytes], **limits: int) -> tuple[list[SSEEvent], str | None]:
    from agent_forge.ai.errors import StreamLimitError

    seen: list[SSEEvent] = []
    try:
        async for event in iter_sse(_chunks(parts), **limits):
            seen.append(event)
    except StreamLimitError as exc:
        return seen, str(exc)
    return seen, None


@settings(max_examples=300, deadline=None)
@given(blocks=st.lists(_block, max_size=8), limit=st.integers(min_value=4, max_value=30))
def test_a_body_read_at_once_gives_what_it_gives_a_byte_at_a_time(blocks, limit):
    # A byte a chunk never holds a whole block, so it goes line by line: the reference for the batch path,
    # limits (the line's and the event's, which the batch path must leave to `line` to raise) included.
    body = "".join(blocks).encode()
    for limits in ({}, {"max_line": limit}, {"max_event": limit}):
        whole = asyncio.run(_events_or_error([body], **limits))
        bytewise = asyncio.run(_events_or_error([body[i:i + 1] for i in range(len(body))], **limits))
        assert whole == bytewise


@settings(max_examples=300, deadline=None)
@given(blocks=st.lists(_block, max_size=8), limit=st.integers(min_value=4, max_value=30),
       cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=5))
def test_a_body_read_in_any_pieces_gives_what_it_gives_a_byte_at_a_time(blocks, limit, cuts):
    # A read that starts inside a block finishes it line by line and takes the batch path again after it.
    body = "".join(blocks).encode()
    edges = sorted({0, len(body), *(cut for cut in cuts if cut < len(body))})
    pieces = [body[start:end] for start, end in zip(edges, edges[1:])]
    for limits in ({}, {"max_line": limit}, {"max_event": limit}):
        bytewise = asyncio.run(_events_or_error([body[i:i + 1] for i in range(len(body))], **limits))
        assert asyncio.run(_events_or_error(pieces, **limits)) == bytewise


async def test_a_long_data_line_in_one_read_still_raises():
    seen, error = await _events_or_error([b"data: ok\n\ndata: " + b"x" * 7 + b"\n\n"], max_line=12)
    assert seen == [SSEEvent("message", "ok")] and error is not None and "longer than 12" in error
    seen, error = await _events_or_error([b"data: ok\n\ndata: xxxxxxx\n\n"], max_event=7)
    assert seen == [SSEEvent("message", "ok")] and error is not None and "larger than 7" in error
