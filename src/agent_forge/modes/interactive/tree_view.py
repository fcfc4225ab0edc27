"""`/tree`'s navigator: the session tree drawn with branch lines (`tree_layout.py`) in the live region, as a
dialog of `dialogs.Dialogs` that draws itself (`draw`) and takes its own keys (`OWN_KEYS`, `press`).

The editor's text searches (the tree keeps its shape: `tree_layout.layout`); Up/Down move, PageUp/PageDown
move a page, Tab / Shift+Tab cycle the filter, Ctrl+Left / Alt+Left fold the branch segment the selection is
in (or go up to the segment above), Ctrl+Right / Alt+Right unfold it (or go to the next segment), Enter
answers with the selected entry's id, Escape closes. The path from the root to the current leaf is bold and
the leaf's row says `(here)`. Drawing costs the rows shown, not the session's size: the layout is computed
once per filter, search and fold change."""

from __future__ import annotations

from typing import Any, Callable

from .dialogs import Dialog
from .render import fit
from .tree_layout import FILTER_NAMES, FILTERS, Row, TreeModel, layout

Fragments = list[tuple[str, str]]

OWN_KEYS = ("pageup", "pagedown", "tab", "s-tab", "c-left", "c-right", "escape left", "escape right")
"""The keys this dialog handles itself (prompt_toolkit names; `escape x` is Alt+x)."""
HINTS = ("↑↓ move · enter actions · tab filter · ctrl+←→ fold · type to search · esc close",
         "↑↓ enter · tab filter · ctrl+←→ · esc", "↑↓ enter tab esc")
"""The key hint under the tree, longest first: the first that fits the width is shown."""
ROLE_STYLES = {"user": "class:prompt", "assistant": "class:spinner", "shell": "class:queued"}
HINT_ROWS = 6
"""From this many rows on, the key hint has a row of its own."""


class TreeDialog(Dialog):
    """The navigator over `model`; `reply({"value": entry id})` on Enter, `reply({"cancelled": True})` on
    Escape. `filter_` starts as given; `select` (an entry id) starts selected, else the current leaf's row."""

    own_keys = OWN_KEYS

    def __init__(self, model: TreeModel, reply: Callable[[dict[str, Any]], None], *, filter_: str = "default",
                 select: str | None = None):
        super().__init__({"method": "select", "title": "Session tree", "options": []}, reply)
        self.model = model
        self.filter = filter_ if filter_ in FILTERS else "default"
        self.folded: set[str] = set()
        self.rows: list[Row] = []
        self._ids: list[str] = []
        self._key: tuple[str, str, frozenset[str]] | None = None
        self._selected = select or model.leaf_id
        self._top = 0
        self._needle = ""

    # -- the rows (Dialogs.move / submit use `matches` and `index`) -----------------------------------------
    def matches(self, needle: str) -> list[str]:
        """The ids of the shown rows for the search `needle` (laid out again only when something changed);
        `index` follows the selected entry (or its nearest shown ancestor) through the change."""
        self._needle = needle
        key = (self.filter, " ".join(needle.lower().split()), frozenset(self.folded))
        if key != self._key:
            if 0 <= self.index < len(self._ids):
                self._selected = self._ids[self.index]
            self._key = key
            self.rows = layout(self.model, filter_=self.filter, needle=needle, folded=self.folded)
            self._ids = [row.item.id for row in self.rows]
            self.index = self._position(self._selected)
        return self._ids

    def _position(self, entry_id: str | None) -> int:
        at = {entry_id: n for n, entry_id in enumerate(self._ids)}
        found = self.model.nearest(entry_id, at)
        if found is None:  # not under anything shown: the current leaf's row, else the first
            found = next((row.item.id for row in self.rows if row.here), None)
        return at.get(found, 0)

    @property
    def selected(self) -> Row | None:
        self.matches(self._needle)
        return self.rows[self.index] if 0 <= self.index < len(self.rows) else None

    # -- keys -----------------------------------------------------------------------------------------------
    def press(self, key: str) -> None:
        """One of `OWN_KEYS`."""
        self.matches(self._needle)
        if key in ("pageup", "pagedown"):
            page = max(1, self._page)
            self.index = max(0, min(len(self.rows) - 1, self.index + (page if key == "pagedown" else -page)))
        elif key in ("tab", "s-tab"):
            step = 1 if key == "tab" else -1
            self.filter = FILTERS[(FILTERS.index(self.filter) + step) % len(FILTERS)]
        elif key in ("c-left", "escape left"):
            self._fold_or_up()
        elif key in ("c-right", "escape right"):
            self._unfold_or_down()

    def _fold_or_up(self) -> None:
        """To the start of the selection's segment; on it, fold the segment; folded, to the segment above."""
        start = self._segment_start(self.index)
        row = self.rows[start] if self.rows else None
        if row is None:
            return
        if start != self.index:
            self.index = start
        elif not row.hidden and self._has_children(start):
            self.folded.add(row.item.id)
        elif start > 0:
            self.index = self._segment_start(self._parent_row(start))

    def _unfold_or_down(self) -> None:
        """Unfold the selected row; else to the next segment's start (or the last row)."""
        row = self.selected
        if row is None:
            return
        if row.item.id in self.folded:
            self.folded.discard(row.item.id)
            return
        self.index = next((n for n in range(self.index + 1, len(self.rows)) if self.rows[n].starts),
                          len(self.rows) - 1)

    def _segment_start(self, index: int) -> int:
        while index > 0 and not self.rows[index].starts:
            index -= 1
        return index

    def _has_children(self, index: int) -> bool:
        return index + 1 < len(self.rows) and self.rows[index + 1].parent == self.rows[index].item.id

    def _parent_row(self, index: int) -> int:
        """The row that row `index` hangs under (its segment's branch point), or 0."""
        parent = self.rows[index].parent
        return self._ids.index(parent) if parent is not None else 0

    # -- drawing --------------------------------------------------------------------------------------------
    @property
    def _page(self) -> int:
        return getattr(self, "_shown_rows", 10)

    def draw(self, needle: str, width: int, height: int) -> Fragments:
        """The tree in at most `height` rows of `width` columns: the title with the position and the filter,
        the rows around the selection (scrolled to keep it in view), the key hint when there is room. In one
        row, the selected row alone; in two, the title and it."""

        self.matches(needle)
        width, height = max(width, 1), max(height, 1)
        position = f" ({self.index + 1}/{len(self.rows)})" if self.rows else ""
        search = " · search" if needle.strip() else ""
        title = [("class:dialog-title", fit(f"Session tree{position} · {FILTER_NAMES[self.filter]}{search}",
                                            width) + "\n")]
        hint = next((h for h in HINTS if len(h) <= width), HINTS[-1])
        footer = [("class:dim", fit(hint, width) + "\n")] if height >= HINT_ROWS else []
        room = max(1, height - (1 if height > 1 else 0) - len(footer))
        self._shown_rows = room
        body = self._body(width, room)
        return (title if height > 1 else []) + body + footer

    def _empty_note(self) -> str:
        """Why no row is shown: a search that matches nothing, or a filter that nothing passes."""
        if self._needle.strip():
            return "  (no match: backspace widens the search, tab changes the filter)"
        if self.filter == "labelled":
            return "  (no entry has a label yet: tab changes the filter, then enter → Label this entry)"
        return "  (nothing to show with this filter: tab changes it)"

    def _body(self, width: int, room: int) -> Fragments:
        if not self.rows:
            return [("class:dim", self._empty_note()[:width] + "\n")]
        if self.index < self._top:
            self._top = self.index
        elif self.index >= self._top + room:
            self._top = self.index - room + 1
        self._top = max(0, min(self._top, len(self.rows) - room))
        out: Fragments = []
        for at in range(self._top, min(len(self.rows), self._top + room)):
            out.extend(row_fragments(self.rows[at], width, selected=at == self.index))
        return out


