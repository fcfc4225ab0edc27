"""Writing into the scrollback above the live region while the terminal stays in raw mode.

prompt_toolkit's `run_in_terminal` switches the terminal back to cooked mode while its function runs (it is
made for handing the terminal to another program). A key pressed in that moment is taken by the terminal's
line discipline instead of the UI: Ctrl+D on an empty line is swallowed as end of file, Ctrl+C becomes a
SIGINT, other keys are echoed into the output. Text the UI writes itself needs none of that, so `write_above`
does what `run_in_terminal` does (wait for an earlier one, erase the live region, redraw it after, here in
one write to the terminal) without detaching the input or leaving raw mode. The external editor (Ctrl+G)
still goes through `run_in_terminal`.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Callable, ContextManager

from prompt_toolkit.application import get_app_or_none


async def write_above(write: Callable[[], None]) -> None:
    """Run `write` (which writes to the terminal) with the live region of the running application (the
    current one, as for `run_in_terminal`) erased before and drawn again after; with none running, just
    `write`. Chained after any `run_in_terminal` or `write_above` still in progress, as prompt_toolkit chains
    its own."""
    app = get_app_or_none()
    if app is None or not app.is_running:
        write()
        return
    previous = app._running_in_terminal_f
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    app._running_in_terminal_f = done
    try:
        if previous is not None:
            await previous
        _erase_write_draw(app, write)
    finally:
        if not done.done():
            done.set_result(None)


def write_above_now(write: Callable[[], None]) -> bool:
    """`write_above`, done at once, when nothing else writes above the live region (else False, nothing done):
    for a caller that must not let a drawing happen first (`resize.WidthRedraw.reprint`)."""
    app = get_app_or_none()
    if app is None or not app.is_running or app._running_in_terminal:
        return False
    previous = app._running_in_terminal_f
    if previous is not None and not previous.done():
        return False
    _erase_write_draw(app, write)
    return True


def _erase_write_draw(app: Any, write: Callable[[], None]) -> None:
    """Erase the live region, `write`, draw the region again: one write to the terminal."""
    with _one_flush(app.output):
        catch_up = getattr(app, "catch_up_resize", None)
        if callable(catch_up):
            catch_up()  # erase what the terminal shows now, not what was drawn before a resize (resize.py)
        app.renderer.erase()
        app._running_in_terminal = True  # no redraw in between
        try:
            write()
        finally:
            app._running_in_terminal = False
            app.renderer.reset()
            app._request_absolute_cursor_position()
            app._redraw()


def _one_flush(output: object) -> ContextManager[object]:
    """The terminal's `held()` (terminal.py) when it has one: the erase, the text and the redraw in one write."""
    held = getattr(output, "held", None)
    return held() if callable(held) else contextlib.nullcontext()
