"""A session file is read a chunk at a time (`file_lines.FileLines`): whatever the chunk size, and wherever the chunk
boundaries fall (inside a line, on a LF, inside a UTF-8 sequence, a 19-digit number or a damaged line, lines
longer than a chunk), the parse is the one of the file read whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_forge.coding.errors import SessionFileError
from agent_forge.coding.session import file_lines, reading
from agent_forge.records import as_dict

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
    monkeypatch.setattr(file_lines, "_READ_CHUNK", size)
    monkeypatch.setattr(file_lines, "_CARRY_HELD", size)  # a line carried past one more chunk is read again
    try:
        return as_dict(reading.read_session(path))
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
    monkeypatch.setattr(file_lines, "_READ_CHUNK", 1000)
    parsed = reading.read_session(path)
    assert [e["data"]["text"] for e in parsed.entries] == ["é" * 5000, "short"]
    assert parsed.entries[0]["data"]["n"] == 12345678901234567890123  # an int, read the stdlib's way
    assert parsed.torn_tail and parsed.complete_size == path.stat().st_size and parsed.skipped_lines == []


@pytest.mark.parametrize("chunk", [1, 7, 64, 200])  # a chunk is never longer than the cap
@pytest.mark.parametrize("last", [False, True])
@pytest.mark.parametrize("held", [10, 1 << 20])
def test_a_line_over_the_cap_is_skipped_whatever_the_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            chunk: int, last: bool, held: int) -> None:
    """A 200-byte cap: line 3 (201 bytes) is damage, never torn, and cuts nothing; 200 bytes exactly is a line
    (held whole, or read again from the file when longer than `held`)."""
    monkeypatch.setattr(file_lines, "MAX_LINE_BYTES", 200)
    monkeypatch.setattr(file_lines, "_READ_CHUNK", chunk)
    monkeypatch.setattr(file_lines, "_CARRY_HELD", held)
    fits = entry(0, "x" * (200 - len(entry(0, ""))))
    over = b"y" * 201 if last else entry(1, "z" * 300)
    tail = b"" if last else b"\n" + entry(2, "after") + b"\n"
    path = tmp_path / "s.jsonl"
    path.write_bytes(HEADER + b"\n" + fits + b"\n" + over + tail)
    parsed = reading.read_session(path)
    assert len(fits) == 200 and [e["id"] for e in parsed.entries] == ["00000000"] + ([] if last else ["00000002"])
    assert parsed.skipped_lines == parsed.long_lines == [3] and parsed.torn_line is None
    assert parsed.complete_size == parsed.size and parsed.torn_tail is last  # kept; an append starts a new line


def test_a_header_over_the_cap_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(file_lines, "MAX_LINE_BYTES", 100)
    path = tmp_path / "s.jsonl"
    path.write_bytes(HEADER[:-1] + b', "pad": "' + b"p" * 100 + b'"}\n')
    for read in (reading.read_session, reading.read_header):
        with pytest.raises(SessionFileError, match=r"^session file .*: it has no valid session header \(line 1 is longer than 100 bytes"):
            read(path)


def test_a_line_over_the_cap_before_the_header_is_left_out_as_other_lines_before_it(tmp_path: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(file_lines, "MAX_LINE_BYTES", 200)
    monkeypatch.setattr(file_lines, "_READ_CHUNK", 16)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"x" * 201 + b"\n" + HEADER + b"\n" + entry(0, "a") + b"\n" + b"y" * 201 + b"\n")
    parsed = reading.read_session(path)
    assert [e["id"] for e in parsed.entries] == ["00000000"] and parsed.skipped_lines == parsed.long_lines == [4]
