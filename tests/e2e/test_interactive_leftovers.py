"""End to end: leftovers of issues 10 and 12 in a real terminal (tmux) against the loopback model server:
`/reload` reads keybindings.json again (its warnings as at start, the new keys act, the hints name them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.tmux_terminal import tmux_available

from .test_interactive import terminal  # noqa: F401  (the fixture, shared)

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed (.ci/run installs it)")


def flat(term) -> str:
    """The screen with its rows joined (a long warning wraps at the edge)."""
    return "".join(term.screen().splitlines())


def test_reload_reads_keybindings_json_again(terminal, fake_llm, agent_env):
    term = terminal()
    path = Path(agent_env["AGENT_FORGE_DIR"]) / "keybindings.json"
    path.write_text(json.dumps({"app.exit": "ctrl+q", "app.clear": "ctrl+t", "app.nope": "ctrl+x"}))
    term.type("/reload")
    term.press("Enter")
    term.wait_until(lambda: "keys: app.clear ctrl+t (was ctrl+c), app.exit ctrl+q (was ctrl+d)" in flat(term)
                    and "unknown action 'app.nope'" in flat(term)
                    and "app.thinking.toggle has no key left" in flat(term), "the keys' line and the warnings")
    term.type("/qu")
    term.wait_for("also ctrl+q on an empty editor")  # the hint follows the new key
    for _ in range(3):
        term.press("BSpace")
    term.wait_until(lambda: "also ctrl+q" not in term.screen(), "the menu to close")
    term.press("C-d")  # no longer exits: typing still goes to the editor
    term.type("typed")
    term.wait_for("› typed")
    term.press("C-t")  # now app.clear
    term.wait_until(lambda: "› typed" not in term.screen(), "the editor cleared by ctrl+t")
    term.press("C-q")
    assert term.exit_code() == 0
