"""Cursor position reports that answer a question asked before the last reset are not taken as current
(`modes/interactive/cpr.py`)."""

from __future__ import annotations

import io

from prompt_toolkit.data_structures import Size
from prompt_toolkit.output.vt100 import Vt100_Output
from prompt_toolkit.renderer import CPR_Support, Renderer
from prompt_toolkit.styles import Style

from agent_forge.modes.interactive.cpr import InOrderRenderer


def renderer(kind: type[Renderer]) -> tuple[Renderer, io.StringIO]:
    sink = io.StringIO()
    output = Vt100_Output(sink, lambda: Size(rows=30, columns=100), term="xterm-256color")
    made = kind(Style([]), output)
    made.cpr_support = CPR_Support.SUPPORTED
    return made, sink


async def test_an_answer_to_a_question_asked_before_a_reset_is_ignored():  # (futures need a loop)
    plain, _ = renderer(Renderer)
    ours, sink = renderer(InOrderRenderer)
    for made in (plain, ours):
        made.request_absolute_cursor_position()  # first paint: the cursor is on row 1
        made.reset()  # twelve rows printed above the region
        made.request_absolute_cursor_position()  # now on row 13
        made.report_absolute_cursor_row(1)  # the first answer, late
    assert plain._min_available_height == 30  # prompt_toolkit alone: every row reserved, the screen scrolls
    assert ours._min_available_height == 0 and len(ours._waiting_for_cpr_futures) == 1
    assert sink.getvalue().count("\x1b[6n") == 2
    ours.report_absolute_cursor_row(13)
    assert ours._min_available_height == 30 - 13 + 1 and not ours.waiting_for_cpr


async def test_answers_in_order_without_a_reset_are_taken():
    ours, _ = renderer(InOrderRenderer)
    ours.request_absolute_cursor_position()
    ours.report_absolute_cursor_row(5)
    assert ours._min_available_height == 26
    ours.report_absolute_cursor_row(7)  # an answer nobody asked for since: prompt_toolkit's rule (taken)
    assert ours._min_available_height == 24
