"""keybindings.json: a bad entry is reported (path, action, key) and never leaves its action without keys."""

from __future__ import annotations

import json

from agent_forge.modes.interactive.keymap import ACTIONS, load_keymap


def test_a_bad_key_keeps_the_default_or_the_entrys_valid_keys(tmp_path):
    path = tmp_path / "keybindings.json"
    path.write_text(json.dumps({"app.model.cycle": "hyper+k", "app.clear": ["ctrl+x", "bogus+y", "ctrl+shift+q"],
                                "app.exit": "ctrl+q", "app.thinking.toggle": [], "app.send": 5}))
    warnings: list[str] = []
    keymap = load_keymap(path, warnings)
    assert keymap["app.model.cycle"] == ACTIONS["app.model.cycle"][0]
    assert keymap["app.clear"] == ["ctrl+x"] and keymap["app.exit"] == ["ctrl+q"]
    assert keymap["app.thinking.toggle"] == [] and keymap["app.send"] == ["enter"]
    assert warnings == [
        f"{path}: app.model.cycle: unknown key 'hyper+k'; using ctrl+p (the default)",
        f"{path}: app.clear: unknown keys 'bogus+y', 'ctrl+shift+q'; using ctrl+x",
        f"{path}: app.send needs a key or a list of keys; using enter (the default)",
    ]
