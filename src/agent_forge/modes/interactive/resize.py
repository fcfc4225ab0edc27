"""Resizes of the inline UI: the live region erased as the terminal re-wrapped it, and the conversation
printed again when the width changed.

prompt_toolkit erases its inline region on a resize by moving the cursor up as many rows as it drew. Most
terminals (tmux, kitty, VTE, iTerm2, Windows Terminal, ...) re-wrap ("reflow") their lines when the window
narrows, so each drawn row wider than the new width now takes several rows: moving up by the old count
stops short and leaves the region's top (the streaming text, a separator) behind. `InlineApplication` moves
up by the re-wrapped count instead (terminals known not to re-wrap, xterm and rxvt, keep prompt_toolkit's).
That fixes the screen, not the scrollback: a re-wrapped region taller than the screen, or a terminal such as
tmux that keeps the blank rows under it, pushes part of the old frame into the scrollback, where no escape
sequence reaches it. So after a width change (once the resizing pauses, `REDRAW_DELAY_S`) the mode clears
the screen and the scrollback and prints the conversation again at the new width (`Scrollback`), as the
reference agent does: no stale frame or separator stays, and every block is wrapped for the new width.
"""

from __future__ import annotations

import asyncio
import math
import os
from collections import deque
from typing import Any, Callable

from prompt_toolkit.application import Application

from .above import write_above, write_above_now
from .cpr import InOrderRenderer

REDRAW_DELAY_S = 0.15
"""A width change redraws the conversation once no further resize came for this long (a drag sends many)."""
REDRAW_LIMIT = 2000
"""Printed groups kept for a redraw; older ones are not printed again (a note says so)."""
CLEAR_ALL = "\x1b[H\x1b[2J\x1b[3J"
"""Cursor home, erase the screen, erase the scrollback (xterm's `ED 3`, which tmux and most terminals know)."""


def terminal_reflows() -> bool:
    """False for terminals that cut lines on a resize instead of re-wrapping them (xterm sets
    `XTERM_VERSION`; rxvt's TERM names it); True for every other (today's common terminals re-wrap)."""
    return not (os.environ.get("XTERM_VERSION") or os.environ.get("TERM", "").startswith("rxvt"))


def rows_above_cursor(screen: Any, cursor_x: int, cursor_y: int, columns: int) -> int:
    """How many terminal rows the drawn `screen`'s rows above the cursor take at `columns` once re-wrapped,
    plus the cursor's own row's wrapped part before `cursor_x` (each drawn row is one terminal line)."""
    columns = max(columns, 1)
    rows = sum(max(1, math.ceil(_used_cells(screen, y) / columns)) for y in range(cursor_y))
    return rows + cursor_x // columns


def _used_cells(screen: Any, y: int) -> int:
    """The drawn row's width up to its last visible character (what the terminal keeps of the line)."""
    row = screen.data_buffer.get(y) or {}
    ends = [x + max(char.width, 1) for x, char in row.items() if char.char != " "]
    return max(ends, default=0)


class Scrollback:
    """The groups of renderables the mode printed, in order, to print them again at another width; with the
    text each was written as (`ansi`, at the `width` then), reused for a redraw at the same width."""

    def __init__(self, limit: int = REDRAW_LIMIT):
        self._groups: deque[tuple[list[Any], str, int]] = deque(maxlen=limit)
        self._dropped = False

    def record(self, renderables: list[Any], ansi: str = "", width: int = 0) -> None:
        self._dropped = self._dropped or len(self._groups) == self._groups.maxlen
        self._groups.append((renderables, ansi, width))

    def redraw(self, width: int) -> str:
        """What clears the screen and the scrollback, then prints every group again at `width` columns."""
        from .blocks import notice
        from .render import to_ansi

        note = [to_ansi([notice("(earlier output is not printed again after a resize)")], width)] \
            if self._dropped else []
        return CLEAR_ALL + "".join([*note, *(ansi if at == width and ansi else to_ansi(group, width)
                                             for group, ansi, at in self._groups)])


