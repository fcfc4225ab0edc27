"""After a resize: the live region is erased as the terminal re-wrapped it, and a width change prints the
conversation again at the new width (`modes/interactive/resize.py`)."""

from __future__ import annotations

from prompt_toolkit.layout.screen import Char, Screen
from rich.text import Text

from agent_forge.modes.interactive.resize import CLEAR_ALL, Scrollback, rows_above_cursor


def drawn(*rows: str) -> Screen:
    screen = Screen()
    for y, row in enumerate(rows):
        x = 0
        for char in row:
            screen.data_buffer[y][x] = Char(char)
            x += Char(char).width  # as prompt_toolkit places a wide character: it covers two cells
    return screen


def test_rows_above_the_cursor_count_as_the_narrower_terminal_rewraps_them():
    screen = drawn("x" * 94, "", "─" * 100, "› typed")
    assert rows_above_cursor(screen, 7, 3, 40) == 3 + 1 + 3  # 94 cells: 3 rows; an empty row: 1; the rule: 3
    assert rows_above_cursor(screen, 7, 3, 100) == 3  # wider: each drawn row is one row
    assert rows_above_cursor(drawn("界" * 30, "› " + "y" * 60), 62, 1, 40) == 2 + 1  # wide characters count 2


def test_a_redraw_clears_everything_and_prints_each_group_again_at_the_new_width():
    scrollback = Scrollback(limit=2)
    scrollback.record([Text("first " * 10)])
    scrollback.record([Text("second")])
    narrow = scrollback.redraw(20)
    assert narrow.startswith(CLEAR_ALL) and narrow.count("first") == 10 and "second" in narrow
    assert "first first first \n" in narrow  # wrapped at the new width
    scrollback.record([Text("third")])
    dropped = scrollback.redraw(80)
    assert "first" not in dropped and "earlier output is not printed again" in dropped and "third" in dropped
