"""Cleaning command output: escape sequences, control characters and carriage returns, whole and streamed,
and what the bash tool then shows the model."""

from __future__ import annotations

import asyncio
import os
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_forge.coding.tools.bash import BashTool
from agent_forge.coding.tools.sanitize import OutputSanitizer, apply_carriage_returns, sanitize_output, terminal_text
from agent_forge.coding.tools.shell_output import OutputCollector, TailBuffer

FORBIDDEN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # every control character but \t and \n


@pytest.mark.parametrize("raw, clean", [
    ("\x1b[1;31mred\x1b[0m plain\n", "red plain\n"),
    ("\x1b[2K\x1b[1G\x1b[?25lcursor\x1b[?25h\n", "cursor\n"),
    ("\x1b]0;window title\x07text\n", "text\n"),
    ("\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\\n", "link\n"),
    ("\x1bP1$r0m\x1b\\dcs\n", "dcs\n"),
    ("\x1b(B\x1b=\x1bMshort forms\n", "short forms\n"),
    ("\x9b32mC1 CSI\x9d0;t\x07\n", "C1 CSI\n"),
    ("a\x00b\x07c\x08d\x0be\x0cf\x7fg\x85h\n", "abcdefgh\n"),
    ("\x00" * 1000, ""),
    ("tab\tkept\n", "tab\tkept\n"),
    ("one\r\ntwo\r\n", "one\ntwo\n"),
    ("one\r\r\ntwo", "one\ntwo"),
    ("10%\r20%\r30%\ndone\n", "30%\ndone\n"),
    ("\r\x1b[K50%\r\x1b[K100%\n", "100%\n"),
    ("finished\r", "finished"),
    ("overwrite\rnew\n", "new\n"),
    ("unfinished \x1b[31", "unfinished "),
    ("stray\x1b\x01 here\n", "stray here\n"),
    ("héllo 😀 \ufffd\n", "héllo 😀 \ufffd\n"),
])
def test_sanitize_output(raw, clean):
    assert sanitize_output(raw) == clean


def test_carriage_returns_keep_what_follows_the_last_one_per_line():
    assert apply_carriage_returns("a\rb\rc\nd\ne\rf") == "c\nd\nf"


pieces_of_output = st.lists(
    st.sampled_from(["a", "é", "😀", "\n", "\r", "\r\n", "\t", "\x00", "\x07", "\x1b", "[", "31", ";", "m",
                     "]", "0;t", "\\", "(", "B", "P", "\x9b", "\x7f", "50%", " "]),
    max_size=60,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=pieces_of_output, cuts=st.lists(st.integers(min_value=0, max_value=60), max_size=6))
def test_streaming_gives_the_same_text_however_the_output_is_cut(text, cuts):
    bounds = sorted({0, len(text), *(c for c in cuts if c <= len(text))})
    sanitizer, tail, out = OutputSanitizer(), TailBuffer(), []
    for start, end in zip(bounds, bounds[1:]):
        out.append(sanitizer.feed(text[start:end]))
        tail.append(out[-1])
    out.append(sanitizer.flush())
    tail.append(out[-1])
    expected = sanitize_output(text)
    assert apply_carriage_returns("".join(out)) == expected == tail.result()["content"]
    assert not FORBIDDEN.search(expected)
    assert all("\r\n" not in piece and not piece.endswith("\r") for piece in out)


@settings(max_examples=100, deadline=None)
@given(text=pieces_of_output, size=st.integers(min_value=1, max_value=7))
def test_collector_cleans_raw_bytes_cut_anywhere(text, size):
    data = text.encode()
    pieces: list[str] = []
    collector = OutputCollector(pieces.append)
    for start in range(0, len(data), size):
        collector.feed(data[start:start + size])
    collector.finish()
    assert collector.tail.result()["content"] == sanitize_output(text)
    assert apply_carriage_returns("".join(pieces)) == sanitize_output(text)


