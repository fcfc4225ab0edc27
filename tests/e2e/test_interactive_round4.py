"""End to end: the fourth round of the TUI tester's findings (issue 12) in a real terminal (tmux) against the
loopback model server: a dialog never hides part of what it asks about (a long command shows its start and
end around a mark, Ctrl+O prints all of it); a tall dialog leaves no stale frame; a collapsed flood shows its
last line; `/hotkeys` uses the width; interrupted streams, aborted tools and refused calls say so."""

from __future__ import annotations

import pytest

from support.tui import needs_tmux, user_texts

pytestmark = needs_tmux

HIDDEN = "touch /tmp/x/HIDDEN"


def joined(text: str) -> str:
    return "".join(text.split())


@pytest.mark.parametrize("rows", [30, 12])
def test_a_long_command_shows_its_end_and_ctrl_o_prints_all_before_the_answer(terminal, fake_llm, rows):
    command = "echo " + "a" * 4000 + " ; " + HIDDEN
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}, {"text": "Fine."}])
    term = terminal("--approvals", "ask", rows=rows)
    term.type("go")
    term.press("Enter")
    term.wait_for_all("ctrl+o shows all", HIDDEN, "more lines")  # the end is on screen, the cut is marked
    term.press("C-o")
    term.wait_for_all("printed in full above", "Allow once")  # still asking
    history = term.scrollback()
    assert joined(command) in joined(history), history[-3000:]
    assert not fake_llm.requests[1:]  # nothing ran
    term.type("reject")
    term.press("Enter")
    term.wait_for("Fine.")


def test_a_sixty_line_heredoc_shows_start_end_and_how_many_lines_are_left_out(terminal, fake_llm):
    body = "\n".join(f"line {n}" for n in range(1, 61))
    command = f"cat <<'EOF'\n{body}\nEOF\n{HIDDEN}"
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}, {"text": "Fine."}])
    term = terminal("--approvals", "ask", rows=30)
    term.type("go")
    term.press("Enter")
    term.wait_for_all("ctrl+o shows all", "line 1", HIDDEN, "line 60")
    term.press("C-o")
    term.wait_for("printed in full above")
    assert all(f"line {n}\n" in term.scrollback() for n in range(1, 61))
    term.press("Escape")
    term.wait_for("Fine.")


def test_a_collapsed_flood_shows_its_last_output_line_then_the_notes(terminal, fake_llm):
    command = "seq 1 200000; head -c 1000000 /dev/zero | tr '\\0' x; echo; echo done"
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}, {"text": "Fine."}])
    term = terminal(columns=60)  # the note's long path wraps to more rows than the tail has
    term.type("go")
    term.press("Enter")
    screen = term.wait_for("Fine.")
    block = screen.split("$ seq")[1].split("Fine.")[0]
    rows = [row.strip() for row in block.splitlines()]
    assert "done" in rows and "[Showing last" in block, block
    assert rows.index("done") < next(n for n, row in enumerate(rows) if row.startswith("[Showing")), block


@pytest.mark.parametrize("columns", [100, 40])
def test_hotkeys_gives_command_names_the_width_and_never_cuts_them(terminal, fake_llm, columns):
    term = terminal(columns=columns)
    term.type("/hotkeys")
    term.press("Enter")
    from agent_forge.modes.interactive.commands import COMMANDS

    # the table's last row: the screen can be read while the terminal still draws the rows after /quit
    screen = term.wait_for(f"/{list(COMMANDS)[-1]}", where=term.scrollback)
    assert "re…" not in screen and "/approvals" in screen, screen
    if columns == 100:
        assert "/approvals [full|ask|read-only]" in screen, screen
        return
    lines = screen.splitlines()  # at 40 columns the name wraps inside its column (half the width), whole
    at = next(n for n, line in enumerate(lines) if line.startswith("/approvals"))
    assert "/approvals[full|ask|read-only]" in joined("".join(line[:20] for line in lines[at:at + 3])), screen


