"""End to end: the seventh round of interactive-mode rough edges (issue 12) in a real terminal (tmux) against
the loopback model server: a 3-row approval question keeps the highlighted option in view and cuts its title; a
terminal under 20 columns gets blocks at its own width (no mid-word breaks); `/login` shows a pasted two-line key
as one row of `*`s."""

from __future__ import annotations

import pytest

from support.tui import needs_tmux

pytestmark = needs_tmux

LONG_COMMAND = "echo " + " ".join(f"arg{n}" for n in range(400))


@pytest.mark.parametrize("columns", [80, 10])
def test_a_three_row_approval_shows_the_highlighted_option(terminal, fake_llm, columns):
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": LONG_COMMAND}}]},
                         {"text": "Done."}])
    term = terminal("--approvals", "ask", columns=80, rows=24)
    term.resize(columns, 3)
    term.type("x")
    term.press("Enter")
    term.wait_for_all("(1/", "→")
    term.press("Down")
    term.wait_for_all("(2/", "→")  # the highlight's move shows
    term.press("Escape")


def test_a_ten_column_terminal_gets_blocks_ten_columns_wide(terminal, fake_llm):
    fake_llm.set_script([{"text": "Short answer with a few words"}])
    term = terminal(columns=80, rows=24)
    term.resize(10, 6)
    term.wait_for_line("fake-model")  # the footer redrawn at 10 columns: the app has the new width
    term.type("hello")
    term.press("Enter")
    # The whole answer: while it streams, a 6-row live region shows only its last rows (no "Short" yet)
    term.wait_until(lambda: "Short" in (shown := term.scrollback()) and "words" in shown, "the answer")
    joined = term._tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "t")
    answer = joined[joined.index("Short"):].splitlines()[:4]
    assert all(len(row.rstrip()) <= 10 for row in answer), answer  # no row for the terminal to break
    assert "answer" in joined.split() and "Short" in joined.split(), answer  # whole words


def test_login_shows_a_pasted_two_line_key_as_one_row(terminal, fake_llm, tmp_path):
    term = terminal(columns=80, rows=24)
    term.type("/login fake")
    term.press("Enter")
    term.wait_for_line("API key for fake")
    source = tmp_path / "key.txt"
    source.write_text("sk-one\nsk-two")
    term._tmux("load-buffer", "-b", "k", str(source))
    term._tmux("paste-buffer", "-p", "-b", "k", "-t", "t")
    screen = term.wait_for("› *")
    rows = screen.splitlines()
    below = rows[[row.startswith("› *") for row in rows].index(True) + 1]
    assert "*" not in below, screen  # the next row is the rule or empty, not a second row of stars
    assert "sk-" not in screen and "paste #" not in screen
    term.press("Enter")
    term.wait_for("nothing was saved for fake")  # the key still holds its line break, which a header refuses
