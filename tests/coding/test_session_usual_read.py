"""The usual session file (a header, then one entry a line, ending with a newline) is read in one pass over whole
chunks (`reading._usual_body`); any other file is read by `FileLines` (`reading._any_body`). Both give the same
`ParsedSession`: for every file, whatever the chunk size, reading it with the one-pass reader turned off changes
nothing, and the one-pass reader is the one that reads the usual files."""

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


def message(i: int, parent: int | None = -1, text: str = "hi") -> bytes:
    """A message entry line: id `i`, its parent the entry before (`parent` -1), another one, or none."""
    parent_id = None if parent is None else f"{(i - 1 if parent == -1 else parent):08x}"
    return json.dumps({"type": "message", "id": f"{i:08x}", "parentId": parent_id, "timestamp": "t",
                       "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": i}}).encode()  # ASCII: a lone surrogate escaped


def chain(count: int) -> list[bytes]:
    return [message(0, None), *(message(i) for i in range(1, count))]


def read(path: Path, *, usual: bool, monkeypatch: pytest.MonkeyPatch) -> object:
    with monkeypatch.context() as patch:
        if not usual:
            patch.setattr(reading, "_usual_body", lambda handle, path: None)
        try:
            return as_dict(reading.read_session(path))
        except SessionFileError as exc:
            return str(exc)


def usual_body(path: Path) -> reading._Body | None:
    with file_lines.open_for_reading(path) as handle:
        return reading._usual_body(handle, path)


@pytest.mark.parametrize("chunk", [1 << 16, 100, 7])
def test_the_usual_file_is_read_in_one_pass_as_file_lines_reads_it(tmp_path: Path, chunk: int,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(file_lines, "_READ_CHUNK", chunk)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join([HEADER, *chain(40)]) + b"\n")
    body = usual_body(path)
    assert body is not None and body.positions is not None and len(body.objects) == 40
    assert read(path, usual=True, monkeypatch=monkeypatch) == read(path, usual=False, monkeypatch=monkeypatch)


@pytest.mark.parametrize(("name", "lines", "end", "one_chain"), [
    ("branch", [HEADER, *chain(3), message(3, parent=0), message(4)], b"\n", False),
    ("repeated id", [HEADER, *chain(3), message(1), message(4, parent=1)], b"\n", False),
    ("a long number", [HEADER, *chain(2), message(2, text="1234567890123456789012"), message(3)], b"\n", True),
    ("CRLF", [line + b"\r" for line in [HEADER, *chain(3)]], b"\n", True),
])
def test_files_the_one_pass_reader_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str,
                                         lines: list[bytes], end: bytes, one_chain: bool) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines) + end)
    body = usual_body(path)
    assert body is not None and (body.positions is not None) == one_chain, name
    assert read(path, usual=True, monkeypatch=monkeypatch) == read(path, usual=False, monkeypatch=monkeypatch)


@pytest.mark.parametrize(("name", "lines", "end"), [
    ("a blank line", [HEADER, *chain(2), b"", message(2)], b"\n"),
    ("a damaged line", [HEADER, *chain(2), b'{"type": "mess', message(2)], b"\n"),
    ("not an object", [HEADER, *chain(2), b"[1, 2]", message(2)], b"\n"),
    ("a torn tail", [HEADER, *chain(3)], b'\n{"type": "mess'),
    ("a whole last line without its newline", [HEADER, *chain(3)], b""),
    ("a byte order mark", [b"\xef\xbb\xbf" + HEADER, *chain(3)], b"\n"),
    ("a lone surrogate escape", [HEADER, *chain(2), message(2, text="\ud83d")], b"\n"),
    ("invalid UTF-8", [HEADER, message(0, None)[:-20] + b"\xff" + message(0, None)[-20:]], b"\n"),
    ("lines before the header", [b"garbage", HEADER, *chain(2)], b"\n"),
    ("an empty file", [], b""),
])
def test_files_left_to_file_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, lines: list[bytes],
                                  end: bytes) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines) + end)
    assert usual_body(path) is None, name
    assert read(path, usual=True, monkeypatch=monkeypatch) == read(path, usual=False, monkeypatch=monkeypatch)


@pytest.mark.parametrize("carried", [False, True])
def test_an_overlong_line_is_left_to_file_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                carried: bool) -> None:
    """Over `MAX_LINE_BYTES` (lowered): a line carried across chunks, or one a chunk starts with (the lines
    `FileLines` measures; a real limit is larger than a chunk)."""
    monkeypatch.setattr(file_lines, "MAX_LINE_BYTES", 300)
    lines = [HEADER, message(0, None, "y" * 500), message(1, text="x" * 400), message(2)]
    first_chunk = len(HEADER) + len(lines[1]) + 2 - (100 if carried else 0)
    monkeypatch.setattr(file_lines, "_READ_CHUNK", first_chunk)  # the next chunk starts with (or in) line 3
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert usual_body(path) is None
    parsed = read(path, usual=True, monkeypatch=monkeypatch)
    assert parsed == read(path, usual=False, monkeypatch=monkeypatch)
    assert isinstance(parsed, dict) and parsed["long_lines"] == ([2, 3] if carried else [3])


LINES = st.one_of(
    st.builds(message, st.integers(0, 12), st.sampled_from([-1, -1, -1, None, 0, 3])),
    st.sampled_from([b"", b"  ", b"garbage", b"[1]", HEADER, message(5) + b"\r", b"\xef\xbb\xbf" + message(6),
                     message(7, text="12345678901234567890123"), message(8, text="\ud800")]),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.lists(LINES, max_size=10), header=st.booleans(), end=st.sampled_from([b"\n", b"", b"\n\n", b'{"a']),
       chunk=st.sampled_from([1 << 16, 64, 5]))
def test_any_file_reads_the_same_with_and_without_the_one_pass_reader(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: list[bytes], header: bool, end: bytes,
        chunk: int) -> None:
    monkeypatch.setattr(file_lines, "_READ_CHUNK", chunk)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join([*([HEADER] if header else []), *body]) + end)
    assert read(path, usual=True, monkeypatch=monkeypatch) == read(path, usual=False, monkeypatch=monkeypatch)
