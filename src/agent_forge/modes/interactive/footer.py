"""The footer under the editor: cwd and session name on one line; tokens, cost and context use on the left of
the next, provider/model and thinking level on its right; plugin status segments after them.

Built from `get_session_stats` / `get_state` when something changed (`Footer.refresh`), not on every redraw.
"""

from __future__ import annotations

import os
from typing import Any

from ...coding.paths import path_text
from .graphemes import cells
from .render import clean, fit


def compact_count(n: float) -> str:
    """`950`, `1.2k`, `34k`, `1.5M`."""
    if n < 1000:
        return f"{n:.0f}"
    if n < 10_000:
        return f"{n / 1000:.1f}k"
    if n < 1_000_000:
        return f"{n / 1000:.0f}k"
    return f"{n / 1_000_000:.1f}M"


def short_cwd(cwd: str) -> str:
    """`cwd` with the home directory written `~`."""
    home = os.path.expanduser("~")
    return "~" + cwd[len(home):] if home not in ("", "/") and (cwd == home or cwd.startswith(home + os.sep)) \
        else cwd


COMPACT_ROWS = 10
"""A terminal with fewer rows gets a one-line footer."""


class Footer:
    """Cached footer text for one session; `lines(width)` is cheap. Until the session is built (`attach`) it
    shows what its prelude (`coding/prelude.py`) knows: the cwd, the session's name, the model and thinking
    level; the tokens, cost and context use come with the session."""

    def __init__(self, prelude: Any):
        self._session: Any = None
        self.status: dict[str, str] = {}  # plugin `setStatus` segments by key
        self.note = ""  # transient state: "retrying…", "compacting…"
        self._left: list[tuple[int, str]] = []
        self._top = self._heading(prelude.options.cwd, prelude.store.session_name)
        self._right = _model_segments(prelude.agent.model, prelude.agent.thinking_level)

    def attach(self, session: Any) -> None:
        """Show `session`'s state from now on (`refresh`)."""
        self._session = session
        self.refresh()

    def refresh(self) -> None:
        """Recompute from the session's state and stats (nothing before `attach`)."""
        session = self._session
        if session is None:
            return
        state, stats = session.get_state(), session.get_session_stats()
        self._top = self._heading(session.cwd, state.get("sessionName"))
        tokens, usage = stats.get("tokens") or {}, stats.get("contextUsage")
        left = [(3, f"↑{compact_count(tokens.get('input', 0))} ↓{compact_count(tokens.get('output', 0))}")]
        if tokens.get("cacheRead"):
            left.append((4, f"R{compact_count(tokens['cacheRead'])}"))
        left.append((1, f"${stats.get('cost', 0.0):.3f}"))
        if usage:
            percent = usage.get("percent")
            shown = "?" if percent is None else f"{percent:.1f}%"
            left.append((2, f"{shown}/{compact_count(usage['contextWindow'])}"))
        self._left = left
        self._right = _model_segments(state.get("model"), state.get("thinkingLevel"))

    @staticmethod
    def _heading(cwd: str, name: str | None) -> str:
        return short_cwd(cwd) + (f" · {name}" if name else "")

    def lines(self, width: int, rows: int = 24) -> list[str]:
        """The footer's lines fitted to `width` columns, cleaned: cwd, then stats and model on one line, or
        on two when the terminal is too narrow for both; a line still too long loses its least important
        segments whole, never a cut word, until one is left. Kept longest: the note (`press ctrl+c again to
        exit`) and the model id, then cost and thinking level, context use and provider, tokens, cache reads,
        plugin statuses. A terminal of fewer than `COMPACT_ROWS` `rows` gets one line, without the cwd: the
        rows are the work's (a 6-row terminal showed no spinner and no running call under a 3-line footer)."""
        if rows < COMPACT_ROWS:
            return [_fitted([(p, clean(t)) for p, t in [*self._left, *self._status(), (0, self.note),
                                                          *self._right]], width)]
        top = clean(self._top)
        left = [(p, clean(t)) for p, t in [*self._left, *self._status()]]
        left += [(0, clean(self.note))]  # a transient note says what the next key does: it stays longest
        right = [(p, clean(t)) for p, t in self._right]
        left_text, right_text = _joined(left), _joined(right)
        gap = width - cells(left_text) - cells(right_text)
        if gap >= 2:
            return [fit(top, width), f"{left_text}{' ' * gap}{right_text}"]
        return [fit(top, width), _fitted(left, width), _fitted(right, width)]


    def _status(self) -> list[tuple[int, str]]:
        return [(5, value) for value in self.status.values()]


def _model_segments(model: Any, level: str | None) -> list[tuple[int, str]]:
    """The right-hand segments: `(provider)`, the model id, `• level` (by priority), or `no model`."""
    if not model:
        return [(0, "no model")]
    return [(2, f"({path_text(model['provider'])})"), (0, path_text(model["id"])), (1, f"• {level or 'off'}")]


def _joined(parts: list[tuple[int, str]]) -> str:
    return " ".join(text for _, text in parts if text)


def _fitted(parts: list[tuple[int, str]], width: int) -> str:
    """`parts` ((priority, text), in display order) joined within `width` columns: the least important (the
    highest number; of equals the last) are left out until they fit; one left that is still too long is cut."""
    shown = [(priority, n, text) for n, (priority, text) in enumerate(parts) if text]
    while len(shown) > 1 and cells(" ".join(text for _, _, text in shown)) > width:
        shown.remove(max(shown))
    return fit(" ".join(text for _, _, text in shown), width)
