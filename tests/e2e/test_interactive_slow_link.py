"""The interactive mode over a slow link: the terminal's answers reach the UI late (`support/slow_link.py`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from support.tmux_terminal import TmuxTerminal
from support.tui import needs_tmux

pytestmark = needs_tmux

SLOW_LINK = str(Path(__file__).parents[1] / "support" / "slow_link.py")


def test_a_late_cursor_report_leaves_the_start_up_text_on_screen(agent_env, fake_llm, tmp_path):
    # The first paint asks where the cursor is (row 1); its answer arrives after the warnings were printed
    # above the editor. Taken as current, it made the editor reserve every row from row 1 down: the screen
    # scrolled and the header and warnings went into the scrollback, leaving the editor alone at the top.
    (Path(agent_env["AGENT_FORGE_DIR"]) / "keybindings.json").write_text(json.dumps({"app.nope": "ctrl+x"}))
    work = tmp_path / "work"
    work.mkdir()
    term = TmuxTerminal(agent_env, work, prefix=(sys.executable, SLOW_LINK, "unknown action"))
    try:
        term.wait_for("unknown action 'app.nope'")
        term.type("still here")
        screen = term.wait_for("› still here")
        assert "unknown action 'app.nope'" in screen and "agent-forge" in screen, screen
        rows = screen.splitlines()
        editor = next(i for i, row in enumerate(rows) if row.startswith("› still here"))
        assert any("unknown action" in row for row in rows[:editor]), screen  # above the editor, not scrolled off
        term.press("C-c")  # clears the editor
        term.wait_until(lambda: "still here" not in term.screen(), "the editor cleared")
        term.press("C-d")
        assert term.exit_code() == 0
    finally:
        term.close()