def test_a_progress_bar_redrawn_many_times_takes_one_line():
    tail = TailBuffer()
    tail.append("start\n")
    for i in range(200_000):
        tail.append(f"\r{i}")
    tail.append("\n")
    assert tail.result()["content"] == "start\n199999\n"
    assert (tail.total_lines, tail.total_bytes, tail.retained_chars) == (2, 13, 13)


def test_a_restart_after_dropped_text_does_not_show_a_cut_line_as_whole():
    tail = TailBuffer(max_lines=100, max_bytes=100)
    for text in ("x" * 150, "\nshort\n", "y" * 50):  # over 2 * max_bytes: the start of the x line is dropped
        tail.append(text)
    tail.append("\rdone\n")
    result = tail.result()
    assert result["content"] == "short\ndone\n"
    assert result["truncated"] and (result["totalLines"], result["totalBytes"]) == (3, 162)


async def test_bash_result_and_updates_reach_the_model_clean(tmp_path):
    command = (r"printf '\033[1;32mgreen\033[0m\r\n'; for i in 1 2 3; do printf '\r\033[K%d%%' $i; done; echo;"
               r" head -c 200000 /dev/zero; printf 'tab\there\a\n'")
    updates: list[str] = []
    result = await asyncio.wait_for(BashTool(str(tmp_path), update_interval_s=0).execute(
        "c", {"command": command}, lambda update: updates.append(update.content[0]["text"])), 20)
    raw_path = result.details["fullOutputPath"]  # the raw bytes are kept, NULs and escapes included
    assert result.content == [{"type": "text", "text": (
        "green\n3%\ntab\there\n\n[Output cleaned: 200,021 characters of escape sequences or control characters "
        "removed; 2 lines were overwritten by a carriage return (only their last text is kept). Raw output: "
        f"{raw_path}]")}]
    assert updates and all(not FORBIDDEN.search(text) for text in updates)
    with open(raw_path, "rb") as f:
        raw = f.read()
    os.unlink(raw_path)
    assert raw.startswith(b"\x1b[1;32mgreen") and raw.count(b"\x00") == 200_000
    assert result.details["truncation"] is None


def test_the_sanitizer_counts_what_it_removed_or_overwrote_however_the_text_is_cut():
    text = "a\x1b[31mb\x1b]0;T\x07c\rd\x08e\n\rline start\n" + "\x00" * 5 + "x\ry\x1b[3"
    for size in (1, 2, 3, 7, len(text)):
        sanitizer = OutputSanitizer()
        out = "".join(sanitizer.feed(text[at:at + size]) for at in range(0, len(text), size)) + sanitizer.flush()
        assert apply_carriage_returns(out) == "de\nline start\ny"
        assert (sanitizer.removed, sanitizer.overwritten) == (20, 2), size  # the \r at a line start hides nothing
    assert sanitizer.note() == ("[Output cleaned: 20 characters of escape sequences or control characters removed; "
                                "2 lines were overwritten by a carriage return (only their last text is kept)]")
    clean = OutputSanitizer()
    clean.feed("plain\ttext\r\n")
    assert clean.note() is None


def test_terminal_text_shows_every_control_as_its_escape_and_hides_nothing():
    text = "a\x1b[31mred\x1b[0m\x07\x00b\r\nc\rd\x1b]0;title\x07e\x9b2Jf\tg\x7f\x85h\r"
    assert terminal_text(text) == ("a\\x1b[31mred\\x1b[0m\\x07\\x00b\nc\nd\\x1b]0;title\\x07e\\x9b2Jf\tg"
                                   "\\x7f\\x85h\n")  # a lone \r cannot overwrite: it is a line break


def test_terminal_text_shows_what_an_osc_string_would_hide_from_a_command():
    """Round 4 (interactive): removing the OSC string showed `echo ok` for a command that also ran `touch`."""
    assert terminal_text("echo ok \x1b]0; touch PWNED; \x07") == "echo ok \\x1b]0; touch PWNED; \\x07"
    assert terminal_text("evil\u202ename\u200b.txt") == "evil\\u202ename\\u200b.txt"  # bidi, zero width


@given(st.text())
def test_terminal_text_never_lets_a_control_character_through(text):
    assert not FORBIDDEN.search(terminal_text(text))