def test_escape_during_a_tool_call_says_aborted_like_other_aborts(terminal, fake_llm):
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 30"}}]},
                         {"text": "Next answer."}])
    term = terminal()
    term.type("go")
    term.press("Enter")
    term.wait_for("$ sleep 30 (")  # running
    term.press("Escape")
    screen = term.wait_for_line("aborted")  # its own line, not "Tool execution was aborted."
    block = screen.split("$ sleep 30")[1]
    assert "stopped ·" in block and block.index("stopped ·") < block.index("\naborted"), screen
    term.type("again")
    term.press("Enter")
    term.wait_for("Next answer.")
    assert [row.strip() for row in term.screen().splitlines()].count("aborted") == 1


def test_calls_refused_without_a_question_say_blocked_not_failed(terminal, fake_llm):
    fake_llm.set_script([
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi > made.txt"}}]},
        {"tool_calls": [{"name": "write", "arguments": {"path": "w.txt", "content": "x\n"}}]},
        {"text": "Could not."},
    ])
    term = terminal("--approvals", "read-only")
    term.type("go")
    term.press("Enter")
    screen = " ".join(term.wait_for("Could not.").split())
    assert "failed ·" not in screen and screen.count("read-only. blocked") + screen.count("run now. blocked") == 2, \
        screen
    assert not (terminal.work / "made.txt").exists() and not (terminal.work / "w.txt").exists()


def one_live_frame(history: str) -> None:
    """The pane's history holds one live region (its two rules; a run's spinner before the first one's line),
    under the conversation with no run of blank rows in it: nothing left of an earlier, taller frame."""
    rules = [line for line in history.splitlines() if line.endswith("─" * 30)]
    assert len(rules) == 2, history
    assert "\n\n\n" not in history.split(rules[0])[0].strip("\n"), history


def test_a_dialog_filling_a_short_terminal_leaves_no_stale_frame(terminal, fake_llm):
    fake_llm.set_script([{"text": "Hello there."}])
    term = terminal(rows=16)
    term.type("/settings")
    term.press("Enter")
    term.wait_for("Change which setting?")
    term.press("Escape")
    term.wait_until(lambda: "Change which setting?" not in term.screen(), "the dialog to close")
    term.type("hi")
    term.press("Enter")
    term.wait_for("Hello there.")
    one_live_frame(term.scrollback())


@pytest.mark.parametrize("size,command", [((40, 10), "echo short"),
                                          ((100, 30), "cat <<'EOF'\n" + "\n".join(f"line {n}" for n in range(60))
                                           + "\nEOF")])
def test_a_tall_approval_dialog_leaves_no_stale_frame(terminal, fake_llm, size, command):
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}, {"text": "Done."}])
    term = terminal("--approvals", "ask", columns=size[0], rows=size[1])
    term.type("go")
    term.press("Enter")
    term.wait_for("Allow once")
    term.press("Enter")
    term.wait_for("Done.")
    term.wait_until(lambda: "esc to interrupt" not in term.screen(), "the run to end")
    one_live_frame(term.scrollback())


def test_a_dropped_stream_that_is_retried_marks_its_partial_text(terminal, fake_llm, agent_env_factory):
    env = agent_env_factory(settings={"retry": {"maxRetries": 2, "baseDelayMs": 1}})
    fake_llm.set_script([{"text": "partial words of a dropped answer", "drop_after": 4}, {"text": "Full answer."}])
    term = terminal(env=env)
    term.type("go")
    term.press("Enter")
    screen = term.wait_for("Full answer.")
    lines = [line.strip() for line in screen.splitlines()]
    partial = next(n for n, line in enumerate(lines) if line.startswith("partial"))
    assert lines[partial + 1] == "(interrupted: this partial answer is left out; retrying)", screen
    assert "retrying in" in lines[partial + 2] and "partial words" not in str(fake_llm.requests[1]["body"]), screen


