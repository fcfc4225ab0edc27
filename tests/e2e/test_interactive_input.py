"""End to end: the TUI tester's input findings (issue 12, session 6) in a real terminal (tmux) against the
loopback model server: a `!` command stays shown and abortable while a prompt's run ends beside it; keys typed
before the editor is ready are taken as typed; `/fork` gives back what was typed, not the expanded message;
the `@` file list follows new files and says when it was cut; unbound control keys insert nothing; keys typed
before a command's dialog opens go to it."""

from __future__ import annotations

import json
import os
import shlex
import sys
import uuid
from pathlib import Path

import pytest

from support.tmux_terminal import TmuxTerminal
from support.tui import READY, needs_tmux, started, user_texts

pytestmark = needs_tmux


def test_a_shell_command_stays_shown_and_abortable_after_a_run_ends_beside_it(terminal, fake_llm):
    fake_llm.set_script([{"text": "Fast answer."}])
    term = terminal()
    term.type("!sleep 30; echo no''pe4")
    term.press("Enter")
    term.wait_for("sleep 30")
    term.type("fast one")
    term.press("Enter")
    term.wait_for("Fast answer.")
    term.wait_until(lambda: "esc to interrupt" not in (shown := term.screen()) and "$ sleep 30" in shown,
                    "the run's spinner to go, the command still shown running")
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
        term.wait_until(lambda: answered_below_the_header(term.screen()), "the answer, an empty editor under it")
        assert user_texts(fake_llm.requests[0])[-1] == "early bird"  # sent by Enter, no newline in it
        lines = [line.strip() for line in term.screen().splitlines()]
        header = next(n for n, line in enumerate(lines) if line.startswith("agent-forge v"))
        assert "early bird" not in lines[:header]  # the cooked terminal's echo is gone
        term.type("later")
        term.wait_for("› later")  # the terminal is in the editor's hands: no echo, no cooked line
    finally:
        term.close()


def _file_blocks(request) -> int:
    return sum(text.count("<file name=") for text in user_texts(request))


def answered_below_the_header(screen: str) -> bool:
    """`screen` shows the header, then "Early answer." and an empty editor again under it (the frame's rows
    under the answer are written after it)."""
    lines = [line.strip() for line in screen.splitlines()]
    if "Early answer." not in lines or not any(line.startswith("agent-forge v") for line in lines):
        return False
    return lines[lines.index("Early answer.") + 2:].count("›") == 1


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
    term.wait_until(lambda: "  one.txt" not in (shown := term.screen()) and "esc to interrupt" in shown,
                    "the menu to close, the run going on")
    term.type(".txt")
    term.press("Enter")
    term.wait_for("steer: also")
    term.press("M-Up")  # the queued message back: its reference, not its file block
    shown = term.wait_for_all("› also @one.txt", "esc to interrupt")
    assert "<file" not in shown.split("› also")[-1]
    fake_llm.release_hangs()



class ShellTerminal(TmuxTerminal):
    """A tmux pane running an interactive bash (job control on) in `cwd` with `env`: the test types the
    command line, as a person does."""

    def __init__(self, env: dict[str, str], cwd: Path):
        self.socket = f"af-test-{uuid.uuid4().hex[:12]}"
        script = Path(env["TMPDIR"]) / f"{self.socket}.sh"
        exports = "".join(f"export {name}={shlex.quote(value)}\n" for name, value in env.items() if name.isidentifier())
        script.write_text(f"{exports}export TERM=xterm-256color PS1='shell$ '\ncd {shlex.quote(str(cwd))}\n"
                          "exec bash --norc --noprofile -i\n")
        self._tmux("new-session", "-d", "-s", "t", "-x", "100", "-y", "30", f"bash {script}")


def test_ctrl_z_suspends_to_the_shell_and_fg_brings_the_editor_back(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "Back again."}])
    term = ShellTerminal(agent_env, tmp_path)
    try:
        term.wait_for("shell$")
        term.type(f"{shlex.quote(sys.executable)} -m agent_forge")
        term.press("Enter")
        term.wait_for(READY)
        started(term)
        term.type("before")
        term.press("C-z")
        term.wait_for("Stopped")  # the shell's job control took the terminal back
        term.type("echo typed-in-shell")
        term.press("Enter")
        term.wait_for_line("typed-in-shell")  # echoed and run: the terminal is the shell's again (cooked)
        term.type("fg")
        term.press("Enter")
        term.wait_for("› before")  # the live region is drawn again, the draft kept
        term.type(" after")
        term.press("Enter")
        term.wait_for("Back again.")
        assert user_texts(fake_llm.requests[0])[-1] == "before after"  # no \x1a in it
        term.press("C-d")
        term.wait_for("Resume this session")
        term.type("echo modes-back")
        term.wait_for("shell$ echo modes-back")  # echoed as typed: the terminal's own modes were put back
    finally:
        term.close()


