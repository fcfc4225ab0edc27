"""The footer under the editor: cwd and session name on one line; tokens, cost and context use on the left of
the next, provider/model and thinking level on its right; plugin status segments after them.

Built from `get_session_stats` / `get_state` when something changed (`Footer.refresh`), not on every redraw.
"""

from __future__ import annotations

import os
from typing import Any

from prompt_toolkit.utils import get_cwidth

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


class Footer:
    """Cached footer text for one session; `lines(width)` is cheap."""

    def __init__(self, session: Any):
        self._session = session
        self.status: dict[str, str] = {}  # plugin `setStatus` segments by key
        self.note = ""  # transient state: "retrying…", "compacting…"
        self._left = self._right = self._top = ""
        self.refresh()

    def refresh(self) -> None:
        """Recompute from the session's state and stats."""
        session = self._session
        state, stats = session.get_state(), session.get_session_stats()
        name = state.get("sessionName")
        self._top = short_cwd(session.cwd) + (f" · {name}" if name else "")
        tokens, usage = stats.get("tokens") or {}, stats.get("contextUsage")
        left = [f"↑{compact_count(tokens.get('input', 0))} ↓{compact_count(tokens.get('output', 0))}"]
        if tokens.get("cacheRead"):
            left.append(f"R{compact_count(tokens['cacheRead'])}")
        left.append(f"${stats.get('cost', 0.0):.3f}")
        if usage:
            percent = usage.get("percent")
            shown = "?" if percent is None else f"{percent:.1f}%"
            left.append(f"{shown}/{compact_count(usage['contextWindow'])}")
        self._left = " ".join(left)
        model = state.get("model")
        level = state.get("thinkingLevel") or "off"
        self._right = (f"({model['provider']}) {model['id']} • {level}" if model else "no model")

    def lines(self, width: int) -> list[str]:
        """The footer's lines fitted to `width` columns, cleaned: cwd, then stats and model on one line, or
        on two when the terminal is too narrow for both."""
        top = clean(self._top)
        left = " ".join([clean(self._left), *[clean(v) for v in self.status.values()], clean(self.note)]).strip()
        right = clean(self._right)
        gap = width - get_cwidth(left) - get_cwidth(right)
        if gap >= 2:
            return [fit(top, width), f"{left}{' ' * gap}{right}"]
        return [fit(top, width), fit(left, width), fit(right, width)]


