"""Terminal input whose bracketed pastes can never act as keys.

A terminal wraps a paste in `ESC[200~` ... `ESC[201~`; most do not filter those marks out of the pasted text
itself, so a crafted text holding `ESC[201~!rm -rf ~\\r` would end the paste early and have the rest read as
typed keys (Enter included). prompt_toolkit's parser ends a paste at the first end mark; `PasteSafeInput`
instead takes in everything the terminal has already sent (a paste arrives as one burst; a person's keys
never share a burst with it) and ends the paste at the *last* end mark of that burst. What follows a paste is
held until the input pauses (prompt_toolkit's flush after 50 ms): should the terminal's write have been cut
into bursts just after a forged end mark, a stray end mark (one without a start) arriving meanwhile shows
that the held text still belonged to the paste, and it never acts as keys. `pasted_text` then makes what a
paste holds inert: control characters but newline and tab become visible escapes (`\\x1b`), carriage returns
become newlines."""

from __future__ import annotations

import re

from prompt_toolkit.input.vt100 import Vt100Input
from prompt_toolkit.input.vt100_parser import Vt100Parser
from prompt_toolkit.key_binding import KeyPress
from prompt_toolkit.keys import Keys

START, END = "\x1b[200~", "\x1b[201~"
MAX_BURST_CHARS = 16 * 1024 * 1024
"""Reading what is already there stops here (the rest is read on the next round)."""
READ_CHARS = 65536
HOLD_BURSTS = 4
"""Bursts arriving one right after another that are held after a paste before they count as typed."""
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def pasted_text(data: str) -> str:
    """`data` as text to insert: `\\r\\n` and lone `\\r` become `\\n`; other control characters (ESC, C1, NUL)
    but tab are shown as escapes (`\\x1b`), so nothing pasted can act as a key or reach the terminal raw."""
    data = data.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", data)


class PasteSafeParser(Vt100Parser):
    """`Vt100Parser` whose paste ends at the last end mark of the data fed in one `feed_burst`, and which holds
    back what follows a paste (the rest of its burst, and up to `HOLD_BURSTS` more bursts arriving at once) until
    the input pauses (`flush`): a stray end mark in it shows the paste went on past a forged one."""

    def __init__(self, callback) -> None:  # type: ignore[no-untyped-def]
        super().__init__(callback)
        self._held: str | None = None  # after a paste: input not parsed yet
        self._held_bursts = 0

    def feed_burst(self, data: str) -> None:
        """Feed everything read in one round (the unit the rules above reason about)."""
        if self._held is None or self._in_bracketed_paste:
            self.feed(data)
            return
        data, self._held = self._held + data, None
        stray, start = data.find(END), data.find(START)
        if stray >= 0 and (start < 0 or stray < start):  # the paste went on past a forged end mark
            self._paste(data[:stray], data[stray + len(END):])
        elif start < 0 and self._held_bursts < HOLD_BURSTS:
            self._held, self._held_bursts = data, self._held_bursts + 1
        else:
            self.feed(data)

    def feed(self, data: str) -> None:
        if not self._in_bracketed_paste:
            super().feed(data)
            return
        searched_from = max(0, len(self._paste_buffer) - len(END))
        self._paste_buffer += data
        end = self._paste_buffer.rfind(END, searched_from)
        if end < 0:
            return
        content, rest = self._paste_buffer[:end], self._paste_buffer[end + len(END):]
        self._in_bracketed_paste, self._paste_buffer = False, ""
        self._paste(content, rest)

    def _paste(self, content: str, after: str) -> None:
        """Report the paste `content`; hold `after`, what came behind it."""
        self.feed_key_callback(KeyPress(Keys.BracketedPaste, content))
        self._held, self._held_bursts = after, 0

    def flush(self) -> None:
        """The input paused: what was held after a paste is typed input after all."""
        if self._held is not None:
            held, self._held = self._held, None
            super().feed(held)
        super().flush()


class PasteSafeInput(Vt100Input):
    """prompt_toolkit's terminal input with `PasteSafeParser`, reading each burst whole."""

    def __init__(self, stdin) -> None:  # type: ignore[no-untyped-def]
        super().__init__(stdin)
        self.vt100_parser = PasteSafeParser(lambda key_press: self._buffer.append(key_press))

    def read_keys(self) -> list[KeyPress]:
        data = self.stdin_reader.read()
        while data and len(data) < MAX_BURST_CHARS:
            more = self.stdin_reader.read(READ_CHARS)  # "" once nothing more is waiting
            if not more:
                break
            data += more
        self.vt100_parser.feed_burst(data)
        result, self._buffer = self._buffer, []
        return result
