"""Custom themes: `<agent dir>/themes/<name>.json`, chosen by `"theme": "<name>"` in settings.json.

The file is a JSON object (our own schema, docs/interactive.md "Themes"):

    {"base": "dark", "colors": {"prompt": "#ff8800 bold", "user": "on #202040", "code": "dracula"}}

`base` (`dark` or `light`, default `dark`) gives every colour the file leaves out. `colors` keys: the scrollback
styles `user`, `block`, `errorBlock` (rich style syntax: `bold #ff8800 on #202020`), `code` (a Pygments style
name for code blocks), and the live region's `thinking`, `tool`, `dim`, `spinner`, `queued`, `rule`, `footer`,
`prompt`, `dialogTitle`, `dialogChosen` (words among `bold italic underline reverse`, colours as `#rrggbb` or
`ansi<name>`, background as `bg:<colour>`). A file that cannot be read, is not such an object, or holds an
unknown key or a bad value gives one clear warning and the default theme; it never stops the start."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import stat
from pathlib import Path

from ...ai import json_wire
from ...coding.config_keys import unknown_key, unknown_keys
from ...coding.paths import path_text
from .theme import DARK, THEMES, Theme
from ...coding.errors import UnsafeFileError
from ...coding.safe_read import examine, found_text, is_file, read_prefix

SCROLLBACK_KEYS = {"user": "user", "block": "block", "errorBlock": "error_block"}
LIVE_KEYS = {"thinking": "thinking", "tool": "tool", "dim": "dim", "spinner": "spinner", "queued": "queued",
             "rule": "rule", "footer": "footer", "prompt": "prompt", "dialogTitle": "dialog-title",
             "dialogChosen": "dialog-chosen"}
MAX_THEME_BYTES = 64 * 1024
_LIVE_WORD = re.compile(r"(?:bold|italic|underline|reverse|noreverse|nobold|noitalic|"
                        r"(?:bg:|fg:)?(?:#[0-9a-fA-F]{6}|#[0-9a-fA-F]{3}|ansi[a-z]+|default))")


class ThemeError(ValueError):
    """Why a theme file cannot be used (the message names the file)."""


def themes_dir(agent_dir: Path) -> Path:
    return Path(agent_dir) / "themes"


def available_themes(agent_dir: Path) -> list[str]:
    """The built-in theme names, then the custom ones (file stems of `themes/*.json`), sorted."""
    try:
        custom = sorted(p.stem for p in themes_dir(agent_dir).glob("*.json") if p.stem not in THEMES and is_file(p))
    except OSError:
        custom = []
    return [*THEMES, *custom]


def resolve_theme(name: object, agent_dir: Path) -> tuple[Theme, str | None]:
    """(the theme called `name`, a warning or None). Unset, `system` → dark; a built-in name → it; else the
    custom file; a missing or bad file → dark with a warning saying why."""
    if not name or str(name).lower() in ("system", *THEMES):
        return THEMES.get(str(name).lower(), DARK), None
    if not isinstance(name, str) or not re.fullmatch(r"[\w.-]+", name):
        return DARK, f"theme {json.dumps(name)}: not a theme name; using the dark theme"
    path = themes_dir(agent_dir) / f"{name}.json"
    found = examine(path)  # one look: a FIFO would block the read, /dev/zero never end it, a loop is not missing
    if not (isinstance(found, os.stat_result) and stat.S_ISREG(found.st_mode)):
        return DARK, _unusable_theme(name, path, found, agent_dir)
    try:
        return load_theme_file(path), None
    except ThemeError as exc:
        return DARK, f"{exc}; using the dark theme"


def _unusable_theme(name: str, path: Path, found: os.stat_result | OSError | None, agent_dir: Path) -> str:
    """The warning for a custom theme `path` that is no regular file (`found`: what `examine` found there):
    missing, something else (what), or refused by the OS (its reason)."""
    if found is None:
        known = ", ".join(available_themes(agent_dir))
        return f"theme {name!r}: no such theme ({path_text(path)} does not exist; known: {known}); using the dark theme"
    return f"theme {name!r}: {path_text(path)} {found_text(found, ', not a regular file')}; using the dark theme"


def load_theme_file(path: Path) -> Theme:
    """The theme of `path` (see the module docstring). Raises ThemeError (also when `path` is, or has become,
    no regular file: `read_prefix` checks what it opens)."""
    try:
        raw = read_prefix(path, MAX_THEME_BYTES)
        if len(raw) > MAX_THEME_BYTES:
            raise ThemeError(f"{path_text(path)}: over {MAX_THEME_BYTES // 1024} KB, not a theme")
        data = json.loads(raw.decode("utf-8"))
    except UnsafeFileError as exc:
        raise ThemeError(f"{path_text(path)}: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ThemeError(f"{path_text(path)}: cannot be read ({exc})") from None
    except json.JSONDecodeError as exc:
        words, line, _ = json_wire.syntax_error(exc)
        raise ThemeError(f"{path_text(path)}:{line}: invalid JSON ({words})") from None
    if not isinstance(data, dict):
        raise ThemeError(f"{path_text(path)}: not a JSON object")
    unknown = unknown_keys(data, ("base", "colors", "name"))
    if unknown:
        raise ThemeError(f"{path_text(path)}: {unknown_key(unknown[0], ('base', 'colors'), list_known=True)}")
    base = data.get("base", "dark")
    if base not in THEMES:
        raise ThemeError(f"{path_text(path)}: base must be one of {', '.join(THEMES)}, not {json.dumps(base)}")
    colors = data.get("colors", {})
    if not isinstance(colors, dict):
        raise ThemeError(f"{path_text(path)}: colors must be an object")
    return _apply(path, THEMES[base], colors)


def _apply(path: Path, base: Theme, colors: dict[str, object]) -> Theme:
    fields: dict[str, object] = {"name": path.stem}
    live = dict(base.live)
    for key, value in colors.items():
        if not isinstance(value, str):
            raise ThemeError(f"{path_text(path)}: colors.{key} must be a string, not {json.dumps(value)}")
        if key in SCROLLBACK_KEYS:
            fields[SCROLLBACK_KEYS[key]] = _rich_style(path, key, value)
        elif key in LIVE_KEYS:
            live[LIVE_KEYS[key]] = _live_style(path, key, value)
        elif key == "code":
            fields["code"] = _code_style(path, value)
        else:
            known = [*SCROLLBACK_KEYS, "code", *LIVE_KEYS]
            raise ThemeError(f"{path_text(path)}: {unknown_key(key, known, what='colour', list_known=True)}")
    return dataclasses.replace(base, live=live, **fields)  # type: ignore[arg-type]


def _rich_style(path: Path, key: str, value: str) -> str:
    from rich.errors import StyleSyntaxError
    from rich.style import Style

    try:
        Style.parse(value)
    except StyleSyntaxError as exc:
        raise ThemeError(f"{path_text(path)}: colors.{key}: {exc}") from None
    return value


def _live_style(path: Path, key: str, value: str) -> str:
    bad = [word for word in value.split() if not _LIVE_WORD.fullmatch(word)]
    if bad:
        raise ThemeError(f"{path_text(path)}: colors.{key}: {bad[0]!r} is not a style word (bold, italic, underline, "
                         "reverse, #rrggbb, ansi<name>, bg:<colour>)")
    return value


def _code_style(path: Path, value: str) -> str:
    from pygments.styles import get_style_by_name
    from pygments.util import ClassNotFound

    try:
        get_style_by_name(value)
    except ClassNotFound:
        raise ThemeError(f"{path_text(path)}: colors.code: no Pygments style {value!r} (e.g. monokai, dracula, "
                         "default)") from None
    return value
