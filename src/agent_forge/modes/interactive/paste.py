"""Terminal input whose bracketed pastes can never act as keys, and whose typed keys are never taken as pasted.

A terminal wraps a paste in `ESC[200~` ... `ESC[201~`, and those marks are the rule: only what lies between a start
mark and its end mark is pasted; a key typed after the end mark is a key, however soon it comes and however the
input is batched (a slow link delivers a paste and the keys typed after it in one read). Timing decides nothing
about what is pasted; it only says how long to wait for what the marks tell:

- a terminal that does not filter escapes out of the pasted text passes a crafted text's own end mark on
  (`ESC[201~!rm -rf ~\\r`). The terminal's real one still follows it, with no start mark between (a person
  cannot type `ESC[201~`), and that is the proof: what comes after a paste's end mark is
  held, unparsed, until the input pauses (the key timeout, 50 ms, with nothing waiting); an end mark arriving
  meanwhile before any start mark shows the earlier one was the text's own, so the paste goes on to it (the
  forged mark kept as text). At the pause the paste is complete and what was held is parsed as typed keys. So
  a key pressed right after a paste acts once the input pauses, never as text;
- the one exception to "only between the marks": a start mark arriving while a paste is pending (before the
  pause) continues that paste, the marks and what lies between them kept as text. A crafted text forging an
  end mark and then a start mark (`ESC[201~!rm -rf ~\\r ESC[200~`) reads exactly as a person pasting, typing
  and pasting again within one read (a link that batches) would; the safe reading is text, so a forged pair
  runs nothing, and the person's rare in-between keys land in the editor as text, for them to see;
- an end mark arriving when no paste is pending (the terminal stalled longer than the pause right after a forged
  mark) still makes what its read holds before it pasted text;
- a paste whose end mark never comes (the terminal died mid-paste, a lost mark) would take every later key as
  text: once the input has paused `PASTE_END_WAIT_S` with the paste open, it is ended there and said so
  (`notify`), and keys act again;
- a cursor position report (the renderer's question answered) is never held or pasted outside the marks: it goes
  to the renderer at once;
- a mouse report while mouse reporting is off (a pasted `ESC[0m` parses as one) is dropped with a log line,
  as is anything the key parser fails on: neither reaches a key handler.

`pasted_text` then makes what a paste holds inert: control characters but newline and tab become visible
escapes (`\\x1b`), carriage returns become newlines."""

from __future__ import annotations

import contextlib
import re
import select
import sys
import time
from typing import Callable, Iterator

from prompt_toolkit.input.vt100 import Vt100Input
from prompt_toolkit.input.vt100_parser import Vt100Parser
from prompt_toolkit.key_binding import KeyPress
from prompt_toolkit.keys import Keys

START, END = "\x1b[200~", "\x1b[201~"
MAX_BURST_CHARS = 16 * 1024 * 1024
"""Reading what is already there stops here (the rest is read on the next round)."""
READ_CHARS = 65536
PASTE_END_WAIT_S = 2.0
"""A paste whose end mark has not come once the input paused this long is ended there (seconds): a terminal
writes a paste at once, so a pause inside one means its end mark is lost."""
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CURSOR_REPORT = re.compile(r"\x1b\[\d+;\d+R")
"""The terminal's answer to a cursor position request (`ESC [ row ; column R`): neither typed nor pasted."""


def pasted_text(data: str) -> str:
    """`data` as text to insert: `\\r\\n` and lone `\\r` become `\\n`; other control characters (ESC, C1, NUL)
    but tab are shown as escapes (`\\x1b`), so nothing pasted can act as a key or reach the terminal raw."""
    data = data.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", data)


