"""End to end: the live region keeps the footer on the screen's last row once the conversation fills the screen
(issue 12), in a real terminal (tmux) against the loopback model server: after the `/` menu closes, after a
short answer, at a run's end (the spinner is drawn in the rule above the editor, no row of its own), while a
paragraph break streams, and while typing narrows the menu (the editor stays where it was); the editor painted
before the session is built; a terminal that goes away mid-stream, and a closed stdin."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from support.doubles import running
from support.tui import ask, needs_tmux

pytestmark = needs_tmux

ROWS = 30


def long_answer(n: int) -> dict:
    return {"text": "\n\n".join(f"Paragraph {p} of answer {n}." for p in range(8))}


def rows(term) -> list[str]:
    """The screen's rows, top to bottom (tmux prints every row, blank ones as empty lines)."""
    return term.screen().split("\n")[:ROWS]


def footer_at_bottom(term) -> bool:
    """Whether the screen's last row is the footer's model line: no blank row under the footer."""
    return "fake-model •" in rows(term)[-1]


def full_screen(term, fake_llm, extra: list[dict]) -> None:
    """Two long answers (more than a screen), then the scripted `extra` answers."""
    fake_llm.set_script([long_answer(0), long_answer(1), *extra])
    ask(term, "question 0", "Paragraph 7 of answer 0.")
    ask(term, "question 1", "Paragraph 7 of answer 1.")
    term.wait_until(lambda: footer_at_bottom(term), "the footer on the last row")


def test_the_slash_menu_closing_and_a_short_answer_leave_no_blank_rows_under_the_footer(terminal, fake_llm):
    term = terminal(columns=100, rows=ROWS)
    full_screen(term, fake_llm, [{"text": "Short."}])
    term.type("/")
    term.wait_for("/hotkeys  the keyboard shortcuts")  # 8 rows of menu: the screen scrolled by them
    term.press("BSpace")
    term.wait_until(lambda: "/hotkeys  the keyboard shortcuts" not in term.screen(), "the menu to close")
    # the conversation's end in view, the footer back on the last row
    term.wait_until(lambda: "fake-model •" in (lines := rows(term))[-1] and lines[-7] == "Paragraph 7 of answer 1.",
                    "the footer back on the last row, the conversation's end above the editor")
    ask(term, "question 2", "Short.")
    term.wait_until(lambda: footer_at_bottom(term), "the footer on the last row")
    history = term.scrollback()
    assert history.count("Paragraph 7 of answer 1.") == 1 and "keyboard shortcuts" not in history, history


def test_a_run_ending_on_a_full_screen_leaves_no_blank_row_and_its_spinner_is_in_the_rule(terminal, fake_llm):
    term = terminal(columns=100, rows=ROWS)
    full_screen(term, fake_llm, [{"text": "Last one.", "hang": True}])
    term.type("question 2")
    term.press("Enter")
    term.wait_for("thinking…")
    # one capture judged whole: the spinner's row and the rows under it are written after "thinking…"
    term.wait_until(lambda: spinner_in_the_rule(lines := rows(term)) and "fake-model •" in lines[-1],
                    "the spinner in the rule above the editor, the footer on the last row")
    # the spinner says "thinking…" before the request reaches the server: a release before it would not hold
    fake_llm.wait_for(lambda: fake_llm.requests[2]["hanging"])
    fake_llm.release_hangs()
    term.wait_for("Last one.")
    term.wait_until(lambda: "esc to interrupt" not in "\n".join(lines := rows(term)) and "fake-model •" in lines[-1]
                    and lines[-7:-4] == ["Last one.", "", "─" * 100], "the run to end, its answer above the editor")


def spinner_in_the_rule(lines: list[str]) -> bool:
    """The row above the editor's `›` row is the rule, carrying the spinner, `thinking… (`, and the hint."""
    if "›" not in lines or lines.index("›") == 0:
        return False
    spinner = lines[lines.index("›") - 1]
    return (spinner.startswith(("⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏")) and "thinking… (" in spinner
            and "esc to interrupt" in spinner and spinner.endswith("───"))


