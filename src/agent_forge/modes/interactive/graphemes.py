"""Grapheme clusters in the parts prompt_toolkit draws: each cluster in a form every terminal gives the width
prompt_toolkit counts (`drawn`), and the cluster edges the editor's cursor and deletions keep to (`snapped`).

prompt_toolkit counts a cell per code point (`get_cwidth`, summed) and merges only zero-width code points into
the cell before them; terminals join more than that, and not alike. tmux 3.3a measured against `get_cwidth`
(`tests/modes/interactive/test_graphemes.py`), and what terminals that join every cluster (kitty, WezTerm)
give it:
  | cluster                     | prompt_toolkit | tmux 3.3a | joining |
  | 👩‍👩‍👧 (zero-width joiners)    | 6              | 2         | 2      |
  | 👍🏽 (skin-tone modifier)     | 4              | 4         | 2      |
  | 🇫🇷 (regional indicators)     | 4              | 2         | 2      |
  | ❤️ (variation selector 16)  | 1              | 1         | 2      |
A terminal that draws a cluster narrower than prompt_toolkit believes leaves a hole in the row and keeps
stale text where prompt_toolkit thinks it wrote (its screen diff then skips those cells); a wider one shifts
the rest of the row. So such a cluster is drawn as parts whose widths all agree: the joined emoji without
their joiners (👩👩👧, 6 columns), an emoji without its modifier or variation selector (👍, ❤: 2 and 1), a
flag as its two letters (`FR`). Only the drawing changes: the editor's text, and the message sent, stay as
typed; the scrollback (rich, which joins as tmux does for ZWJ sequences and flags) prints the text itself.
"""

from __future__ import annotations

import re
from typing import Any

from prompt_toolkit.utils import get_cwidth
from wcwidth import grapheme_boundary_before, iter_graphemes

from ...ai.visible_text import EMOJI

_MAYBE = re.compile("[\u200d\ufe0e\ufe0f\U0001f1e6-\U0001f1ff\U0001f3fb-\U0001f3ff]")
"""What may be drawn otherwise: a joiner, a variation selector, a regional indicator, a skin-tone modifier."""
_PICTOGRAPHS = re.compile(f"[{EMOJI}]")
"""Pictographs a joiner joins (`visible_text.EMOJI`, as `SHOWN` reads them)."""
_BETWEEN = "\ufe0e\ufe0f\u200d"
"""What a joiner looks past for the pictographs it joins."""
_INDICATOR_A = 0x1F1E6
_MODIFIERS = ("\U0001f3fb", "\U0001f3ff")


def changes(text: str) -> list[tuple[int, str]]:
    """Where `text` is drawn otherwise: (index, what is drawn for the code point there: "" to leave it out,
    or a letter), in order; [] for most text. Left out: a joiner between pictographs (the joins
    `visible_text.SHOWN` leaves unescaped; escaped ones are `\\u200d`, plain text), a variation selector, a
    skin-tone modifier after any character (alone at a line's start it is its own 2-column swatch
    everywhere); a regional indicator is drawn as its letter."""
    if text.isascii():  # the common case, at once (a regular expression's search costs 20 times more)
        return []
    found = []
    for match in _MAYBE.finditer(text):
        index, char = match.start(), match.group()
        if char == "\u200d":
            if _joins(text, index):
                found.append((index, ""))
        elif char in "\ufe0e\ufe0f":
            found.append((index, ""))
        elif _MODIFIERS[0] <= char <= _MODIFIERS[1]:
            if index and text[index - 1] != "\n":
                found.append((index, ""))
        else:
            found.append((index, chr(ord("A") + ord(char) - _INDICATOR_A)))
    return found


def _joins(text: str, index: int) -> bool:
    """Whether the joiner at `index` joins pictographs: one (or its variation selector) before it and one after
    it, the variation selectors and joiners between them aside (those are left out too: `©\\ufe0e\\u200d©`
    drawn must not be `©\\u200d©`, which a terminal would join)."""
    before, after = index - 1, index + 1
    if before >= 0 and text[before] == "\ufe0f":
        found = True
    else:
        while before >= 0 and text[before] in _BETWEEN:
            before -= 1
        found = before >= 0 and bool(_PICTOGRAPHS.match(text[before]))
    while after < len(text) and text[after] in _BETWEEN:
        after += 1
    return found and bool(_PICTOGRAPHS.match(text, after))