class WidthRedraw:
    """Called on each width change: once resizing pauses (`REDRAW_DELAY_S`), clears the terminal and prints the
    `scrollback` again at the `terminal`'s width; `spawn` runs a task of the mode, `forget_pending` drops the
    printed text not written yet (the redraw prints it)."""

    def __init__(self, scrollback: Scrollback, terminal: Any, spawn: Callable[[Any], asyncio.Task],
                 forget_pending: Callable[[], None]):
        self._scrollback, self._terminal, self._spawn, self._forget = scrollback, terminal, spawn, forget_pending
        self._task: asyncio.Task | None = None

    def __call__(self) -> None:
        if self._task is not None:
            self._task.cancel()
        self._task = self._spawn(self._redraw())

    def reprint(self) -> None:
        """Clear and print the conversation again now, then draw the live region (at the same width the text
        kept is written again): a dialog taller than the free rows, closed, left blank rows under the footer
        and the conversation's end in the scrollback; printed again, the screen ends with the conversation
        and the live region under it, and the scrollback holds it once. In one write, so no frame with the
        blank rows is seen; after a redraw on its way, or a write above still going on, when there is one."""
        if self._task is not None and not self._task.done():
            return
        if not write_above_now(self.write_all):
            self._task = self._spawn(self._redraw(0.0))

    def write_all(self) -> None:
        """Clear the screen and the scrollback and print the conversation again, the text not written yet
        included (it was recorded when printed): for a caller that erased the live region first."""
        self._forget()
        self._terminal.write(self._scrollback.redraw(self._terminal.columns()))

    async def _redraw(self, delay_s: float = REDRAW_DELAY_S) -> None:
        await asyncio.sleep(delay_s)
        await write_above(self.write_all)