def row_fragments(row: Row, width: int, *, selected: bool) -> Fragments:
    """One row, cut to `width` columns: the selection mark, the gutter (deep ones keep their end behind `…`),
    the label, the role, the text (cut first, `…`), then what must stay (`▸ +3` for a fold, `(here)`)."""
    from .graphemes import cells

    item = row.item
    gutter = row.gutter
    room = max(4, width // 3)
    if len(gutter) > room:
        gutter = "…" + gutter[-(room - 1):]
    text_style = "bold" if row.on_path else ""
    if item.kind in ("tools", "result", "other"):
        text_style = "class:dim" + (" bold" if row.on_path else "")
    tail = (f" ▸ +{row.hidden}" if row.hidden else "") + (" (here)" if row.here else "")
    parts: list[tuple[str, str]] = [("class:dialog-chosen" if selected else "", "→ " if selected else "  "),
                                    ("class:dim", gutter)]
    if item.label:
        parts.append(("class:dialog-title", f"[{item.label}] "))
    if item.role:
        parts.append((ROLE_STYLES.get(item.kind, "class:dim"), f"{item.role}: "))
    fixed = sum(cells(text) for _, text in parts) + len(tail)
    parts.append((text_style, fit(item.text, max(0, width - fixed))))
    parts.append(("class:dim" if not row.here else "bold", tail))
    if selected:
        parts = [("class:dialog-chosen", text) for _, text in parts]
    return _fit_parts(parts, width, cells) + [("", "\n")]




def _fit_parts(parts: list[tuple[str, str]], width: int, cwidth: Callable[[str], int]) -> Fragments:
    """`parts` cut to `width` columns in all (when even the fixed parts do not fit a very narrow terminal)."""
    out: Fragments = []
    left = width
    for style, text in parts:
        if left <= 0:
            break
        shown = text if cwidth(text) <= left else fit(text, left)
        left -= cwidth(shown)
        out.append((style, shown))
    return out