def test_a_streaming_paragraph_break_shows_no_blank_row_under_the_text(terminal, fake_llm):
    # OpenAI events: the role chunk, "First ", "paragraph.\n\n", then the hang: the break has arrived, the
    # next paragraph not yet
    fake_llm.set_script([{"text": "First paragraph.\n\nSecond paragraph.", "hang_after": 3}])
    term = terminal(columns=80, rows=ROWS)
    term.type("go")
    term.press("Enter")
    term.wait_for("First paragraph.")
    term.wait_for("esc to interrupt")
    fake_llm.wait_for(lambda: fake_llm.requests[0]["hanging"])  # the server marks it just after its last event
    # right above the spinner's rule (one capture judged whole: the rows are written one after the other)
    term.wait_until(lambda: "›" in (lines := rows(term)) and lines[lines.index("›") - 2] == "First paragraph.",
                    "the text right above the spinner's rule")
    fake_llm.release_hangs()
    term.wait_for("Second paragraph.")


def test_typing_that_narrows_the_menu_keeps_the_editor_where_it_was(terminal, fake_llm):
    term = terminal(columns=100, rows=ROWS)
    full_screen(term, fake_llm, [])
    term.type("/")
    term.wait_for("/hotkeys  the keyboard shortcuts")
    at = rows(term).index("› /")
    term.type("ses")
    term.wait_until(lambda: "/hotkeys" not in "\n".join(lines := rows(term)) and lines[at] == "› /ses"
                    and lines[at + 1].startswith("  /session") and "fake-model •" in lines[-1],
                    "the menu to narrow, the editor where it was")


def test_a_session_key_typed_before_the_session_is_built_acts_once_it_is(agent_env, fake_llm, tmp_path):
    # The editor is painted before the session is built (app.py): Shift+Tab, typed at once, cycles the
    # thinking level once there is a session to cycle
    from support.tmux_terminal import TmuxTerminal

    from support.tui import started

    term = TmuxTerminal(agent_env, tmp_path, columns=100, rows=ROWS)
    try:
        term.press("BTab")  # before the CLI has even started: the terminal's cooked mode holds it
        term.wait_for("fake-model •")
        started(term)
        term.wait_for("fake-model • high")  # from medium, the default
        term.press("C-d")
        assert term.exit_code() == 0
    finally:
        term.close()



FIRST_PAINT_CHILD = """
import json, os, sys
from agent_forge.modes.interactive import resize
record, real = sys.argv[1], resize.InlineApplication._redraw
def first_paint(self, render_as_done=False):
    if not os.path.exists(record):
        open(record, "w").write(json.dumps(sorted(sys.modules)))
    return real(self, render_as_done)
resize.InlineApplication._redraw = first_paint
sys.argv = ["agent-forge", *sys.argv[5:]]  # after the record, the interpreter and `-m agent_forge`
from agent_forge.cli import main
raise SystemExit(main())
"""

AFTER_FIRST_PAINT = ("agent_forge.coding.agent_session", "agent_forge.coding.factory", "agent_forge.agent.agent",
                     "agent_forge.coding.compaction.controller", "agent_forge.coding.resources.loader",
                     "agent_forge.coding.tools.bash", "agent_forge.coding.tools.shell", "agent_forge.coding.tools.read",
                     "agent_forge.plugins.loader", "rich", "pygments", "markdown_it", "argparse")
"""What the editor's first paint does not wait for (`app.py`): the session, its agent, tools, resources and
compaction (built right after it), the plugin loader, rich (the first printed block imports it) and argparse
(`cli_fast.py` parses the command line)."""


