"""End to end: the sixth round of interactive-mode rough edges (issue 12) in a real terminal (tmux) against the
loopback model server: no blank rows under the footer after a tall dialog closes; a running huge command shows a
bounded title; an `@file` attachment shows as `attached: path (N lines)`; a newline in an `@` completion's name
shows escaped; an approval for a >20,000-character command shows its middle's size and prints it all; a key
pressed right after a bracketed paste is a key."""

from __future__ import annotations

from support.tui import needs_tmux, user_texts

pytestmark = needs_tmux


def test_enter_right_after_a_paste_sends_it(terminal, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "Pasted and sent."}])
    term = terminal(columns=80, rows=24)
    source = tmp_path / "paste.txt"
    source.write_text("pasted words")
    term._tmux("load-buffer", "-b", "p1", str(source))
    term._tmux("paste-buffer", "-p", "-b", "p1", "-t", "t")
    # The paste on screen means it was read and complete; an Enter read with it acts too, once the input pauses
    # (`paste.py`; test_interactive_leftovers.py sends a paste and keys in one write).
    term.wait_until(lambda: pasted_alone(term), "the paste alone in the editor")
    term.press("Enter")
    term.wait_for("Pasted and sent.")
    assert user_texts(fake_llm.requests[0])[-1] == "pasted words"


def pasted_alone(term) -> bool:
    """Whether the editor holds exactly the pasted line: its row, then the editor's bottom border."""
    rows = term.screen().splitlines()
    return "› pasted words" in rows and rows[rows.index("› pasted words") + 1].startswith("─")


def test_a_running_huge_command_shows_its_first_line_and_its_time(terminal, fake_llm):
    command = "\n".join(f"echo line{n} " + "x" * 150 for n in range(40)) + "\nsleep 30"
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}])
    term = terminal(columns=80, rows=24)
    term.type("go")
    term.press("Enter")
    screen = term.wait_for(" s)")
    running = [line for line in screen.splitlines() if "$ echo line0" in line]
    assert len(running) == 1 and running[0].endswith(" s)") and "(+40 lines)" in running[0], screen
    assert "echo line1 " not in screen and "echo line39" not in screen  # no row of the command's rest
    term.press("Escape")
    term.wait_for("stopped")
    assert "echo line39" in term.scrollback()  # the finished block keeps the whole command


def test_a_newline_in_an_at_completions_file_name_shows_escaped(terminal, fake_llm):
    (terminal.work / "nl\nname.txt").write_text("one line\n")
    (terminal.work / "nl name.txt").write_text("another file\n")
    term = terminal(columns=80, rows=24)
    term.type("@nl")
    # two names, told apart (the menu's rows are written one after the other: wait for both)
    term.wait_until(lambda: sorted(menu_rows(term.screen())) == ["nl name.txt", "nl\\nname.txt"], "both names")


def menu_rows(screen: str) -> list[str]:
    """The two rows under the editor holding `@nl` (the `@` menu's first rows), stripped; [] without it."""
    lines = screen.splitlines()
    if "› @nl" not in lines:
        return []
    return [line.strip() for line in lines[lines.index("› @nl") + 1:][:2]]


def test_an_at_file_attachment_shows_as_a_line_naming_it_and_the_model_gets_the_text(terminal, fake_llm):
    (terminal.work / "notes.txt").write_text("".join(f"note line {n}\n" for n in range(30)))
    fake_llm.set_script([{"text": "Read it."}])
    term = terminal(columns=80, rows=24)
    term.type("summarise @notes.txt please")
    term.press("Enter")
    term.wait_for("Read it.")
    history = term.scrollback()
    assert "summarise @notes.txt please" in history and "attached: notes.txt (30 lines)" in history, history
    assert "note line 7" not in history and "<file" not in history
    assert "note line 7" in user_texts(fake_llm.requests[0])[-1]


def test_an_approval_of_a_command_over_20000_characters_shows_and_prints_its_middle(terminal, fake_llm):
    command = "echo START; " + "; ".join(f"echo middle{n}" for n in range(2500)) + "; echo END"
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}, {"text": "Ran."}])
    term = terminal("--approvals", "ask", columns=80, rows=24)
    term.type("go")
    term.press("Enter")
    screen = term.wait_for("Allow once")
    mark = [line for line in screen.splitlines() if line.startswith("… ")]
    assert len(mark) == 1 and "characters (ctrl+o shows all)" in mark[0], screen
    hidden = int(mark[0].split(", ")[1].split()[0].replace(",", ""))
    assert hidden > len(command) - 20 * 80, mark  # the middle is counted: nothing left out unsaid
    term.press("C-o")
    term.wait_for("printed in full above")
    history = term.scrollback()
    assert "echo middle1250;" in history and "characters not shown" not in history  # the middle, printed
    term.press("Enter")
    term.wait_for("Ran.")


def test_closing_a_tall_dialog_puts_the_screen_back_as_it_was(terminal, fake_llm):
    fake_llm.set_script([{"text": "\n\n".join(f"Paragraph {n}." for n in range(6))}, {"text": "Fine."}])
    term = terminal(columns=80, rows=24)
    term.type("go")
    term.press("Enter")
    term.wait_for("Paragraph 5.")
    term.wait_until(lambda: "esc to interrupt" not in term.screen(), "the run to end")
    before = term.screen()
    term.type("/settings")
    term.press("Enter")
    term.wait_for("enter choose")  # 11 rows: taller than the rows left, the screen scrolled
    term.press("Escape")
    term.wait_until(lambda: term.screen() == before, "the screen as before the dialog (no blank rows under the "
                                                     "footer, the conversation's end in view)")
    term.type("more")
    term.press("Enter")
    term.wait_for("Fine.")
    term.wait_until(lambda: "esc to interrupt" not in term.screen(), "the run to end")
    history = term.scrollback()
    assert history.count("Paragraph 5.") == 1 and history.count("enter choose") == 0, history  # no copy, no frame
    rules = [n for n, line in enumerate(history.splitlines()) if line.endswith("─" * 80)]
    assert len(rules) == 2 and "\n\n\n" not in history.split("─" * 80)[0].strip("\n"), history


def test_a_fresh_screen_keeps_the_editor_under_the_header(terminal, fake_llm):
    term = terminal(columns=80, rows=24)
    rows = term.screen().splitlines()
    assert rows[4].startswith("─") and rows[5].startswith("›"), rows  # not pushed to the screen's bottom


def test_a_20x6_terminal_shows_the_running_call_and_then_the_answer(agent_env, fake_llm, tmp_path):
    from support.tmux_terminal import TmuxTerminal

    from support.tui import started

    command = "\n".join(f"echo line{n}" for n in range(10)) + "\nsleep 1"
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
                         {"text": "Done now."}])
    term = TmuxTerminal(agent_env, tmp_path, columns=20, rows=6)
    try:
        term.wait_for("fake-model")  # one footer line in a short terminal: the model, the cost
        started(term)
        assert term.screen().split("\n")[:-1][-1] == "$0.000 fake-model"
        term.type("go")
        term.press("Enter")
        term.wait_for("$ echo li…")  # the running call's own row, with its time, not its output
        screen = term.wait_for(" s)")
        row = [line for line in screen.splitlines() if "$ echo li…" in line]
        assert row and row[0].endswith(" s)") and "line9" not in screen, screen
        term.wait_for("Done now.")
        term.wait_until(lambda: "Done now." in term.screen() and "esc to" not in term.screen(),
                        "the answer on screen once the run ended")
    finally:
        term.close()