class PasteSafeParser(Vt100Parser):
    """`Vt100Parser` following the rules above: `feed_burst` takes everything read in one round, `flush` says the
    input paused, `end_unfinished` ends a paste open too long. `clock` gives seconds (monotonic); `notify(text)`
    says what the user should know (a paste ended for want of its end mark)."""

    def __init__(self, callback, clock=time.monotonic, notify=None) -> None:  # type: ignore[no-untyped-def]
        self._parts: list[str] = []  # the open paste's text so far (between its start mark and an end mark)
        self._tail = ""  # its last characters, where an end mark split over two reads begins
        self._pasted: list[str] | None = None  # a paste whose end mark came, until the input pauses
        self._held: list[str] = []  # what came after that end mark, not parsed yet
        self._carry = ""  # the end of the last read outside a paste that may begin a mark
        self._clock = clock
        self._last_input = clock()
        self.notify: Callable[[str], None] = notify or _log
        super().__init__(lambda key_press: _checked(key_press, callback))

    def feed_burst(self, data: str) -> None:
        """Feed everything read in one round."""
        if data:
            self._last_input = self._clock()
        while data:  # a loop, not recursion: a read may hold any number of pastes
            data = self._in_paste(data) if self._in_bracketed_paste else self._outside(data)

    feed = feed_burst  # (prompt_toolkit's parser calls `feed` with what follows a start mark)

    def _in_paste(self, data: str) -> str:
        """Take `data` into the open paste up to its end mark; what follows the mark ("" when none came)."""
        tail = self._tail  # an end mark may be split over reads
        end = (tail + data).find(END)
        self._parts.append(data)
        if end < 0:
            self._tail = (tail + data)[-(len(END) - 1):]
            return ""
        whole = "".join(self._parts)
        at = len(whole) - len(data) - len(tail) + end
        self._parts, self._tail, self._in_bracketed_paste = [], "", False
        self._pasted = [whole[:at]]
        return whole[at + len(END):]

    def _outside(self, data: str) -> str:
        """Parse `data` read outside a paste up to the next start mark (entered); what follows that mark. The
        read's end, when it may begin a mark (`ESC[20`), waits for the next read or the pause (`_carry`)."""
        before, mark, rest = (self._carry + data).partition(START)
        self._carry = "" if mark else before[len(before) - _mark_prefix(before):]
        before = before[:len(before) - len(self._carry)]
        end = before.rfind(END)
        if end >= 0:  # a stray end mark: what came since the paste's own end mark was pasted text as well
            self._continued(before[:end])
            before = before[end + len(END):]
        if mark and self._pasted is not None:  # a start mark before the pause: the pending paste goes on
            self._parts = [*self._pasted, END, *self._held, before, START]
            self._pasted, self._held, self._in_bracketed_paste = None, [], True
            return rest
        self._typed(before)
        if mark:
            Vt100Parser.feed(self, mark)  # opens a paste (prompt_toolkit's `_call_handler`)
        return rest

    def _typed(self, text: str) -> None:
        """`text` is typed: parsed now, or held while a paste is pending."""
        if self._pasted is None:
            Vt100Parser.feed(self, text)
        elif text:
            self._hold(text)

    def _continued(self, text: str) -> None:
        """An end mark with no paste open: the end mark of the paste pending was its text's own (kept as text),
        and what was held since, and `text`, are pasted too."""
        if self._pasted is None:
            self._pasted = [text]
            return
        self._pasted += [END, *self._held, text]
        self._held = []

    def _hold(self, text: str) -> None:
        """Keep `text` (after a paste's end mark) for later; cursor reports in it go to the renderer now."""
        self._held.append(_CURSOR_REPORT.sub("", text))
        reports = "".join(_CURSOR_REPORT.findall(text))
        if reports:
            Vt100Parser.feed(self, reports)

    def _release(self) -> None:
        """The pending paste is complete: report it as one key press, then parse what was held as typed keys."""
        if self._pasted is None:
            return
        text, self._pasted = "".join(self._pasted), None
        held, self._held = "".join(self._held), []
        self.feed_key_callback(KeyPress(Keys.BracketedPaste, text))
        if held:
            Vt100Parser.feed(self, held)

    def end_unfinished(self) -> None:
        """End the open paste if the input has paused `PASTE_END_WAIT_S` inside it (its end mark is lost), saying
        so: what it took in is pasted, and what comes next is typed again."""
        if not self._in_bracketed_paste or self._clock() - self._last_input < PASTE_END_WAIT_S:
            return
        text, self._parts, self._tail = "".join(self._parts), [], ""
        self._in_bracketed_paste, self._pasted = False, [text]
        self._release()
        self.notify(f"a paste did not end: its end mark had not come {PASTE_END_WAIT_S:g} s after its last input, "
                    f"so it ends there ({len(text):,} characters pasted) and keys act again")

    @property
    def paste_open(self) -> bool:
        """Whether a paste's start mark came and its end mark not yet."""
        return self._in_bracketed_paste

    def reset(self, request: bool = False) -> None:
        """A fresh parser (after it failed on an input): what a paste took in so far is reported, not lost."""
        if getattr(self, "_in_bracketed_paste", False):  # (prompt_toolkit's `__init__` resets before setting it)
            self._pasted = [*(self._pasted or []), *self._parts]
        self._held, self._carry = [], ""  # (what the parser failed on)
        self._release()
        super().reset(request)
        self._parts, self._tail = [], ""

    def flush(self) -> None:
        """The input paused: the pending paste is complete, and what followed it is typed keys."""
        carry, self._carry = self._carry, ""
        self._typed(carry)
        self._release()
        super().flush()