def test_the_first_paint_comes_before_the_session_machinery_is_imported(agent_env, fake_llm, tmp_path):
    from support.tmux_terminal import TmuxTerminal

    from support.tui import started

    record, child = tmp_path / "modules.json", tmp_path / "first_paint.py"
    child.write_text(FIRST_PAINT_CHILD)
    term = TmuxTerminal(agent_env, tmp_path, columns=100, rows=ROWS, prefix=(sys.executable, str(child), str(record)))
    try:
        term.wait_for("fake-model •")
        started(term)
        term.press("C-d")
        assert term.exit_code() == 0
    finally:
        term.close()
    modules = json.loads(record.read_text())
    assert "agent_forge.modes.interactive.app" in modules  # the list is the real one
    late = sorted(name for name in modules if name.startswith(AFTER_FIRST_PAINT))
    assert not late, late


def test_the_terminal_going_away_mid_stream_ends_agent_forge_cleanly(agent_env, fake_llm, tmp_path):
    # Its input and output end together (the window closed, the pane killed): the hang-up's SIGHUP aborts the
    # run, and the answer that abort prints has no terminal to go to: dropped, not a traceback in a log file
    import subprocess

    from support.tmux_terminal import POLL_S, TmuxTerminal

    from support.tui import started

    fake_llm.set_script([{"text": "a long answer " * 20, "hang_after": 5}])
    code_file = tmp_path / "exit-code"
    wrapper = tmp_path / "exit_code.py"  # outlives the pane (ignores its hang-up) to record agent-forge's exit code
    wrapper.write_text("import signal, subprocess, sys\nchild = subprocess.Popen(sys.argv[2:])\n"
                       "signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
                       "open(sys.argv[1] + '.tmp', 'w').write(str(child.wait()))\n"
                       "import os; os.replace(sys.argv[1] + '.tmp', sys.argv[1])\n")
    term = TmuxTerminal(agent_env, tmp_path, columns=100, rows=ROWS,
                        prefix=(sys.executable, str(wrapper), str(code_file)))
    try:
        term.wait_for("fake-model •")
        started(term)
        term.type("go")
        term.press("Enter")
        term.wait_for("a long")
        pane = term._tmux("display-message", "-p", "-t", "t", "#{pane_pid}").strip()
        waiter = subprocess.run(["pgrep", "-P", pane], capture_output=True, text=True).stdout.split()
        agent = subprocess.run(["pgrep", "-P", waiter[0]], capture_output=True, text=True).stdout.split()
        assert len(agent) == 1, agent
        term._tmux("kill-pane", "-t", "t")
        end = time.monotonic() + 30
        while running(int(agent[0])):  # its exit, not its reaping: pid 1 reaps an orphan a second or two later
            assert time.monotonic() < end, "agent-forge still runs 30 s after its terminal went away"
            time.sleep(POLL_S)
        while not code_file.exists():  # the wrapper writes it as soon as it has reaped agent-forge
            assert time.monotonic() < end, "no exit code recorded"
            time.sleep(POLL_S)
    finally:
        term.close()
    assert code_file.read_text() == "129"  # as its hang-up ends it, never the input's EOFError (exit 1)
    temp = Path(agent_env["TMPDIR"])
    logs = [path.read_text() for path in temp.glob("agent-forge-stderr-*.log")]
    assert not logs, logs  # nothing written to stderr while the UI ran, so no log left
    sessions = Path(agent_env["AGENT_FORGE_DIR"]) / "sessions"
    files = [path for path in sessions.rglob("*") if path.is_file()]
    assert [path.suffix for path in files] == [".jsonl"], files  # no lock file left behind
    assert '"text":"go"' in files[0].read_text()


def test_a_closed_stdin_in_a_terminal_is_print_mode_and_says_what_is_missing(agent_env, fake_llm, tmp_path):
    # `agent-forge <&-` at a terminal: stdin is no terminal (the null device takes descriptor 0), so no UI
    # waits on it: print mode, which has no prompt to send
    from support.tmux_terminal import TmuxTerminal

    term = TmuxTerminal(agent_env, tmp_path, columns=100, rows=ROWS, prefix=("sh", "-c", 'exec "$@" <&-', "sh"))
    try:
        assert term.exit_code() == 1
        shown = term.screen()
        assert "agent-forge: No prompt given" in shown and "›" not in shown, shown
    finally:
        term.close()
    assert fake_llm.requests == []