@pytest.mark.parametrize("keys", [["C-z"], ["C-q", "C-a"], ["C-q", "C-z"], ["C-\\"], ["C-^"]])
def test_no_control_key_puts_a_raw_control_character_into_the_prompt(terminal, fake_llm, keys):
    fake_llm.set_script([{"text": "Got it."}])
    term = terminal()  # not under a job-control shell: Ctrl+Z's stop signal is dropped by the kernel
    term.type("a")
    term.press(*keys)
    term.type("b")
    term.wait_for("› ab")
    term.press("Enter")
    term.wait_for("Got it.")
    assert user_texts(fake_llm.requests[0])[-1] == "ab"


def test_the_at_search_offers_files_created_after_its_first_use(terminal, fake_llm):
    fake_llm.set_script([{"text": "Writing.", "tool_calls": [{"name": "write", "arguments": {
        "path": "made_by_agent.txt", "content": "x\n"}}]}, {"text": "Written."}, {"text": "Seen."}])
    term = terminal()
    (terminal.work / "first.txt").write_text("1\n")
    term.type("@fir")
    term.wait_for("  first.txt")  # the list is walked on the first @
    term.press("C-u")
    term.type("write it")
    term.press("Enter")
    term.wait_for("Written.")
    term.type("@made_by")
    term.wait_for("  made_by_agent.txt")  # walked again after the turn: the write tool's file is offered
    term.press("C-u")
    term.type("!touch from_shell.txt")
    term.press("Enter")
    term.wait_for("exit 0")
    term.type("@from_sh")
    term.wait_for("  from_shell.txt")  # and after a ! command


def test_the_at_search_keeps_shallow_files_of_a_big_tree_and_says_it_was_cut(terminal, fake_llm, tmp_path):
    term_work = terminal.work
    big = term_work / "big"
    big.mkdir()
    (big / "f00000.txt").touch()
    for n in range(1, 20_050):  # links: a name costs a tenth of a new file's inode (~3 s of CPU for 20,050)
        os.link(big / "f00000.txt", big / f"f{n:05d}.txt")
    (term_work / "emoji_🎉.txt").write_text("party\n")
    term = terminal()
    term.type("@emoji")
    term.wait_for("  emoji_🎉.txt")  # the top level is walked first: the cut falls in big/
    term.press("C-u")
    term.type("@f0000")
    term.wait_for_all("  big/f00000.txt", "only the first 20,000 files are searched", "› @f0000")


def test_a_file_name_with_a_newline_is_attached_from_the_at_menu(terminal, fake_llm):
    fake_llm.set_script([{"text": "Got the odd one."}])
    (terminal.work / "nl\nname.txt").write_text("odd file content\n")
    term = terminal()
    term.type("read @nlna")
    term.wait_for("nl")
    term.press("Tab")  # the menu's only entry taken: one line, escaped; the menu closes
    term.wait_for('› read @"nl\\nname.txt"')
    term.wait_until(lambda: "  nl" not in term.screen(), "the menu to close")
    term.press("Enter")
    term.wait_for("Got the odd one.")
    sent = user_texts(fake_llm.requests[0])[-1]
    assert "odd file content" in sent and "was not attached" not in term.scrollback()


@pytest.mark.parametrize("typed", ["/login fake\rsk-fast-1", "/login\r"])
def test_keys_typed_before_a_command_s_dialog_opens_go_to_that_dialog(terminal, fake_llm, agent_env, typed):
    term = terminal()
    term.type(typed)  # one burst: the keys after Enter are read before the command has run
    if typed == "/login\r":
        term.wait_for_line("Log in to which provider?")
        term.type("fake\rsk-fast-1")  # Enter picks the provider, the key follows at once
    term.wait_for("› *********")  # in the secret input, masked: not in the editor's draft
    assert "sk-fast" not in term.screen()
    term.press("Enter")
    term.wait_for("saved the API key for fake")
    auth = Path(agent_env["AGENT_FORGE_DIR"]) / "auth.json"
    assert json.loads(auth.read_text())["fake"]["key"] == "sk-fast-1"
    assert "sk-fast" not in (Path(agent_env["AGENT_FORGE_DIR"]) / "prompt-history").read_text()
    term.wait_for_line("›")  # nothing of it comes back into the editor


def test_tree_edit_puts_a_message_back_as_typed_and_continues_from_before_it(terminal, fake_llm):
    fake_llm.set_script([{"text": "Answer one."}, {"text": "Answer two."}, {"text": "Answer again."}])
    term = terminal()
    (terminal.work / "one.txt").write_text("".join(f"line {n}\n" for n in range(15)))
    for prompt, answer in (("question one", "Answer one."), ("question two with @one.txt ", "Answer two.")):
        term.type(prompt)
        term.press("Enter")
        term.wait_for(answer)
    term.wait_until(lambda: "esc to interrupt" not in term.screen(), "the run to end")
    term.type("/tree")
    term.press("Enter")
    term.wait_for("(here)")
    term.type("question two")
    term.wait_for("→ user: question two")
    term.press("Enter")
    term.wait_for("Edit this message")
    term.type("edit")
    term.wait_for("→ Edit this message")
    term.press("Enter")
    term.wait_for("continuing from before the message")
    term.wait_for("› question two with @one.txt")  # as typed: no [paste #1] of its file block
    term.press("Enter")
    term.wait_for("Answer again.")
    sent = user_texts(fake_llm.requests[2])
    assert sent[0] == "question one" and len(sent) == 2 and sent[1].count("<file name=") == 1
