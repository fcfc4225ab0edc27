"""Terminal input whose bracketed pastes can never act as keys.

A terminal wraps a paste in `ESC[200~` ... `ESC[201~`; most do not filter those marks out of the pasted text
itself, so a crafted text holding `ESC[201~!rm -rf ~\\r` would end the paste early and have the rest read as
typed keys (Enter included). The terminal cannot tell a forged end mark from its own, so `PasteSafeParser`
goes by when input arrives instead (a terminal writes a paste at once; a person's next key comes later):

- a paste ends at the *last* end mark of what the terminal sent at once (one `feed_burst`);
- when that burst ends with the mark, the paste is complete there: the next read is judged by the rules
  below, so a key pressed right after a paste (within the key timeout, 50 ms) is a key of its own;
- text after the last end mark *in the same burst* belongs to the paste until the input pauses (`flush`: no
  input for the key timeout and none waiting), Enter included (a newline): a read can end just after a forged
  mark, and what the terminal sent with it is the paste's rest; only a new start mark ends it earlier;
- for `TAIL_S` after a paste, a burst of more than one key is pasted text too, the rest of a paste whose
  terminal stalled (a person types one key a burst; what follows it is read as usual; a cursor position report
  read with it is no key: it goes to the renderer, never into the paste); and at any time a burst
  holding an end mark before any start mark is taken in as the rest of a paste (a person cannot type one);
- a mouse report while mouse reporting is off (a pasted `ESC[0m` parses as one) is dropped with a log line,
  as is anything the key parser fails on: neither reaches a key handler.

So nothing is submitted without an Enter key of its own. `pasted_text` then makes what a paste holds inert:
control characters but newline and tab become visible escapes (`\\x1b`), carriage returns become newlines."""

from __future__ import annotations

import re
import select
import sys
import time

from prompt_toolkit.input.vt100 import Vt100Input
from prompt_toolkit.input.vt100_parser import Vt100Parser
from prompt_toolkit.key_binding import KeyPress
from prompt_toolkit.keys import Keys

START, END = "\x1b[200~", "\x1b[201~"
MAX_BURST_CHARS = 16 * 1024 * 1024
"""Reading what is already there stops here (the rest is read on the next round)."""
READ_CHARS = 65536
TAIL_S = 1.0
"""How long after a paste a burst of several keys still counts as its stalled rest (seconds)."""
ONE_KEY_CHARS = 16
"""Longer bursts are more than one key (the longest key sequences are about 10 characters)."""
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CURSOR_REPORT = re.compile(r"\x1b\[\d+;\d+R")
"""The terminal's answer to a cursor position request (`ESC [ row ; column R`): neither typed nor pasted."""


def pasted_text(data: str) -> str:
    """`data` as text to insert: `\\r\\n` and lone `\\r` become `\\n`; other control characters (ESC, C1, NUL)
    but tab are shown as escapes (`\\x1b`), so nothing pasted can act as a key or reach the terminal raw."""
    data = data.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", data)


