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


def _file_blocks(request) -> int:
    return sum(text.count("<file name=") for text in user_texts(request))


def test_fork_and_alt_up_give_back_the_typed_at_references_not_the_file_blocks(terminal, fake_llm):
    fake_llm.set_script([{"text": "Read them."}, {"text": "long running answer", "hang_after": 4},
                         {"text": "Again."}])
    term = terminal()
    for name in ("one.txt", "two.txt"):
        (terminal.work / name).write_text("".join(f"{name} line {n}\n" for n in range(12)))
    typed = "compare @one.txt with @two.txt"
    term.type(typed)
    term.press("Escape")  # the @ menu closes: Enter sends
    term.press("Enter")
    term.wait_for("Read them.")
    assert _file_blocks(fake_llm.requests[0]) == 2
    term.wait_until(lambda: "esc to interrupt" not in term.screen(), "the run to end")
    term.type("/fork")
    term.press("Enter")
    term.wait_for("→ 1. compare")
    term.press("Enter")
    term.wait_for("forked into session")
    term.wait_for(f"› {typed}")  # what was typed, not `[paste #1: 29 lines]`
    term.press("Enter")
    term.wait_for("long")
    assert _file_blocks(fake_llm.requests[1]) == 2  # attached once again, not 4 blocks
    term.type("also @one")
    term.wait_for("  one.txt")  # the @ menu
    term.press("Escape")  # closes the menu; the run goes on
    term.wait_until(lambda: "  one.txt" not in term.screen(), "the menu to close")
    assert "esc to interrupt" in term.screen()
    term.type(".txt")
    term.press("Enter")
    term.wait_for("steer: also")
    term.press("M-Up")  # the queued message back: its reference, not its file block
    shown = term.wait_for("› also @one.txt")
    assert "esc to interrupt" in shown and "<file" not in shown.split("› also")[-1]
    fake_llm.release_hangs()
