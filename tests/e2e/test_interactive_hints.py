"""End to end, in tmux: every hint on screen names the key keybindings.json gives its action (the spinner's
interrupt key, the refusals that say how to stop a run), and settings of the wrong type the UI reads are
reported and their default used (`hideThinkingBlock: "false"` keeps thinking hidden, with a warning)."""

from __future__ import annotations

import json
from pathlib import Path

from support.tui import needs_tmux

pytestmark = needs_tmux


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
    fake_llm.wait_for_requests(1)  # aborted before its request, the hanging answer would go to the next prompt
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


def test_a_wrong_typed_hide_thinking_block_is_reported_and_thinking_stays_hidden(terminal, fake_llm, agent_env):
    settings_path = Path(agent_env["AGENT_FORGE_DIR"]) / "settings.json"
    settings = json.loads(settings_path.read_text()) if settings_path.exists() else {}
    settings_path.write_text(json.dumps({**settings, "hideThinkingBlock": "false", "quietStartup": "true"}, indent=1))
    fake_llm.set_script([{"thinking": "secret chain of thought", "text": "The answer."}])
    term = terminal(columns=200, rows=40)
    term.wait_for("hideThinkingBlock must be")
    flat = words(term.screen())
    for key in ("hideThinkingBlock", "quietStartup"):
        assert words(f"{settings_path}:") in flat and f'{key} must be true or false, got "' in flat, flat
    assert "agent-forge v" in term.screen(), "quietStartup's default (false) shows the header"
    term.type("think")
    term.press("Enter")
    term.wait_for("The answer.")
    assert "secret chain of thought" not in term.scrollback(), "hideThinkingBlock's default (true) hides it"
    term.press("C-d")
    assert term.exit_code() == 0


def test_hotkeys_rows_name_the_keys_the_keymap_gives(terminal, fake_llm, agent_env):
    """app.clear's row once said "abort as escape does" whatever key app.interrupt had."""
    keys = {"app.interrupt": "ctrl+c", "app.clear": ["escape"]}
    (Path(agent_env["AGENT_FORGE_DIR"]) / "keybindings.json").write_text(json.dumps(keys))
    term = terminal(columns=160, rows=50)
    term.wait_for("ctrl+c interrupt")  # the header
    term.type("/hotkeys")
    term.press("Enter")
    term.wait_for("the keyboard shortcuts")
    screen = words(term.wait_for("press twice to exit"))
    assert "escape clear the editor; on an empty editor abort as ctrl+c does, and press twice to exit" in screen
    assert "as escape does" not in screen, screen
    term.press("C-d")
    assert term.exit_code() == 0
