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


def load(tmp_path, entries: object) -> tuple[dict[str, list[str]], list[str]]:
    path = tmp_path / "keybindings.json"
    path.write_text(json.dumps(entries))
    warnings: list[str] = []
    keymap = load_keymap(path, warnings)
    return keymap, [warning.removeprefix(f"{path}: ") for warning in warnings]


def test_a_key_that_types_text_is_not_bound(tmp_path):
    keymap, warnings = load(tmp_path, {"app.exit": "a", "app.clear": ["shift+a", "ctrl+x"], "app.suspend": "space",
                                       "app.tools.expand": "é"})
    assert keymap["app.exit"] == ["ctrl+d"] and keymap["app.clear"] == ["ctrl+x"]
    assert keymap["app.suspend"] == ["ctrl+z"] and keymap["app.tools.expand"] == ["ctrl+o"]
    assert warnings == [
        "app.exit: 'a' types text (bound to an action, it could no longer be typed); not bound; using ctrl+d "
        "(the default)",
        "app.clear: 'shift+a' types text (bound to an action, it could no longer be typed); not bound; using ctrl+x",
        "app.suspend: 'space' types text (bound to an action, it could no longer be typed); not bound; using "
        "ctrl+z (the default)",
        "app.tools.expand: 'é' types text (bound to an action, it could no longer be typed); not bound; using "
        "ctrl+o (the default)",
    ]


def test_one_key_does_one_action(tmp_path):
    keymap, warnings = load(tmp_path, {"app.exit": "ctrl+t", "app.clear": "ctrl+t", "app.suspend": "tab",
                                       "app.model.cycle": "shift+enter"})
    assert keymap["app.exit"] == ["ctrl+t"] and keymap["app.thinking.toggle"] == []
    assert keymap["app.clear"] == ["ctrl+c"] and keymap["app.suspend"] == ["ctrl+z"]
    assert keymap["app.model.cycle"] == ["shift+enter"] and keymap["editor.newline"] == []
    assert warnings == [
        "app.clear: 'ctrl+t' is already app.exit's key (written earlier in the file); not bound to app.clear; "
        "using ctrl+c (the default)",
        "app.suspend: 'tab' is Tab, the editor's completion key, which stays fixed; not bound to app.suspend; "
        "using ctrl+z (the default)",
        "app.model.cycle: 'shift+enter' was also editor.newline's key (its default); it now does app.model.cycle "
        "only, and editor.newline has no key left",  # Shift+Enter and Ctrl+J are one key to a terminal
        "app.exit: 'ctrl+t' was also app.thinking.toggle's key (its default); it now does app.exit only, and "
        "app.thinking.toggle has no key left",
    ]


def test_junk_never_crashes_and_never_floods(tmp_path):
    from agent_forge.modes.interactive.keys import key_bindings

    junk = {"app.exit": "ctrl+é", "app.clear": "\x01", "app.suspend": "alt+\x00", "app.tools.expand": "",
            "app.model.cycle": ["ctrl+Ａ", None], "app.thinking.cycle": [[]], "x" * 1000: "ctrl+q",
            **{f"app.nope{i}": "ctrl+q" for i in range(500)}}
    keymap, warnings = load(tmp_path, junk)
    key_bindings(object(), keymap)  # prompt_toolkit takes every key left (`c-é` made it raise)
    assert {action: keys for action, keys in keymap.items() if keys != ACTIONS[action][0]} == {}
    assert warnings[:5] == ["app.exit: unknown key 'ctrl+é'; using ctrl+d (the default)",
                            "app.clear: unknown key '\\x01'; using ctrl+c (the default)",
                            "app.suspend: unknown key 'alt+\\x00'; using ctrl+z (the default)",
                            "app.tools.expand: unknown key ''; using ctrl+o (the default)",
                            "app.model.cycle needs a key or a list of keys; using ctrl+p (the default)"]
    assert f"unknown action {'x' * 40!r}"[:-1] in warnings[6] and len(warnings[6]) < 80
    assert len(warnings) == 101 and warnings[-1] == "407 more problems not listed (each is ignored, as those above are)"


def test_a_file_over_the_configuration_limit_keeps_the_default_keys(tmp_path):
    keymap, warnings = load(tmp_path, {"app.exit": ["ctrl+q"] * 150_000})  # 1.3 MB
    assert keymap["app.exit"] == ["ctrl+d"]
    assert warnings == ["larger than 1 MB (the limit for configuration files); the default keys are used"]
