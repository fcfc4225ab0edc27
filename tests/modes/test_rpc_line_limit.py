"""The RPC line splitter's limit: an oversized line is dropped as it arrives and stands as one OversizedLine;
the lines around it are intact, whatever the chunk boundaries."""

from __future__ import annotations

import pytest

from agent_forge.modes.rpc.framing import LineSplitter, OversizedLine


def split(data: bytes, chunk: int, limit: int | None = 10) -> list[object]:
    splitter = LineSplitter(limit)
    out: list[object] = []
    for start in range(0, len(data), chunk):
        out.extend(splitter.feed(data[start:start + chunk]))
    out.extend(splitter.finish())
    return [(r.size, r.limit) if isinstance(r, OversizedLine) else r for r in out]


@pytest.mark.parametrize("chunk", [1, 3, 7, 1000])
def test_an_oversized_line_between_good_ones(chunk):
    data = b"short\r\n" + b"y" * 25 + b"\n" + b"0123456789\nend"
    assert split(data, chunk) == [b"short", (25, 10), b"0123456789", b"end"]


def test_an_unterminated_oversized_last_line_is_still_reported():
    assert split(b"ok\n" + b"z" * 11, 4) == [b"ok", (11, 10)]


def test_the_splitter_keeps_no_more_than_the_limit():
    splitter = LineSplitter(10)
    list(splitter.feed(b"a" * 8))
    list(splitter.feed(b"a" * 1000))
    assert splitter._parts == []  # dropped as it came


def test_no_limit_reads_any_length():
    assert split(b"x" * 5000 + b"\n", 64, limit=None) == [b"x" * 5000]
