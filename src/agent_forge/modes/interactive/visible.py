"""The editor's text as shown: invisible and reordering characters (a file name's U+202E, a zero-width space)
drawn as their escapes (`\\u202e`), as the scrollback shows them (`render.clean`), and grapheme clusters the
terminals would draw at another width than prompt_toolkit counts drawn as `graphemes.drawn` draws them (👩👩👧
for a joined family, `FR` for a flag). Display only: the buffer keeps the text as typed; the cursor moves over
an escape as over the one character it stands for (and over a cluster whole: `editor.ClusterBuffer`)."""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from prompt_toolkit.layout.processors import Processor, Transformation, TransformationInput

from ...ai.visible_text import MAYBE_SHOWN, SHOWN, escape_invisible
from .graphemes import changes


class ShowInvisible(Processor):
    """A prompt_toolkit input processor: each `SHOWN` character of a line becomes its escape, and each code
    point `graphemes.changes` names is drawn as it says (left out, or a flag's letter); both dimmed."""

    def apply_transformation(self, ti: TransformationInput) -> Transformation:
        fragments = ti.fragments
        text = "".join(fragment[1] for fragment in fragments)
        if text.isascii() and text.isprintable():  # most lines: nothing to escape or draw otherwise, cheaply
            return Transformation(fragments)
        shown = dict(changes(text))  # by position: whether a joiner is escaped depends on its neighbours
        if MAYBE_SHOWN.search(text):  # an escape wins: a joiner escaped is shown, not left out
            shown.update((match.start(), escape_invisible(match.group())) for match in SHOWN.finditer(text))
        return _replaced(fragments, shown) if shown else Transformation(fragments)


def _replaced(fragments: list, shown: dict[int, str]) -> Transformation:
    """`fragments` with the character at each index of `shown` drawn as its value (dimmed; "" leaves it
    out), and the cursor's mapping between the source's and the display's positions. Split only where
    something is replaced: a long line costs a few slices, not a fragment a character."""
    points = sorted(shown)
    shifts, shift = [], 0  # shifts[k]: how much longer the display is than the source after points[k]
    for index in points:
        shift += len(shown[index]) - 1
        shifts.append(shift)
    out: list[tuple[str, str]] = []
    start = 0
    for fragment in fragments:
        style, text = fragment[0], fragment[1]
        at = start
        for index in points[bisect_left(points, start):bisect_left(points, start + len(text))]:
            out += [(style, text[at - start:index - start]), (f"{style} class:dim", shown[index])]
            at = index + 1
        out.append((style, text[at - start:]))
        start += len(text)

    def to_display(position: int) -> int:
        before = bisect_left(points, position)  # replacements before `position` move it
        return position + (shifts[before - 1] if before else 0)

    def to_source(position: int) -> int:
        return max(0, bisect_right(range(start + 1), position, key=to_display) - 1)

    return Transformation(out, source_to_display=to_display, display_to_source=to_source)