def test_the_editor_shows_invisible_characters_escaped_and_sends_them_as_typed(terminal, fake_llm):
    fake_llm.set_script([{"text": "Seen."}])
    term = terminal()
    term.type("open evil\u202etxt.exe and\u200bthis")
    screen = term.wait_for("› open evil\\u202etxt.exe and\\u200bthis")
    assert "\u202e" not in screen and "\u200b" not in screen, screen
    term.press("Left", "Left", "Left", "Left", "Left")  # over `this` and the escape, one character each
    term.type("X")
    term.wait_for("› open evil\\u202etxt.exe andX\\u200bthis")
    term.press("Enter")
    term.wait_for("Seen.")
    assert user_texts(fake_llm.requests[0])[-1] == "open evil\u202etxt.exe andX\u200bthis"


def test_in_a_tiny_terminal_ctrl_o_still_prints_the_command_the_question_has_no_room_for(terminal, fake_llm):
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": "echo one\n" + HIDDEN}}]},
                         {"text": "Fine."}])
    term = terminal("--approvals", "ask", rows=6)
    term.type("go")
    term.press("Enter")
    term.wait_for("Allow once")
    assert HIDDEN not in term.screen()  # no room for the message in 6 rows
    term.press("C-o")
    term.wait_until(lambda: HIDDEN in term.scrollback(), "the whole command printed above")
    term.press("Escape")
    term.wait_for("Fine.", where=term.scrollback)  # 6 rows: the live region fills the screen


CONFIRM_PLUGIN = '''
def setup(plugin):
    @plugin.command("wipe", description="asks")
    async def wipe(args, ctx):
        files = "\\n".join(f"file{n}.txt" for n in range(1, 81))
        sure = await ctx.ui.confirm("Delete these?", files + "\\nand /etc/LAST")
        ctx.ui.notify(f"sure={sure}")
'''


def test_a_plugin_confirm_with_a_long_message_shows_its_end_and_ctrl_o_prints_all(terminal, fake_llm, tmp_path):
    plugin = tmp_path / "wipe.py"
    plugin.write_text(CONFIRM_PLUGIN)
    term = terminal("-e", str(plugin), rows=20)
    term.type("/wipe")
    term.press("Enter")
    term.wait_for_all("ctrl+o shows all", "file1.txt", "and /etc/LAST", "more lines")
    term.press("C-o")
    term.wait_for("printed in full above")
    assert all(f"file{n}.txt\n" in term.scrollback() for n in range(1, 81))
    term.press("Escape")
    term.wait_for("sure=False")


def test_a_resumed_session_shows_a_rejected_call_as_it_was_shown_live(terminal, fake_llm):
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": "echo never"}}]},
                         {"text": "Rejected it."}])
    term = terminal("--approvals", "ask")
    term.type("go")
    term.press("Enter")
    term.wait_for("Allow once")
    term.type("reject")
    term.press("Enter")
    term.wait_for("Rejected it.")
    term.press("C-d")
    assert term.exit_code() == 0
    session = term.scrollback().split("agent-forge --session ")[1].split()[0]
    again = terminal("--session", session)
    # one capture may fall inside the first paint (tmux 3.3 has no synchronized output): wait for a whole one
    again.wait_until(lambda: "$ echo never rejected Rejected it." in " ".join(again.screen().split()),
                     "the rejected call shown as it was live")
    assert "The user rejected" not in again.scrollback()


def test_a_resumed_session_whose_run_was_aborted_in_a_tool_says_aborted(terminal, fake_llm):
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 30"}}]}])
    term = terminal()
    term.type("go")
    term.press("Enter")
    term.wait_for("$ sleep 30 (")
    term.press("Escape")
    term.wait_for_line("aborted")
    term.press("C-d")
    assert term.exit_code() == 0
    session = term.scrollback().split("agent-forge --session ")[1].split()[0]
    again = terminal("--session", session)
    again.wait_for_line("aborted")
    assert "stopped" in [row.strip() for row in again.screen().splitlines()]  # no duration: the file holds none
