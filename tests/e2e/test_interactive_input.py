"""End to end: the TUI tester's input findings (issue 12, session 6) in a real terminal (tmux) against the
loopback model server: a `!` command stays shown and abortable while a prompt's run ends beside it; keys typed
before the editor is ready are taken as typed; `/fork` gives back what was typed, not the expanded message;
the `@` file list follows new files and says when it was cut; unbound control keys insert nothing; keys typed
before a command's dialog opens go to it."""

from __future__ import annotations

import pytest

from support.tmux_terminal import TmuxTerminal, tmux_available

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


def test_keys_typed_before_the_editor_is_ready_are_taken_as_typed(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "Early answer."}])
    work = tmp_path / "early"
    work.mkdir()
    term = TmuxTerminal(agent_env, work)
    try:
        term.type("early bird")  # at once: before the CLI has even started, in the terminal's cooked mode
        term.press("Enter")
        shown = term.wait_for("Early answer.")
        assert user_texts(fake_llm.requests[0])[-1] == "early bird"  # sent by Enter, no newline in it
        lines = [line.strip() for line in shown.splitlines()]
        header = next(n for n, line in enumerate(lines) if line.startswith("agent-forge v"))
        assert "early bird" not in lines[:header]  # the cooked terminal's echo is gone
        assert lines[lines.index("Early answer.") + 2:].count("›") == 1  # an empty editor again
        term.type("later")
        term.wait_for("› later")  # the terminal is in the editor's hands: no echo, no cooked line
    finally:
        term.close()
