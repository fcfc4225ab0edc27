"""The two built-in colour themes (`dark`, the default, and `light`), chosen by the `theme` setting
(settings.json; `system` means dark; custom themes: `theme_files.py`). `NO_COLOR` turns colour off whatever
the theme (`render.color_allowed`, and prompt_toolkit honours it itself). `current` is read at each use, so
`use` before the first render."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Theme:
    """Rich styles of the scrollback blocks, the Markdown code theme, and the live region's prompt_toolkit
    style classes."""

    name: str
    user: str
    block: str
    error_block: str
    code: str
    live: dict[str, str] = field(default_factory=dict)


DARK = Theme("dark", user="on grey23", block="on #1e2a1e", error_block="on #2e1e1e", code="monokai", live={
                 "thinking": "italic #8a8a8a", "tool": "bold", "dim": "#8a8a8a", "spinner": "#c397d8",
                 "queued": "#7fb4ca", "rule": "#5a5a5a", "footer": "#8a8a8a", "prompt": "#7fb4ca bold",
                 "dialog-title": "bold #e0c070", "dialog-chosen": "reverse"})
LIGHT = Theme("light", user="on #e8e8f0", block="on #eaf3ea", error_block="on #f6e6e6", code="default", live={
                  "thinking": "italic #707070", "tool": "bold", "dim": "#707070", "spinner": "#7a3e9d",
                  "queued": "#1f5f8b", "rule": "#b0b0b0", "footer": "#606060", "prompt": "#1f5f8b bold",
                  "dialog-title": "bold #8a6200", "dialog-chosen": "reverse"})
THEMES = {"dark": DARK, "light": LIGHT}

current = DARK


def use(name: object) -> Theme:
    """Make `name` current: a `Theme` (a custom one: `theme_files.py`), or a built-in theme's name (dark for
    anything else); returns it."""
    global current
    if isinstance(name, Theme):
        current = name
    else:
        current = THEMES.get(str(name).lower(), DARK) if name else DARK
    return current
