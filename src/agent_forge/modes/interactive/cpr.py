"""A renderer that ignores cursor position reports answering a question asked before the live region moved, and
keeps the size of the region it last erased.

prompt_toolkit asks the terminal where the cursor is (CPR, `ESC [ 6 n`) after each reset of its renderer, to
learn how many rows are free under the live region, and takes any answer as the answer to the latest question.
An answer that arrives late (a loaded machine, a slow SSH link) to a question asked before text was printed
above the region says the region starts higher than it does: the renderer then reserves every row from there
to the screen's bottom, the terminal scrolls by the rows printed, and the text just printed (the header, a
resumed conversation, warnings) goes into the scrollback, leaving blank rows under the editor. Terminals answer
in order (ECMA-48 DSR), so counting questions and answers tells which answer is stale.
"""

from __future__ import annotations

from prompt_toolkit.renderer import CPR_Support, Renderer


class InOrderRenderer(Renderer):
    """prompt_toolkit's `Renderer`, whose `report_absolute_cursor_row` takes only answers to questions asked
    since the last `reset` (a reset means the cursor moved: an erase, text written above, a resize)."""

    erased = (0, 0)  # the rows the last drawing took and those reserved under the cursor, when last erased
    _asked = 0  # questions sent, since the renderer was made
    _answered = 0  # answers received
    _current_from = 0  # answers past this count answer questions asked since the last reset

    def reset(self, _scroll: bool = False, leave_alternate_screen: bool = True) -> None:
        self._current_from = self._asked
        super().reset(_scroll, leave_alternate_screen)

    def erase(self, leave_alternate_screen: bool = True) -> None:
        """prompt_toolkit's erase, keeping the erased region's size (`erased`: the reset forgets it)."""
        self.erased = (self._last_screen.height if self._last_screen else 0), self._min_available_height
        super().erase(leave_alternate_screen)

    def request_absolute_cursor_position(self) -> None:
        waiting = len(self._waiting_for_cpr_futures)
        super().request_absolute_cursor_position()
        self._asked += max(0, len(self._waiting_for_cpr_futures) - waiting)  # one per question sent

    def report_absolute_cursor_row(self, row: int) -> None:
        self._answered += 1
        if self._answered > self._current_from:
            super().report_absolute_cursor_row(row)
            return
        self.cpr_support = CPR_Support.SUPPORTED  # the terminal answers, late: the row is where the cursor was
        if self._waiting_for_cpr_futures:
            self._waiting_for_cpr_futures.popleft().set_result(None)
