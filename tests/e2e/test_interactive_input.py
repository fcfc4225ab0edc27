"""End to end: the TUI tester's input findings (issue 12, session 6) in a real terminal (tmux) against the
loopback model server: a `!` command stays shown and abortable while a prompt's run ends beside it; keys typed
before the editor is ready are taken as typed; `/fork` gives back what was typed, not the expanded message;
the `@` file list follows new files and says when it was cut; unbound control keys insert nothing; keys typed
before a command's dialog opens go to it."""

from __future__ import annotations

import pytest

from support.tmux_terminal import tmux_available

from .test_interactive import terminal, user_texts  # noqa: F401  (the fixture, shared)

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed (.ci/run installs it)")


def test_a_shell_command_stays_shown_and_abortable_after_a_run_ends_beside_it(terminal, fake_llm):
    fake_llm.set_script([{"text": "Fast answer."}])
    term = terminal()
    term.type("!sleep 30; echo no''pe4")
    term.press("Enter")
    term.wait_for("sleep 30")
    term.type("fast one")
    term.press("Enter")
    term.wait_for("Fast answer.")
    term.wait_until(lambda: "esc to interrupt" not in term.screen(), "the run's spinner to go")
    assert "$ sleep 30" in term.screen()  # still running, and shown as such
    term.press("Escape")
    shown = term.wait_for("stopped ·")  # the block of the stopped command, long before 30 s
    assert "nope4" not in shown
