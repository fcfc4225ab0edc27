"""End to end, in tmux: every hint on screen names the key keybindings.json gives its action (the spinner's
interrupt key, the refusals that say how to stop a run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.tmux_terminal import tmux_available
from .test_interactive import terminal  # noqa: F401  (the fixture, shared)

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed (.ci/run installs it)")


def words(text: str) -> str:
    return " ".join(text.split())


def test_hints_name_the_rebound_interrupt_key(terminal, fake_llm, agent_env):
    keys = {"app.interrupt": "alt+x", "app.followUp": "escape"}
    (Path(agent_env["AGENT_FORGE_DIR"]) / "keybindings.json").write_text(json.dumps(keys))
    fake_llm.set_script([{"text": "never arrives", "hang": True}, {"text": "The second answer."}])
    term = terminal(columns=120)
    term.wait_for("alt+x interrupt")  # the header
    term.type("start")
    term.press("Enter")
    screen = term.wait_for("alt+x to interrupt)")
    assert "esc to interrupt" not in screen, screen
    for command, refusal in (("/reload", "wait for the agent to finish (or press alt+x) before /reload"),
                             ("/tree", "/tree opens once it has finished (or press alt+x to stop it)")):
        term.type(command)
        term.press("Enter")
        term.wait_until(lambda: refusal in words(term.screen()), refusal)
    assert "press escape" not in term.screen()
    term.press("M-x")  # the rebound interrupt key aborts
    term.wait_for("aborted")
    term.wait_until(lambda: "to interrupt" not in term.screen(), "the spinner to stop")
    term.type("next")
    term.press("Enter")
    term.wait_for("The second answer.")
    term.press("C-d")
    assert term.exit_code() == 0


def test_an_unbound_interrupt_key_is_left_out_of_the_spinner(terminal, fake_llm, agent_env):
    (Path(agent_env["AGENT_FORGE_DIR"]) / "keybindings.json").write_text(json.dumps({"app.interrupt": []}))
    fake_llm.set_script([{"text": "never arrives", "hang": True}])
    term = terminal(columns=120)
    term.type("start")
    term.press("Enter")
    screen = term.wait_for("thinking… (")
    assert "to interrupt" not in screen, screen
    term.press("C-d")  # exits mid-run
    assert term.exit_code() == 0

