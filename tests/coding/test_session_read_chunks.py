"""A session file is read a chunk at a time (`reading._FileLines`): whatever the chunk size, and wherever the chunk
boundaries fall (inside a line, on a LF, inside a UTF-8 sequence, a 19-digit number or a damaged line, lines
longer than a chunk), the parse is the one of the file read whole."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_forge.coding.errors import SessionFileError
from agent_forge.coding.session import reading

HEADER = json.dumps({"type": "session", "version": 3, "id": "u", "timestamp": "2024-01-01T00:00:00.000Z",
                     "cwd": "/p"}).encode()


def entry(i: int, text: str) -> bytes:
    return json.dumps({"type": "custom", "id": f"{i:08x}", "parentId": f"{i - 1:08x}" if i else None,
                       "timestamp": "t", "customType": "x", "data": {"text": text, "n": 12345678901234567890123}},
                      ensure_ascii=False).encode()


LINES = st.one_of(
    st.builds(entry, st.integers(0, 30), st.text(max_size=40)),
    st.sampled_from([b"", b"  ", b"garbage", b"{\"type\": ", b"[1, 2]", b"\xef\xbb\xbf" + entry(40, "bom"),
                     entry(41, "crlf") + b"\r", b"\xff\xfe" + entry(42, "bad utf-8"), b"1234567890123456789012"]),
)


def parse_with_chunk(path: Path, size: int, monkeypatch: pytest.MonkeyPatch) -> object:
    monkeypatch.setattr(reading, "_READ_CHUNK", size)
    try:
        return dataclasses.asdict(reading.read_session(path))
    except SessionFileError as exc:
        return str(exc)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(before=st.lists(LINES, max_size=3), body=st.lists(LINES, max_size=12), header=st.booleans(),
       newline_at_end=st.booleans())
def test_any_chunk_size_reads_the_file_as_a_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, before, body,
                                                  header, newline_at_end) -> None:
    lines = [*before, *([HEADER] if header else []), *body]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines) + (b"\n" if newline_at_end else b""))
    whole = parse_with_chunk(path, 1 << 30, monkeypatch)
    for size in (1, 2, 7, 64):
        assert parse_with_chunk(path, size, monkeypatch) == whole, size


def test_a_line_longer_than_many_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(HEADER + b"\n" + entry(0, "é" * 5000) + b"\n" + entry(1, "short"))  # torn-looking tail
    monkeypatch.setattr(reading, "_READ_CHUNK", 1000)
    parsed = reading.read_session(path)
    assert [e["data"]["text"] for e in parsed.entries] == ["é" * 5000, "short"]
    assert parsed.entries[0]["data"]["n"] == 12345678901234567890123  # an int, read the stdlib's way
    assert parsed.torn_tail and parsed.complete_size == path.stat().st_size and parsed.skipped_lines == []
