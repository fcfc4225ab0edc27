"""Head/tail truncation: limits, line boundaries, character boundaries, the single-long-line cases."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_forge.coding.tools.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    count_lines,
    format_size,
    truncate_head,
    truncate_tail,
    utf8_len,
)


def numbered(n: int, width: int = 0) -> str:
    return "".join(f"line {i}".ljust(width) + "\n" for i in range(1, n + 1))


def test_defaults_are_2000_lines_and_50_kb():
    assert (DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES) == (2000, 51200)


def test_count_lines_counts_a_final_fragment():
    assert [count_lines(t) for t in ("", "a", "a\n", "a\nb", "a\nb\n", "\n\n")] == [0, 1, 1, 2, 2, 2]


def test_short_text_is_untouched():
    for fn in (truncate_head, truncate_tail):
        result = fn("a\nb\n")
        assert result["content"] == "a\nb\n"
        assert not result["truncated"] and result["truncatedBy"] is None
        assert (result["totalLines"], result["outputLines"], result["totalBytes"]) == (2, 2, 4)


def test_head_by_lines_keeps_the_first_whole_lines():
    result = truncate_head(numbered(3000))
    assert result["content"] == numbered(2000)
    assert result["truncatedBy"] == "lines"
    assert (result["totalLines"], result["outputLines"]) == (3000, 2000)
    assert result["outputBytes"] == utf8_len(numbered(2000))


def test_head_by_bytes_keeps_whole_lines_under_the_limit():
    text = numbered(1000, width=99)  # 100 bytes per line
    result = truncate_head(text)
    assert result["truncatedBy"] == "bytes"
    assert result["outputLines"] == 512 and result["content"] == text[: 512 * 100]
    assert result["outputBytes"] == 51200 and result["totalBytes"] == 100_000


def test_head_single_huge_line_is_cut_at_a_character_boundary():
    text = "é" * 40_000 + "\nnext\n"  # 80 000 bytes on line 1
    result = truncate_head(text)
    assert result["firstLineExceedsLimit"] and result["truncatedBy"] == "bytes"
    assert result["content"] == "é" * 25_600
    assert result["outputLines"] == 1 and result["outputBytes"] == 51200


def test_head_cut_of_a_line_with_odd_sized_characters_stays_under_the_limit():
    result = truncate_head("€" * 30_000, max_bytes=100)  # 3-byte characters: 100 is not a multiple
    assert result["content"] == "€" * 33 and result["outputBytes"] == 99


def test_head_line_that_fits_without_its_newline_is_not_reported_as_cut():
    result = truncate_head("abcd\nef\n", max_bytes=4)
    assert result["content"] == "abcd" and not result["firstLineExceedsLimit"]


def test_tail_by_lines_keeps_the_last_whole_lines():
    result = truncate_tail(numbered(3000))
    assert result["content"] == numbered(3000)[len(numbered(1000)):]
    assert result["content"].startswith("line 1001\n")
    assert (result["truncatedBy"], result["outputLines"], result["totalLines"]) == ("lines", 2000, 3000)


def test_tail_by_bytes_keeps_whole_lines():
    text = numbered(1000, width=99)
    result = truncate_tail(text)
    assert result["truncatedBy"] == "bytes" and result["content"] == text[-512 * 100:]


def test_tail_single_huge_line_keeps_its_end_without_splitting_characters():
    text = "start" + "€" * 30_000 + "end\n"
    result = truncate_tail(text)
    assert result["lastLinePartial"] and result["outputLines"] == 1
    assert result["content"].endswith("end\n") and result["outputBytes"] <= DEFAULT_MAX_BYTES
    assert text.endswith(result["content"])


def test_format_size():
    assert [format_size(n) for n in (0, 1023, 1024, 51200, 1536 * 1024, 3 * 1024**3)] == [
        "0B", "1023B", "1KB", "50KB", "1.5MB", "3GB"]


texts = st.text(alphabet=st.sampled_from(["a", "é", "€", "😀", "\n", "\r", " "]), max_size=200)


@settings(max_examples=300, deadline=None)
@given(texts, st.integers(1, 8), st.integers(1, 40))
def test_head_properties(text, max_lines, max_bytes):
    result = truncate_head(text, max_lines, max_bytes)
    content = result["content"]
    assert text.startswith(content)
    assert utf8_len(content) <= max_bytes and count_lines(content) <= max_lines
    assert result["truncated"] == (content != text)
    assert result["outputBytes"] == utf8_len(content)
    if result["truncated"] and not result["firstLineExceedsLimit"] and content:
        # whole lines only: the cut is right after a newline, or drops just the newline of a fitting line
        assert content.endswith("\n") or text[len(content)] == "\n"


@settings(max_examples=300, deadline=None)
@given(texts, st.integers(1, 8), st.integers(1, 40))
def test_tail_properties(text, max_lines, max_bytes):
    result = truncate_tail(text, max_lines, max_bytes)
    content = result["content"]
    assert text.endswith(content)
    assert utf8_len(content) <= max_bytes and count_lines(content) <= max_lines
    assert result["truncated"] == (content != text)
    if result["truncated"] and not result["lastLinePartial"] and content:
        assert text[len(text) - len(content) - 1] == "\n"
