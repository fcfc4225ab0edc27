"""End to end: the third round of the TUI tester's findings (issue 12) in a real terminal (tmux) against the
loopback model server: Escape then a quick letter still aborts, ..."""

from __future__ import annotations

import time

import pytest

from support.tmux_terminal import tmux_available

from .test_interactive import terminal, user_texts  # noqa: F401  (the fixture, shared)

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed (.ci/run installs it)")

PERSON_GAP_S = 0.15
"""The shortest gap a person leaves between Escape and the next key: the input under test, not a wait."""


def test_escape_then_a_quick_letter_aborts_and_keeps_the_letter(terminal, fake_llm):
    fake_llm.set_script([{"text": "partial words that hang here", "hang_after": 4}, {"text": "Second."}])
    term = terminal()
    term.type("start")
    term.press("Enter")
    term.wait_for("partial")
    term.press("Escape")
    time.sleep(PERSON_GAP_S)
    term.type("b")  # Alt+b is an editor binding: at a 0.3 s Escape wait this was Alt+b and no abort
    term.wait_for("aborted")
    term.type("ye")
    term.wait_for("› bye")
    term.press("Enter")
    term.wait_for("Second.")
    assert user_texts(fake_llm.requests[1])[-1] == "bye"


def test_alt_b_from_the_terminal_still_moves_a_word_back(terminal, fake_llm):
    term = terminal()
    term.type("one two")
    term.press("M-b")
    term.type("X")
    term.wait_for("› one Xtwo")
