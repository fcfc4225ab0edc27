"""The editor's text as shown: invisible and reordering characters (a file name's U+202E, a zero-width space)
drawn as their escapes (`\\u202e`), as the scrollback shows them (`render.clean`). Display only: the buffer
keeps the text as typed, and the cursor moves over an escape as over the one character it stands for."""

from __future__ import annotations

from bisect import bisect_right

from prompt_toolkit.layout.processors import Processor, Transformation, TransformationInput

from ...ai.visible_text import MAYBE_SHOWN, SHOWN, escape_invisible


class ShowInvisible(Processor):
    """A prompt_toolkit input processor: each `SHOWN` character of a line becomes its escape, dimmed."""

    def apply_transformation(self, ti: TransformationInput) -> Transformation:
        fragments = ti.fragments
        if not any(MAYBE_SHOWN.search(fragment[1]) for fragment in fragments):
            return Transformation(fragments)
        escaped = {match.start() for match in SHOWN.finditer("".join(fragment[1] for fragment in fragments))}
        shown: list[tuple[str, str]] = []
        starts: list[int] = []  # the display column of each source character
        column = 0
        for fragment in fragments:
            style, text = fragment[0], fragment[1]
            for char in text:
                if len(starts) in escaped:  # by position: whether a joiner is escaped depends on its neighbours
                    char = escape_invisible(char)
                    shown.append((f"{style} class:dim", char))
                else:
                    shown.append((style, char))
                starts.append(column)
                column += len(char)

        def to_display(position: int) -> int:
            return starts[position] if position < len(starts) else column + position - len(starts)

        def to_source(position: int) -> int:
            return max(0, bisect_right(starts, position) - 1)

        return Transformation(shown, source_to_display=to_display, display_to_source=to_source)
