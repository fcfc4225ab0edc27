"""End to end, in tmux: configuration problems the terminal UI meets at start. A hostile file name in its
start-up warnings stays one escaped line (keybindings.json, a theme, the files print mode reports too:
test_hostile_file_names.py)."""

from __future__ import annotations

import json
import re

import pytest

from support.tmux_terminal import tmux_available
from .test_hostile_file_names import EVIL, SHOWN, hostile_agent_dir
from .test_interactive import terminal  # noqa: F401  (the fixture, shared)

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed (.ci/run installs it)")


def warning_rows(screen: str) -> list[str]:
    return [row.strip() for row in screen.splitlines() if row.strip().startswith("warning:")]


def test_start_up_warnings_show_a_hostile_path_escaped_on_one_line(terminal, fake_llm, agent_env, tmp_path):
    agent = hostile_agent_dir(agent_env, tmp_path)
    (agent / "themes").mkdir()
    (agent / "themes" / "mine.json").write_text("{broken")
    settings = json.loads((agent / "settings.json").read_text())
    (agent / "settings.json").write_text(json.dumps({**settings, "theme": "mine"}))
    term = terminal(columns=250, rows=50)
    screen = term.wait_for("keybindings.json")
    shown = str(agent).replace(EVIL, SHOWN)
    assert not [row for row in screen.splitlines() if row.lstrip().startswith("FORGED")], screen
    rows = warning_rows(screen)
    for name in ("keybindings.json: invalid JSON", "themes/mine.json:1: invalid JSON", "auth.json: invalid JSON",
                 "plugins/broken.py: RuntimeError: plugin boom"):
        assert any(f"{shown}/{name}" in row for row in rows), (name, screen)
    coloured = term._tmux("capture-pane", "-p", "-e", "-t", "t")
    assert not re.search(r"\x1b\[31mRED", coloured), "the file name's escape coloured the screen"
    term.press("C-d")
    assert term.exit_code() == 0
