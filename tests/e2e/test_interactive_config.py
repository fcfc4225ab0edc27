"""End to end, in tmux: configuration problems the terminal UI meets at start. A hostile file name in its
start-up warnings stays one escaped line (keybindings.json, a theme, the files print mode reports too:
test_hostile_file_names.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from support.tui import needs_tmux, user_texts
from .test_hostile_file_names import EVIL, SHOWN, hostile_agent_dir

pytestmark = needs_tmux


def words(text: str) -> str:
    return " ".join(text.split())


def test_start_up_warnings_show_a_hostile_path_escaped_on_one_line(terminal, fake_llm, agent_env, tmp_path):
    agent = hostile_agent_dir(agent_env, tmp_path)
    (agent / "themes").mkdir()
    (agent / "themes" / "mine.json").write_text("{broken")
    settings = json.loads((agent / "settings.json").read_text())
    (agent / "settings.json").write_text(json.dumps({**settings, "theme": "mine"}))
    term = terminal(columns=250, rows=50)
    screen = term.wait_for("keybindings.json")
    shown = str(agent).replace(EVIL, SHOWN)
    assert screen.count("FORGED") == screen.count("\\nFORGED") > 0, screen  # never after a real line break
    flat = words(screen)  # rows a long warning was wrapped into, joined again
    for warning in (f"{shown}/keybindings.json: invalid JSON", f"{shown}/themes/mine.json:1: invalid JSON",
                    f"{shown}/auth.json: invalid JSON", f"Plugin not loaded: {shown}/plugins/broken.py: RuntimeError"):
        assert words(f"warning: {warning}") in flat, (warning, screen)
    coloured = term._tmux("capture-pane", "-p", "-e", "-t", "t")
    assert not re.search(r"\x1b\[31mRED", coloured), "the file name's escape coloured the screen"
    term.press("C-d")
    assert term.exit_code() == 0


def test_keybindings_that_type_text_crash_or_conflict_are_warned_once_and_typing_still_works(
        terminal, fake_llm, agent_env):
    keys = {"app.exit": "a", "app.model.cycle": "ctrl+é", "app.clear": "ctrl+t", "app.suspend": ["x", 5]}
    path = Path(agent_env["AGENT_FORGE_DIR"]) / "keybindings.json"
    path.write_text(json.dumps(keys))
    fake_llm.set_script([{"text": "Got it."}])
    term = terminal(columns=250, rows=40)  # ctrl+é made prompt_toolkit raise at start: the UI never came up
    screen = term.wait_for("app.clear: 'ctrl+t'")
    expected = [f"warning: {path}: app.exit: 'a' types text (bound to an action, it could no longer be typed); "
                "not bound; using ctrl+d (the default)",
                f"warning: {path}: app.model.cycle: unknown key 'ctrl+é'; using ctrl+p (the default)",
                f"warning: {path}: app.suspend needs a key or a list of keys; using ctrl+z (the default)",
                f"warning: {path}: app.clear: 'ctrl+t' was also app.thinking.toggle's key (its default); it now "
                "does app.clear only, and app.thinking.toggle has no key left"]
    flat = words(screen)  # a long temp path (xdist) wraps a warning between words
    assert all(words(warning) in flat for warning in expected) and flat.count("keybindings.json") == 4, screen
    term.type("abc")  # `a` on the empty editor is a letter, not app.exit
    term.wait_for("› abc")
    term.press("C-t")  # now app.clear: the editor is emptied
    term.wait_until(lambda: "› abc" not in term.screen(), "ctrl+t to clear the editor")
    term.type("a question")
    term.press("Enter")
    term.wait_for("Got it.")
    assert user_texts(fake_llm.requests[0])[-1] == "a question"
    assert term.scrollback().count("keybindings.json") == 4  # once each
    term.press("C-d")
    assert term.exit_code() == 0


def test_a_binding_on_an_editing_key_is_refused_and_the_key_keeps_editing(terminal, fake_llm, agent_env):
    """Bound, Backspace (or Ctrl+H, the same byte to a terminal) toggled tool output instead of deleting."""
    keys = {"app.tools.expand": "ctrl+h", "app.thinking.toggle": ["backspace", "ctrl+x"], "app.suspend": "left"}
    path = Path(agent_env["AGENT_FORGE_DIR"]) / "keybindings.json"
    path.write_text(json.dumps(keys))
    fake_llm.set_script([{"text": "Got it."}])
    term = terminal(columns=250, rows=40)
    screen = term.wait_for("app.suspend: 'left'")
    expected = [f"warning: {path}: app.tools.expand: 'ctrl+h' is Backspace to a terminal, the editor's key to "
                "delete the character before the cursor, which stays fixed; not bound to app.tools.expand; using "
                "ctrl+o (the default)",
                f"warning: {path}: app.thinking.toggle: 'backspace' is Backspace, the editor's key to delete the "
                "character before the cursor, which stays fixed; not bound to app.thinking.toggle",
                f"warning: {path}: app.suspend: 'left' is Left, the editor's key to move the cursor left, which "
                "stays fixed; not bound to app.suspend; using ctrl+z (the default)"]
    flat = words(screen)
    assert all(words(warning) in flat for warning in expected), screen
    term.type("abcd")
    term.wait_for("› abcd")
    term.press("BSpace")
    term.wait_for("› abc")
    term.press("C-h")
    term.wait_for("› ab")
    term.press("Left")
    term.type("X")
    term.wait_for("› aXb")
    term.press("Enter")
    term.wait_for("Got it.")
    assert user_texts(fake_llm.requests[0])[-1] == "aXb"
    term.press("C-d")
    assert term.exit_code() == 0
