"""The read tool against real files: offset/limit, continuation notices, truncation, images, odd files."""

from __future__ import annotations

import asyncio
import base64
import io
import os
import threading
import tracemalloc

import pytest

from agent_forge.agent.types import ToolError
from agent_forge.coding.tools import line_window
from agent_forge.coding.tools.line_window import CHUNK_BYTES, locate_lines
from agent_forge.coding.tools.read import ReadTool

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00" * 20
IMAGES = {
    "image/png": PNG,
    "image/jpeg": b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 20,
    "image/gif": b"GIF89a\x01\x00\x01\x00" + b"\x00" * 20,
    "image/webp": b"RIFF\x24\x00\x00\x00WEBPVP8 " + b"\x00" * 20,
}


def lines(first: int, last: int) -> str:
    return "".join(f"line {i}\n" for i in range(first, last + 1))


async def read(tmp_path, **args):
    return await ReadTool(str(tmp_path)).execute("call", args, None)


def text_of(result) -> str:
    assert [block["type"] for block in result.content] == ["text"]
    return result.content[0]["text"]


async def test_reads_a_whole_small_file_verbatim(tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    result = await read(tmp_path, path="a.txt")
    assert text_of(result) == "one\ntwo\n"
    assert result.details == {"truncation": None}


async def test_offset_and_limit_select_lines_and_say_how_to_continue(tmp_path):
    (tmp_path / "a.txt").write_text(lines(1, 10))
    result = await read(tmp_path, path="a.txt", offset=3, limit=2)
    assert text_of(result) == "line 3\nline 4\n\n[6 more lines in file. Use offset=5 to continue.]"
    assert result.details == {"truncation": None}


async def test_reading_up_to_the_last_line_has_no_notice(tmp_path):
    (tmp_path / "a.txt").write_text(lines(1, 10))
    assert text_of(await read(tmp_path, path="a.txt", offset=9)) == "line 9\nline 10\n"
    assert text_of(await read(tmp_path, path="a.txt", offset=10, limit=5)) == "line 10\n"


async def test_numeric_strings_and_offset_zero_are_accepted(tmp_path):
    (tmp_path / "a.txt").write_text(lines(1, 3))
    assert text_of(await read(tmp_path, path="a.txt", offset="2", limit=1.0)).startswith("line 2\n\n[1 more")
    assert text_of(await read(tmp_path, path="a.txt", offset=0)) == lines(1, 3)


async def test_offset_past_the_end_says_how_many_lines_there_are(tmp_path):
    (tmp_path / "a.txt").write_text(lines(1, 4))
    with pytest.raises(ToolError, match="offset 5 is past the end.*has 4 lines"):
        await read(tmp_path, path="a.txt", offset=5)


async def test_file_without_final_newline(tmp_path):
    (tmp_path / "a.txt").write_text("a\nb")
    assert text_of(await read(tmp_path, path="a.txt", offset=2)) == "b"
    with pytest.raises(ToolError, match="has 2 lines"):
        await read(tmp_path, path="a.txt", offset=3)


async def test_empty_file(tmp_path):
    (tmp_path / "e.txt").write_bytes(b"")
    assert text_of(await read(tmp_path, path="e.txt")) == "(empty file)"
    with pytest.raises(ToolError, match="is empty"):
        await read(tmp_path, path="e.txt", offset=2)


async def test_long_file_is_cut_at_2000_lines_and_continues(tmp_path):
    (tmp_path / "big.txt").write_text(lines(1, 5123))
    first = await read(tmp_path, path="big.txt")
    assert text_of(first) == lines(1, 2000) + "\n[Showing lines 1-2000 of 5123. Use offset=2001 to continue.]"
    truncation = first.details["truncation"]
    assert truncation["truncatedBy"] == "lines" and truncation["outputLines"] == 2000
    assert truncation["totalLines"] == 5123
    last = await read(tmp_path, path="big.txt", offset=4001)
    assert text_of(last) == lines(4001, 5123)


async def test_limit_above_2000_is_still_cut(tmp_path):
    (tmp_path / "big.txt").write_text(lines(1, 3000))
    result = await read(tmp_path, path="big.txt", offset=11, limit=2500)
    assert text_of(result).endswith("\n[Showing lines 11-2010 of 3000. Use offset=2011 to continue.]")
    assert result.details["truncation"]["totalLines"] == 2500


async def test_wide_lines_are_cut_by_bytes_at_a_line_boundary(tmp_path):
    row = "x" * 199 + "\n"
    (tmp_path / "wide.txt").write_text(row * 1000)
    result = await read(tmp_path, path="wide.txt")
    assert text_of(result) == row * 256 + "\n[Showing lines 1-256 of 1000 (50KB limit). Use offset=257 to continue.]"
    truncation = result.details["truncation"]
    assert truncation["truncatedBy"] == "bytes" and truncation["totalBytes"] == 200_000


async def test_a_single_enormous_line_is_cut_and_the_notice_says_so(tmp_path):
    (tmp_path / "min.js").write_text("é" * 500_000 + "\nsecond line\n")
    result = await read(tmp_path, path="min.js")
    text = text_of(result)
    shown, notice = text.split("\n\n", 1)
    assert shown == "é" * 25_600
    assert notice.startswith("[Line 1 is longer than 50KB") and "offset=2" in notice
    assert "tail -c +51201" in notice
    assert result.details["truncation"]["firstLineExceedsLimit"]
    assert text_of(await read(tmp_path, path="min.js", offset=2)) == "second line\n"


async def test_huge_file_is_streamed_not_loaded(tmp_path):
    path = tmp_path / "huge.log"
    with open(path, "w") as f:
        for block in range(200):
            f.write(lines(block * 10_000 + 1, block * 10_000 + 10_000))
    assert path.stat().st_size > 20_000_000
    tracemalloc.start()
    try:
        result = await read(tmp_path, path="huge.log", offset=1_999_999)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert text_of(result) == "line 1999999\nline 2000000\n"
    assert peak < 8_000_000


async def test_utf8_bom_is_not_shown(tmp_path):
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbfhello\n")
    assert text_of(await read(tmp_path, path="bom.txt")) == "hello\n"


async def test_invalid_utf8_is_replaced_not_fatal(tmp_path):
    (tmp_path / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    assert text_of(await read(tmp_path, path="latin1.txt")) == "caf\ufffd\n"


@pytest.mark.parametrize("mime", sorted(IMAGES))
async def test_images_are_recognised_by_content_not_name(tmp_path, mime):
    (tmp_path / "picture.dat").write_bytes(IMAGES[mime])
    result = await read(tmp_path, path="picture.dat")
    assert result.content == [
        {"type": "text", "text": f"Read image file [{mime}]"},
        {"type": "image", "data": base64.b64encode(IMAGES[mime]).decode(), "mimeType": mime},
    ]


async def test_text_named_like_an_image_is_read_as_text(tmp_path):
    (tmp_path / "fake.png").write_text("not really\n")
    assert text_of(await read(tmp_path, path="fake.png")) == "not really\n"


async def test_binary_file_is_refused_with_a_hint(tmp_path):
    (tmp_path / "prog.bin").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 10)
    with pytest.raises(ToolError, match="binary file.*bash"):
        await read(tmp_path, path="prog.bin")


async def test_missing_file_and_directory_errors(tmp_path):
    with pytest.raises(ToolError, match=f"File not found: {tmp_path}/nope.txt"):
        await read(tmp_path, path="nope.txt")
    (tmp_path / "sub").mkdir()
    with pytest.raises(ToolError, match="is a directory"):
        await read(tmp_path, path="sub")


async def test_fifo_is_refused_instead_of_blocking(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(ToolError, match="not a regular file"):
        await read(tmp_path, path="pipe")


async def test_unicode_path_absolute_path_and_home(tmp_path, monkeypatch):
    target = tmp_path / "données" / "ファイル 😀.txt"
    target.parent.mkdir()
    target.write_text("ok\n")
    assert text_of(await read(tmp_path, path="données/ファイル 😀.txt")) == "ok\n"
    assert text_of(await ReadTool("/").execute("c", {"path": str(target)}, None)) == "ok\n"
    monkeypatch.setenv("HOME", str(tmp_path))
    assert text_of(await ReadTool("/").execute("c", {"path": "~/données/ファイル 😀.txt"}, None)) == "ok\n"


@pytest.mark.parametrize(
    "args, message",
    [
        ({}, "Missing required parameter 'path'"),
        ({"path": 7}, "'path' must be a string, got number"),
        ({"path": ""}, "path must not be empty"),
        ({"path": "a\x00b"}, "NUL"),
        ({"path": "a\ud800b"}, "cannot be used in a file name"),
        ({"path": "a.txt", "offset": "abc"}, "'offset' must be a number, got string"),
        ({"path": "a.txt", "offset": True}, "'offset' must be a number, got boolean"),
        ({"path": "a.txt", "offset": 1.5}, "'offset' must be a whole number"),
        ({"path": "a.txt", "offset": -1}, "'offset' must be >= 0"),
        ({"path": "a.txt", "limit": 0}, "'limit' must be >= 1"),
    ],
)
async def test_bad_arguments_name_the_field(tmp_path, args, message):
    (tmp_path / "a.txt").write_text("x\n")
    with pytest.raises(ToolError) as info:
        await ReadTool(str(tmp_path)).execute("c", args, None)
    assert message in str(info.value)


async def test_non_object_arguments(tmp_path):
    with pytest.raises(ToolError, match="must be a JSON object, got array"):
        await ReadTool(str(tmp_path)).execute("c", [], None)


class EndlessLog(io.RawIOBase):
    """A file that never ends, like a log appended to faster than it is read; counts the bytes handed out."""

    def __init__(self):
        self.served = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = b"log line\n" * (len(buffer) // 9)
        buffer[:len(data)] = data
        self.served += len(data)
        return len(data)


@pytest.mark.parametrize("last", [10, None])
def test_locating_lines_in_an_endless_file_stops_after_the_count_limit(last):
    stream = EndlessLog()
    span = locate_lines(io.BufferedReader(stream), 3, last, enough=10, count_limit=5_000_000)
    assert (span.start, span.complete) == (18, False)
    assert span.end == (90 if last else span.scanned)
    assert 5_000_000 <= span.scanned <= stream.served < 5_000_000 + 2 * CHUNK_BYTES
    assert span.total_lines >= span.scanned // 9


@pytest.fixture
def small_count_limit(monkeypatch):
    monkeypatch.setattr(line_window, "COUNT_LIMIT_BYTES", 1 << 20)  # read.py looks it up per call


async def test_limit_on_a_file_over_the_count_limit_says_more_lines_follow(tmp_path, small_count_limit):
    (tmp_path / "big.log").write_text(lines(1, 400_000))  # 5.4 MB
    result = await read(tmp_path, path="big.log", offset=3, limit=2)
    assert text_of(result) == "line 3\nline 4\n\n[More lines in file (not counted past 1MB). Use offset=5 to continue.]"
    far = await read(tmp_path, path="big.log", offset=399_999, limit=1)
    assert text_of(far) == "line 399999\n\n[1 more line in file. Use offset=400000 to continue.]"


async def test_no_limit_on_a_file_over_the_count_limit_is_cut_and_continues(tmp_path, small_count_limit):
    (tmp_path / "big.log").write_text(lines(1, 400_000))
    result = await read(tmp_path, path="big.log", offset=11)
    assert text_of(result) == lines(11, 2010) + (
        "\n[Showing lines 11-2010; more lines in file (not counted past 1MB). Use offset=2011 to continue.]")
    truncation = result.details["truncation"]
    assert truncation["truncatedBy"] == "lines" and truncation["outputLines"] == 2000
    assert 2000 < truncation["totalLines"] < 400_000  # counted up to the limit only


async def test_a_file_growing_while_it_is_read_is_not_chased(tmp_path, small_count_limit):
    path = tmp_path / "growing.log"
    path.write_text(lines(1, 200_000))
    stop = threading.Event()

    def append_until_stopped():
        with open(path, "a") as f:
            while not stop.is_set():
                f.write("more\n" * 10_000)
                f.flush()

    writer = threading.Thread(target=append_until_stopped)
    writer.start()
    try:
        result = await asyncio.wait_for(read(tmp_path, path="growing.log", offset=1, limit=10), 10)
    finally:
        stop.set()
        writer.join()
    assert text_of(result) == lines(1, 10) + "\n[More lines in file (not counted past 1MB). Use offset=11 to continue.]"
