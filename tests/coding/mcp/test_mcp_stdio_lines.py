"""The stdio transport's line splitting (`stdio_transport.LineSplitter`): lines across chunks, the cap, and what
one line costs to keep; and `parse_line`, which makes the SDK's messages."""

from __future__ import annotations

import pytest

from agent_forge.coding.mcp.stdio_transport import LineSplitter, MessageTooLong, parse_line


def test_lines_split_across_chunks_come_out_whole_and_in_order():
    lines = LineSplitter(limit=100)
    assert lines.feed(b'{"a"') == []
    assert lines.feed(b':1}\n{"b":2}\n{"c') == [b'{"a":1}', b'{"b":2}']
    assert lines.feed(b'":3}\n\n') == [b'{"c":3}', b""]
    assert lines.feed(b"") == []


def test_a_line_of_exactly_the_limit_passes_one_byte_more_is_refused_saying_how_much_was_read():
    assert LineSplitter(limit=10).feed(b"0123456789\n") == [b"0123456789"]
    with pytest.raises(MessageTooLong) as caught:
        LineSplitter(limit=10).feed(b"01234567890\n")
    assert caught.value.seen == 11 and caught.value.limit == 10


def test_a_line_without_a_newline_is_refused_as_soon_as_it_passes_the_limit():
    lines = LineSplitter(limit=1000)
    for _ in range(9):
        assert lines.feed(b"x" * 100) == []
    with pytest.raises(MessageTooLong) as caught:
        lines.feed(b"x" * 200)  # kept: at most the limit plus one chunk
    assert caught.value.seen == 1100
    assert "longer than 1,000 bytes (1,100 bytes without a newline); the rest of it was not read" in str(caught.value)


def test_a_long_line_in_many_small_chunks_is_kept_once():
    lines = LineSplitter(limit=1 << 24)
    chunk = b"y" * 4096
    for _ in range(2048):  # 8 MiB: with `buffer + chunk` per read this copies 8 GiB
        assert lines.feed(chunk) == []
    assert lines.feed(b"\n") == [b"y" * (8 << 20)]


def test_parse_line_makes_the_sdks_message_or_returns_the_error():
    from mcp.shared.message import SessionMessage
    from mcp_types import JSONRPCResponse

    message = parse_line(b'{"jsonrpc": "2.0", "id": 1, "result": {"x": "caf\xc3\xa9"}}')
    assert isinstance(message, SessionMessage) and isinstance(message.message, JSONRPCResponse)
    assert message.message.result == {"x": "café"}
    assert isinstance(parse_line(b"not json"), ValueError)
    assert isinstance(parse_line(b'{"jsonrpc": "2.0", "id": 1, "result": "\xff"}'), ValueError)  # not an object
    replaced = parse_line(b'{"jsonrpc": "2.0", "id": 1, "result": {"x": "\xff"}}')
    assert isinstance(replaced, SessionMessage) and replaced.message.result == {"x": "\ufffd"}


@pytest.mark.parametrize("line", [b'{"hello": "world"}', b"[1,2]", b"5", b"not json {"])
def test_a_line_that_is_not_json_rpc_is_quoted_as_written(line):
    from agent_forge.coding.mcp.errors import first_line

    error = parse_line(line)  # JSON of another shape included: pydantic's own text would not quote it
    assert isinstance(error, ValueError) and first_line(error) == repr(line.decode())