def _mark_prefix(text: str) -> int:
    """How many characters at the end of `text` begin a start or an end mark without completing it."""
    for size in range(min(len(text), len(START) - 1), 0, -1):
        if START.startswith(text[-size:]) or END.startswith(text[-size:]):
            return size
    return 0


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
    """prompt_toolkit's terminal input with `PasteSafeParser`, reading each burst whole; a paste left open is
    ended `PASTE_END_WAIT_S` after the input paused in it (`notify` says so: the stray-output log until the UI
    sets it)."""

    def __init__(self, stdin) -> None:  # type: ignore[no-untyped-def]
        super().__init__(stdin)
        self.vt100_parser = PasteSafeParser(lambda key_press: self._buffer.append(key_press))
        self._ready: Callable[[], None] | None = None  # prompt_toolkit's reader while attached

    def read_keys(self) -> list[KeyPress]:
        data = self._burst()
        self._parse(lambda: self.vt100_parser.feed_burst(data))
        self._parse(self.vt100_parser.end_unfinished)  # ("" read: the wake-up of `_check_later`)
        result, self._buffer = self._buffer, []
        return result

    def _burst(self) -> str:
        """What is waiting on stdin, up to `MAX_BURST_CHARS` (a terminal hands a paste over ~4 KB a read). The
        reads are joined once: a string grown read by read was copied whole each time (a 5 MB paste: 1,250
        reads, ~2.5 s of CPU)."""
        reads = [self.stdin_reader.read()]
        size = len(reads[0])
        while size and size < MAX_BURST_CHARS:
            more = self.stdin_reader.read(READ_CHARS)  # "" once nothing more is waiting
            if not more:
                break
            reads.append(more)
            size += len(more)
        return "".join(reads)

    def flush_keys(self) -> list[KeyPress]:
        """The key timeout passed without input: flush the parser, unless input is waiting after all (the
        event loop was busy; the reader runs next, and a paste going on is not cut short)."""
        if self._waiting():
            return []
        self._parse(self.vt100_parser.flush)
        if self.vt100_parser.paste_open:
            self._check_later()
        result, self._buffer = self._buffer, []
        return result

    def _check_later(self) -> None:
        """Run the reader again once a paste open now may be due to end (`end_unfinished`): prompt_toolkit
        calls it only when input comes, and none may come."""
        import asyncio

        with contextlib.suppress(RuntimeError):  # no event loop (a unit test)
            asyncio.get_running_loop().call_later(PASTE_END_WAIT_S, lambda: self._ready and self._ready())

    def attach(self, input_ready_callback: Callable[[], None]):  # type: ignore[no-untyped-def]
        return self._reading(super().attach(input_ready_callback), input_ready_callback)

    def detach(self):  # type: ignore[no-untyped-def]
        return self._reading(super().detach(), None)

    @contextlib.contextmanager
    def _reading(self, context, callback: Callable[[], None] | None) -> Iterator[None]:  # type: ignore[no-untyped-def]
        """`context` with `_ready` set to `callback` inside it (None while detached: an external editor reads)."""
        with context:
            before, self._ready = self._ready, callback
            try:
                yield
            finally:
                self._ready = before

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
