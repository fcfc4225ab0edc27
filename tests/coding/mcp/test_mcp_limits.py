"""The limits on server-supplied text (`coding/mcp/limits.py`)."""

from __future__ import annotations

from agent_forge.coding.mcp.limits import MAX_NAME_CHARS, cut, one_line, shown_name


def test_cut_keeps_short_text_and_cuts_long_text_with_a_notice():
    assert cut("short", 10, "the text") == "short"
    text = cut("x" * 25, 10, "the text")
    assert text == "x" * 10 + "\n[... cut: the text has 25 characters, the first 10 are shown]"


def test_one_line_joins_lines_escapes_controls_and_cuts():
    assert one_line("a\n b\t\tc", 20) == "a b c"
    assert one_line("T\x1b[2J\u202etitle", 50) == "T\\x1b[2J\\u202etitle"
    assert one_line("t" * 300, 100) == "t" * 100 + "…"
    assert one_line("t" * 10 + " " * 1000 + "u", 10) == "t" * 10 + "…"  # past 4 x the limit: cut


def test_shown_name_quotes_and_cuts():
    assert shown_name("a\x1bb") == "'a\\x1bb'"
    assert shown_name("n" * 5_000_000) == repr("n" * MAX_NAME_CHARS) + "…"
