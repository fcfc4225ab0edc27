"""The chunked-body reader (`providers/_chunked.py`): what it decodes and refuses is what h11 does, however the
bytes are split into reads; it serves a real server's plain chunked answer and steps aside for the rest."""

from __future__ import annotations

import json

import h11
import httpx2
import pytest

from agent_forge.ai.providers._chunked import MAX_PENDING, ChunkedBody, raw_chunked_body
from agent_forge.ai.providers._response_body import body_bytes

BODIES = {
    "plain": b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
    "extensions and spaces": b"5;name=value\r\nhello\r\n3 \t\r\nabc\r\n0;last\r\n\r\n",
    "upper-case hex": b"A\r\n0123456789\r\n0\r\n\r\n",
    "a trailer": b"3\r\nabc\r\n0\r\nX-Checksum: 1\r\nX-More: 2\r\n\r\n",
    "a trailer ended by LF LF": b"3\r\nabc\r\n0\r\nX-Checksum: 1\n\n",
    "bytes after the end": b"3\r\nabc\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n",
    "a bad size": b"3\r\nabc\r\nzz\r\nmore\r\n0\r\n\r\n",
    "an empty size line": b"\r\nabc\r\n",
    "21 hex digits": b"000000000000000000003\r\nabc\r\n0\r\n\r\n",
    "a bad chunk end": b"3\r\nabcX\r\n0\r\n\r\n",
    "a LF chunk end": b"3\r\nabc\n0\r\n\r\n",
    "cut in a chunk": b"5\r\nhel",
    "cut before the trailer": b"3\r\nabc\r\n0\r\n",
    "empty": b"",
}


def h11_reading(body: bytes, pieces: list[bytes]) -> tuple[bytes, str]:
    """(payload, "done" / "error") as h11 reads `body` sent in `pieces`, then EOF."""
    conn = h11.Connection(h11.CLIENT)
    conn.send(h11.Request(method="GET", target="/", headers=[("Host", "x")]))
    conn.send(h11.EndOfMessage())
    conn.receive_data(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    assert isinstance(conn.next_event(), h11.Response)
    payload = b""
    for piece in [*pieces, b""]:
        conn.receive_data(piece)
        while True:
            try:
                event = conn.next_event()
            except h11.RemoteProtocolError:
                return payload, "error"
            if event is h11.NEED_DATA:
                break
            if isinstance(event, h11.EndOfMessage):
                return payload, "done"
            payload += event.data
    raise AssertionError("h11 neither ended nor failed at EOF")


def our_reading(pieces: list[bytes]) -> tuple[bytes, str]:
    body, payload = ChunkedBody(), b""
    for piece in pieces:
        payload += body.feed(piece)
        if body.problem is not None:
            return payload, "error"
        if body.done:
            return payload, "done"
    return payload, "error"  # EOF before the end: `_payloads` raises


def splits(body: bytes) -> list[list[bytes]]:
    ways = [[body], [body[i:i + 1] for i in range(len(body))]]
    ways += [[body[:cut], body[cut:]] for cut in range(1, len(body))]
    return ways + [[body[i:i + size] for i in range(0, len(body), size)] for size in (2, 3, 7)]


@pytest.mark.parametrize("name", BODIES)
def test_a_body_split_anywhere_reads_as_h11_reads_it(name):
    body = BODIES[name]
    for pieces in splits(body):
        assert our_reading(pieces) == h11_reading(body, pieces), pieces


def test_a_problem_is_h11s_text_after_the_payload_before_it():
    body = ChunkedBody()
    assert body.feed(b"3\r\nabc\r\nzz\r\n") == b"abc"
    assert body.problem == "illegal chunk header: b'zz\\r\\n'" and body.done


def test_an_endless_size_line_is_refused_once_past_the_limit():
    body = ChunkedBody()
    body.feed(b"3\r\nabc\r\n")
    for _ in range(MAX_PENDING // 1000):
        assert body.feed(b"0" * 1000) == b"" and body.problem is None
    body.feed(b"0" * 1000)
    assert body.problem == "Receive buffer too long"


REQUEST = {"model": "fake-model", "messages": [{"role": "user", "content": "hi"}], "stream": True}


async def _streamed(url: str, raw: bool) -> list[object]:
    """The `choices` of each event of a streamed answer, read with `body_bytes`; asserts whether the raw reader
    serves it."""
    async with httpx2.AsyncClient() as client:
        async with client.stream("POST", url, json=REQUEST) as response:
            assert (raw_chunked_body(response) is not None) == raw, response.headers
            body = b"".join([chunk async for chunk in body_bytes(response)])
    assert body.endswith(b"data: [DONE]\n\n")
    return [json.loads(block[6:])["choices"] for block in body.split(b"\n\n")[:-2]]


async def test_a_real_servers_chunked_stream_is_read_raw_and_whole(fake_llm):
    spec = {"text": " ".join(f"w{i}" for i in range(300)), "text_deltas": 300}
    fake_llm.set_script([{**spec, "burst": True}, spec, {**spec, "framing": "close"}])
    url = f"{fake_llm.base_url_openai}/chat/completions"
    burst, one_by_one, closed = await _streamed(url, True), await _streamed(url, True), await _streamed(url, False)
    assert len(burst) == 302 and burst == one_by_one == closed


async def test_a_compressed_stream_is_left_to_httpx2(fake_llm):
    fake_llm.set_script([{"frames": ["not gzip"], "headers": {"Content-Encoding": "gzip"}}])
    async with httpx2.AsyncClient() as client:
        async with client.stream("POST", f"{fake_llm.base_url_openai}/chat/completions", json=REQUEST) as response:
            assert response.headers["transfer-encoding"] == "chunked"
            assert raw_chunked_body(response) is None
