"""End to end: a fresh-eyes tester's findings in the interactive mode (tmux, loopback model server): keys that
`/login` must refuse, a plugin `confirm` defaulting to No, counted words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.tmux_terminal import tmux_available

from .test_interactive import terminal  # noqa: F401  (the fixture, shared)

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed (.ci/run installs it)")


def login(term, key: str) -> None:
    term.type("/login fake")
    term.press("Enter")
    term.wait_for("API key for fake")
    if key:
        term.type(key)


def test_login_takes_no_line_break_and_refuses_unsendable_or_empty_keys(terminal, fake_llm, agent_env):
    auth = Path(agent_env["AGENT_FORGE_DIR"]) / "auth.json"
    term = terminal()
    login(term, "abc")
    term.press("C-j")  # a new line in the one-line key dialog: nothing
    term.type("def")
    term.wait_for("› ******")
    assert "enter send · esc cancel" in term.screen() and "ctrl+j new line" not in term.screen()
    term.press("Enter")
    term.wait_for("saved the API key for fake")
    assert json.loads(auth.read_text())["fake"]["key"] == "abcdef"
    login(term, "sk-漢")
    term.wait_for("› ****")
    term.press("Enter")
    term.wait_for("nothing was saved for fake")
    assert "non-ASCII character (character 4)" in " ".join(term.screen().split())
    assert json.loads(auth.read_text())["fake"]["key"] == "abcdef" and "漢" not in term.screen()
    login(term, "")
    term.press("Enter")
    term.wait_for("nothing was saved for fake: the key is empty")
    assert json.loads(auth.read_text())["fake"]["key"] == "abcdef"
