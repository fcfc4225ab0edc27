"""A huge user message shows its start and how much more was sent, and renders fast; a short one whole."""

from __future__ import annotations

import time

from agent_forge.modes.interactive.blocks import USER_SHOWN_LINES, user_block
from agent_forge.modes.interactive.render import to_ansi


def test_a_short_message_is_shown_whole():
    shown = to_ansi([user_block("one\ntwo")], 60)
    assert "one" in shown and "two" in shown and "more lines" not in shown


def test_a_5_mb_message_shows_its_start_and_renders_fast():
    text = "".join(f"line {i}\n" for i in range(600_000))
    started = time.perf_counter()
    shown = to_ansi([user_block(text)], 100)
    assert time.perf_counter() - started < 2.0
    assert "line 0" in shown and f"line {USER_SHOWN_LINES - 1}" in shown and f"line {USER_SHOWN_LINES}\n" not in shown
    assert f"{600_000 - USER_SHOWN_LINES:,} more lines" in shown and "(sent whole)" in shown


def test_one_huge_line_is_cut_by_characters():
    shown = to_ansi([user_block("x" * 1_000_000)], 100)
    assert shown.count("x") < 10_000 and "more characters (sent whole)" in shown