def drawn(text: str) -> str:
    """`text` as prompt_toolkit parts draw it (module docstring): `drawn("👩\\u200d👧 🇫🇷") == "👩👧 FR"`;
    most text is returned as is. Idempotent; never wider than `text` by `get_cwidth`."""
    found = changes(text)
    return _changed(text, 0, len(text), found) if found else text


def cells(text: str) -> int:
    """The columns `text` takes where prompt_toolkit draws it (as `drawn`), on every terminal."""
    return get_cwidth(drawn(text))


def widest(text: str) -> int:
    """The most columns a terminal may give `text` (one line): each code point its own cells, as terminals that
    join nothing draw it (`👍🏽` 4, `👩\u200d👧` 4: `get_cwidth`), and a variation selector 16 one more (`❤️` is 2
    where it is joined). rich measures such clusters joined, so a row it fills may be wider than the terminal."""
    return get_cwidth(text) + text.count("\ufe0f")


def cut(text: str, width: int) -> str:
    """The longest start of `text` made of whole clusters that takes at most `width` columns drawn (`cells`):
    the text itself, not its drawn form (a label stays the option it names)."""
    if text.isascii():  # most text: a column a character (control characters are escaped before)
        return text[:max(width, 0)]
    out, used = [], 0
    for cluster in iter_graphemes(text):
        used += cells(cluster)
        if used > width:
            break
        out.append(cluster)
    return "".join(out)


def drawn_fragments(fragments: list[Any]) -> list[Any]:
    """prompt_toolkit `(style, text, ...)` fragments with their text `drawn` (a cluster split over two
    fragments too): what every `FormattedTextControl` of the live region shows."""
    if all(fragment[1].isascii() or not _MAYBE.search(fragment[1]) for fragment in fragments):
        return fragments
    whole = "".join(fragment[1] for fragment in fragments)
    found = changes(whole)
    out, start = [], 0
    for fragment in fragments:
        end = start + len(fragment[1])
        out.append((fragment[0], _changed(whole, start, end, found), *fragment[2:]))
        start = end
    return out


def _changed(text: str, start: int, end: int, found: list[tuple[int, str]]) -> str:
    """`text[start:end]` with the `found` changes in that span made."""
    pieces, at = [], start
    for index, shown in found:
        if start <= index < end:
            pieces += [text[at:index], shown]
            at = index + 1
    return "".join(pieces) + text[at:end]


def cluster_start(text: str, position: int) -> int:
    """The start of the grapheme cluster holding `text[position]` (`position` itself at a cluster's start)."""
    if position <= 0 or position >= len(text) or _plain_between(text, position):
        return max(0, min(position, len(text)))
    return grapheme_boundary_before(text, position + 1)


def cluster_end(text: str, start: int) -> int:
    """The end of the grapheme cluster starting at `start` (a cluster's start, as `cluster_start` gives)."""
    if start >= len(text):
        return len(text)
    return start + len(next(iter_graphemes(text, start)))


def snapped(text: str, position: int, forward: bool) -> int:
    """`position` (an index into `text`, clamped to it) moved to the nearest cluster edge: to the end of the
    cluster it is inside when `forward`, else to its start; unchanged at an edge (the common case, cheaply)."""
    position = max(0, min(position, len(text)))
    start = cluster_start(text, position)
    if start == position:
        return position
    return cluster_end(text, start) if forward else start


def _plain_between(text: str, position: int) -> bool:
    """Whether a cluster edge is surely at `position` (0 < position < len(text)): two characters below
    U+0300 (the combining marks) always break, but for CR LF."""
    before, after = text[position - 1], text[position]
    return before < "\u0300" and after < "\u0300" and not (before == "\r" and after == "\n")
