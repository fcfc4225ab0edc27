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

from .above import write_above

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
    """The groups of renderables the mode printed, in order, to print them again at another width."""

    def __init__(self, limit: int = REDRAW_LIMIT):
        self._groups: deque[list[Any]] = deque(maxlen=limit)
        self._dropped = False

    def record(self, renderables: list[Any]) -> None:
        self._dropped = self._dropped or len(self._groups) == self._groups.maxlen
        self._groups.append(renderables)

    def redraw(self, width: int) -> str:
        """What clears the screen and the scrollback, then prints every group again at `width` columns."""
        from .blocks import notice
        from .render import to_ansi

        note = [to_ansi([notice("(earlier output is not printed again after a resize)")], width)] \
            if self._dropped else []
        return CLEAR_ALL + "".join([*note, *(to_ansi(group, width) for group in self._groups)])


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

    async def _redraw(self) -> None:
        await asyncio.sleep(REDRAW_DELAY_S)

        def write() -> None:
            self._forget()
            self._terminal.write(self._scrollback.redraw(self._terminal.columns()))

        await write_above(write)


class InlineApplication(Application):  # type: ignore[type-arg]
    """An `Application` whose resize erases the live region as the terminal re-wrapped it and, when the width
    changed, calls `on_width_change` (module docstring)."""

    on_width_change: Callable[[], None] | None = None

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
        super()._redraw(render_as_done)

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