class PasteSafeParser(Vt100Parser):
    """`Vt100Parser` following the rules above; `feed_burst` takes everything read in one round, `flush` says
    the input paused. `clock` gives seconds (monotonic)."""

    def __init__(self, callback, clock=time.monotonic) -> None:  # type: ignore[no-untyped-def]
        self._pasted: list[str] | None = None  # the paste being taken in after its (last) end mark, marks kept
        self._clock = clock
        self._reported_at = float("-inf")
        super().__init__(lambda key_press: _checked(key_press, callback))

    def feed_burst(self, data: str) -> None:
        """Feed everything read in one round (the unit the rules above reason about)."""
        before, mark, rest = data.partition(START)
        if self._in_bracketed_paste:
            self.feed(data)
        elif self._pasted is not None or END in before:
            self._take_in(before, mark + rest)
        elif self._stalled_tail(before):  # text, but what comes next may be keys: the paste itself has ended
            self._take_in(_CURSOR_REPORT.sub("", before), "")
            self._report()
            self.feed("".join(_CURSOR_REPORT.findall(before)) + mark + rest)  # the renderer waits for its reports
        else:
            self.feed(data)
        self._ended_with_mark(data)

    def _ended_with_mark(self, data: str) -> None:
        """A burst ending with an end mark completes the paste taken in: the terminal sent nothing after it (a
        forged mark the read happened to end at leaves a rest that the next burst brings, caught as a stalled
        tail or by the end mark it holds). Waiting for the pause instead took keys typed within the key timeout
        after a paste (an Enter) as pasted text."""
        if self._pasted is not None and not self._in_bracketed_paste and data.endswith(END):
            self._report()

    def feed(self, data: str) -> None:
        if not self._in_bracketed_paste:
            super().feed(data)
            return
        searched_from = max(0, len(self._paste_buffer) - len(END))
        self._paste_buffer += data
        end = self._paste_buffer.rfind(END, searched_from)
        if end < 0:
            return
        content, rest = self._paste_buffer[:end + len(END)], self._paste_buffer[end + len(END):]
        self._in_bracketed_paste, self._paste_buffer = False, ""
        before, mark, rest = rest.partition(START)
        self._take_in(content + before, mark + rest)

    def _take_in(self, text: str, then: str) -> None:
        """`text` is part of the paste being taken in; `then` (empty or from a start mark on) begins the next."""
        if self._pasted is None:
            self._pasted = []
        self._pasted.append(text)
        if then:
            self._report()
            self.feed(then)

    def _stalled_tail(self, burst: str) -> bool:
        """Whether `burst`, arriving shortly after a paste, is more than one key (its stalled rest)."""
        if not burst or self._clock() - self._reported_at > TAIL_S:
            return False
        # A cursor report read with a key is no second key: the terminal writes it after the whole paste (counted,
        # an Enter read with the renderer's answer was pasted text: a new line, the report shown in the editor)
        typed = _CURSOR_REPORT.sub("", burst)
        if len(typed) > ONE_KEY_CHARS:
            return True
        keys: list[KeyPress] = []
        parser = Vt100Parser(keys.append)
        parser.feed(typed)
        parser.flush()
        alt = len(keys) == 2 and keys[0].key == Keys.Escape  # Alt+key (Alt+Enter) comes as ESC and the key
        return len(keys) > 1 and not alt

    def _report(self) -> None:
        """The paste taken in, as one key press: its last end mark is the terminal's own, the others text."""
        if self._pasted is None:
            return
        text, self._pasted = "".join(self._pasted), None
        end = text.rfind(END)
        if end >= 0:
            text = text[:end] + text[end + len(END):]
        self._reported_at = self._clock()
        self.feed_key_callback(KeyPress(Keys.BracketedPaste, text))

    def reset(self, request: bool = False) -> None:
        """A fresh parser (after it failed on an input): a paste taken in so far is reported, not lost."""
        self._report()
        super().reset(request)
        self._paste_buffer = ""

    def flush(self) -> None:
        """The input paused: the paste being taken in is complete."""
        self._report()
        super().flush()


def _checked(key_press: KeyPress, callback) -> None:  # type: ignore[no-untyped-def]
    """Pass `key_press` on unless it is a mouse report: mouse reporting is never switched on (the layout's
    `mouse_support=False`), so one is pasted or forged text, and prompt_toolkit's handler raises on a
    malformed one (`ESC[0m`)."""
    if key_press.key == Keys.Vt100MouseEvent:
        _log(f"ignored a mouse report while mouse reporting is off: {key_press.data!r}")
        return
    callback(key_press)


def _log(text: str) -> None:
    """A line on stderr (the stray-output log while the UI runs)."""
    print(f"agent-forge: {text}", file=sys.stderr)


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
        self._parse(lambda: self.vt100_parser.feed_burst(data))
        result, self._buffer = self._buffer, []
        return result

    def flush_keys(self) -> list[KeyPress]:
        """The key timeout passed without input: flush the parser, unless input is waiting after all (the
        event loop was busy; the reader runs next, and a paste going on is not cut short)."""
        if self._waiting():
            return []
        self._parse(self.vt100_parser.flush)
        result, self._buffer = self._buffer, []
        return result

    def _waiting(self) -> bool:
        try:
            return bool(select.select([self.stdin.fileno()], [], [], 0)[0])
        except (OSError, ValueError):
            return False

    def _parse(self, step) -> None:  # type: ignore[no-untyped-def]
        """Run parser `step`; an input the parser fails on is dropped with a log line (never a crash)."""
        try:
            step()
        except Exception as exc:  # prompt_toolkit's parser state is a generator: restart it cleanly
            _log(f"dropped input the key parser failed on: {type(exc).__name__}: {exc}")
            self.vt100_parser.reset()
