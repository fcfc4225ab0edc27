"""Custom theme files: a good one overrides its base's colours; every kind of bad one is one warning naming the
file, and the dark theme."""

from __future__ import annotations

import json

import pytest

from agent_forge.modes.interactive.theme import DARK, LIGHT
from agent_forge.modes.interactive.theme_files import available_themes, resolve_theme


def write(tmp_path, name: str, text: str) -> None:
    (tmp_path / "themes").mkdir(exist_ok=True)
    (tmp_path / "themes" / f"{name}.json").write_text(text)


def test_a_theme_file_overrides_its_base(tmp_path):
    write(tmp_path, "mine", json.dumps({"base": "light", "colors": {
        "prompt": "ansired bold", "user": "on #30304a", "code": "dracula", "dialogChosen": "bg:#112233"}}))
    theme, warning = resolve_theme("mine", tmp_path)
    assert warning is None and theme.name == "mine"
    assert theme.live["prompt"] == "ansired bold" and theme.live["dialog-chosen"] == "bg:#112233"
    assert theme.user == "on #30304a" and theme.code == "dracula"
    assert theme.block == LIGHT.block and theme.live["footer"] == LIGHT.live["footer"]
    assert available_themes(tmp_path) == ["dark", "light", "mine"]


@pytest.mark.parametrize("name", [None, "", "dark", "system", "LIGHT"])
def test_built_in_names_need_no_file(tmp_path, name):
    theme, warning = resolve_theme(name, tmp_path)
    assert warning is None and theme in (DARK, LIGHT)


@pytest.mark.parametrize("text, problem", [
    ("{not json", "invalid JSON"),
    ("[1]", "not a JSON object"),
    ('{"colours": {}}', "unknown key 'colours'"),
    ('{"base": "neon"}', "base must be one of dark, light"),
    ('{"colors": []}', "colors must be an object"),
    ('{"colors": {"prompt": 7}}', "colors.prompt must be a string"),
    ('{"colors": {"prompt": "blink"}}', "'blink' is not a style word"),
    ('{"colors": {"user": "on notacolour"}}', "colors.user:"),
    ('{"colors": {"code": "nosuchstyle"}}', "no Pygments style 'nosuchstyle'"),
    ('{"colors": {"sparkle": "bold"}}', "unknown colour 'sparkle'"),
    ("\xff\xfe", "cannot be read"),
])
def test_a_bad_file_is_a_warning_and_the_dark_theme(tmp_path, text, problem):
    (tmp_path / "themes").mkdir()
    (tmp_path / "themes" / "bad.json").write_bytes(text.encode("latin-1") if "\xff" in text else text.encode())
    theme, warning = resolve_theme("bad", tmp_path)
    assert theme is DARK and warning is not None
    assert "bad.json" in warning and problem in warning and warning.endswith("using the dark theme")


def test_an_unknown_or_odd_name_is_a_warning(tmp_path):
    theme, warning = resolve_theme("nosuch", tmp_path)
    assert theme is DARK and "no such theme" in warning and "known: dark, light" in warning
    theme, warning = resolve_theme("../../etc/passwd", tmp_path)
    assert theme is DARK and "not a theme name" in warning
    theme, warning = resolve_theme(["dark"], tmp_path)
    assert theme is DARK and "not a theme name" in warning


def test_a_huge_file_is_refused(tmp_path):
    write(tmp_path, "big", json.dumps({"colors": {}, "name": "x" * 100_000}))
    theme, warning = resolve_theme("big", tmp_path)
    assert theme is DARK and "over 64 KB" in warning