class InlineApplication(Application):  # type: ignore[type-arg]
    """An `Application` whose resize erases the live region as the terminal re-wrapped it and, when the width
    changed, calls `on_width_change` (module docstring); and that calls `on_shrink` instead of a drawing that
    would leave blank rows under the live region after it had scrolled the screen (`blank_rows`); its renderer
    ignores stale cursor position reports (`cpr.py`)."""

    on_width_change: Callable[[], None] | None = None
    on_shrink: Callable[[], None] | None = None
    natural_height: Callable[[], int] | None = None  # the rows the live region's content takes now (pads: 0)
    _measuring = False  # `natural_height` is being computed: the pads count 0 rows in it
    overlay_open: Callable[[], bool] = staticmethod(lambda: False)  # type: ignore[assignment]
    _overlay_drawn = False  # the last drawing showed a dialog or a completion menu

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.renderer = InOrderRenderer(self._merged_style, self.output, full_screen=self.full_screen,
                                        mouse_support=self.mouse_support,
                                        cpr_not_supported_callback=self.cpr_not_supported_callback)

    def catch_up_resize(self) -> bool:
        """Handle a size change the renderer has not seen yet as `_on_resize` does; True when there was one.
        Why: the terminal's size changes before its SIGWINCH is handled, and a redraw (a streamed token) or an
        erase (`write_above`) in that gap saw the new size first. prompt_toolkit then erased by the rows it
        drew, not the re-wrapped ones, and `_on_resize`, finding the size already known, saw no width change:
        the old frame stayed in the scrollback, never printed again."""
        renderer = self.renderer
        last = renderer._last_size
        if not self._is_running or self._running_in_terminal:  # another program has the screen (Ctrl+G)
            return False
        if renderer._last_screen is None or last is None or last == self.output.get_size():
            return False
        self._on_resize()
        return True

    def _redraw(self, render_as_done: bool = False) -> None:
        if self.catch_up_resize() and not render_as_done:
            return  # `_on_resize` redrew
        if not render_as_done and self._would_leave_blank():
            self.on_shrink()  # type: ignore[misc]  (it prints the conversation again, then draws)
            return
        super()._redraw(render_as_done)

    def _would_leave_blank(self) -> bool:
        """Whether this drawing would leave blank rows under the live region that a scroll made (`blank_rows`):
        the rows of a dialog or a `/` / `@` menu that just closed, or a quarter of the screen (a 6-row
        terminal's answer pushed off by the spinner and a running call)."""
        closed, self._overlay_drawn = self._overlay_drawn, self.overlay_open()
        if self.on_shrink is None or self.natural_height is None or self._running_in_terminal:
            return False
        blank = self.blank_rows()
        return blank > 0 and ((closed and not self._overlay_drawn) or blank >= max(2, self.output.get_size().rows // 4))

    def blank_rows(self) -> int:
        """How many rows under the content the next drawing leaves blank that a scroll made: prompt_toolkit never
        shrinks the area it draws in (until the next print above resets it), so a dialog or menu taller than
        the rows left under the cursor scrolled the screen (the conversation's end went into the scrollback)
        and, once closed, left its rows blank under the footer."""
        drawn, reserved = self._drawn_and_reserved()
        return self._left_blank(drawn, reserved, lambda: max(self._content_rows(), reserved))

    def rows_left_blank_by(self, printed_rows: int) -> int:
        """How many rows under the footer printing `printed_rows` rows where the live region was (erased just
        before: `InOrderRenderer.erased`) would leave blank: the region had scrolled the screen (a dialog, a
        menu narrowed by typing, a long streamed text), so its top is that many rows above the screen's end,
        and the text and the region drawn under it take fewer."""
        (drawn, reserved), self.renderer.erased = self.renderer.erased, (0, 0)  # (asked once per erase)
        return self._left_blank(drawn, reserved, lambda: printed_rows + self._content_rows())

    def pad_rows(self) -> int:
        """Blank rows to draw above the live region's content: the rows it no longer fills of an area that had
        scrolled the screen (a streamed text that ended, a menu narrowed by typing), so the footer stays at
        the screen's bottom and what is left blank is between the conversation and the live region, until
        the next print above redraws the region under it; else 0. (Not `blank_rows`' count: that one
        leaves the rows of the reserved area that were the screen's own.)"""
        return 0 if self._measuring else self._left_blank(*self._drawn_and_reserved(), self._content_rows)

    def _left_blank(self, drawn: int, reserved: int, taken: Callable[[], int]) -> int:
        """The rows of an area drawn `drawn` rows tall that `taken()` rows (asked only then: it lays the content
        out) leave blank, when that area scrolled the screen: it took more than the `reserved` rows the renderer
        had under the cursor; else 0 (the rows under it are the screen's own, not a dialog's)."""
        if self.natural_height is None or not reserved or drawn <= reserved:
            return 0
        return max(0, min(drawn, self.output.get_size().rows) - taken())

    def _drawn_and_reserved(self) -> tuple[int, int]:
        """The rows the last drawing took, and those the renderer reserved under the cursor (its CPR answer)."""
        renderer = self.renderer
        return (renderer._last_screen.height if renderer._last_screen else 0), renderer._min_available_height

    def _content_rows(self) -> int:
        """`natural_height` without the pads (they are sized from it)."""
        self._measuring = True
        try:
            return self.natural_height()  # type: ignore[misc]
        finally:
            self._measuring = False

    def _on_resize(self) -> None:
        renderer = self.renderer
        screen, cursor = renderer._last_screen, renderer._cursor_pos
        last = renderer._last_size
        if self.on_width_change is not None and last is not None and last.columns != self.output.get_size().columns:
            self.on_width_change()
        if screen is None or not terminal_reflows() or self._running_in_terminal:  # (an external editor's screen)
            super()._on_resize()
            return
        up = rows_above_cursor(screen, cursor.x, cursor.y, self.output.get_size().columns)
        output = self.output
        output.write_raw("\r")
        output.cursor_up(up)
        output.erase_down()
        output.reset_attributes()
        output.enable_autowrap()
        output.flush()
        renderer.reset(leave_alternate_screen=False)
        self._request_absolute_cursor_position()
        self._redraw()
