"""The terminal the UI draws on: the real stdin and stdout the CLI claimed (`stdout_guard`), wrapped for
prompt_toolkit, and its size (80x24 when the terminal reports none)."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import sys
from typing import Iterator

from prompt_toolkit.output.vt100 import Vt100_Output

from ..stdout_guard import discard, protocol_stdin, protocol_stdout
from .paste import PasteSafeInput

DEFAULT_SIZE = (24, 80)
BEGIN_SYNC, END_SYNC = "\x1b[?2026h", "\x1b[?2026l"
"""Synchronized output (DEC mode 2026): the terminal shows each redraw whole, never half drawn; terminals
without it ignore the unknown mode."""
HUNG_UP = (errno.EIO, errno.ENXIO)
"""What writing to a terminal that went away (its window closed, its tmux pane killed) fails with."""


class _SyncedOutput(Vt100_Output):
    """prompt_toolkit's output with each flush (one redraw) wrapped in synchronized-output marks; `held()`
    makes the flushes inside it one (`above.write_above`: erase, printed text and redraw reach the terminal
    together, never a screen without the live region)."""

    _held = False

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        self._held = True
        try:
            yield
        finally:
            self._held = False
            self.flush()

    def erase_down(self) -> None:
        """Erase from the cursor to the screen's end, never as an erase from its top-left corner: tmux (its
        `scroll-on-clear`) takes that for clearing the whole screen and first pushes the screen into the
        scrollback, so a live region drawn at the screen's top (a tall dialog pushed it there, or the first
        paint) left a stale frame and its blank rows there on the next redraw. So: a space, erase down from
        after it, back one column and erase that line's rest; the same cells end up erased. (Erasing from the
        last column would also take the cell before it: prompt_toolkit erases from the start of a row.)"""
        self.write_raw(" \x1b[J\x1b[D\x1b[K")

    def flush(self) -> None:
        if self._held:
            return
        if self._buffer:
            self._buffer.insert(0, BEGIN_SYNC)
            self._buffer.append(END_SYNC)
        try:
            super().flush()
        except OSError as exc:
            if exc.errno not in HUNG_UP:
                raise
            # The terminal hung up: what is drawn or printed from now on goes nowhere (a raise here came out of
            # whatever printed: the run's last answer, as the hang-up's SIGHUP aborted it), and that SIGHUP
            # ends the mode (termination.py)
            discard(self.stdout)


class Terminal:
    """`input` and `output` for the Application; `write` puts raw text on the screen."""

    def __init__(self) -> None:
        # The wrappers must live as long as the process: a collected TextIOWrapper closes what it wraps.
        self._stdin = io.TextIOWrapper(protocol_stdin(), encoding="utf-8", errors="replace")
        self._stdout = io.TextIOWrapper(protocol_stdout(), encoding="utf-8", errors="replace", write_through=True)
        self.input = PasteSafeInput(self._stdin)  # pastes never act as keys (paste.py)
        self.output = _SyncedOutput.from_pty(self._stdout, term=os.environ.get("TERM"))
        # A terminal that reports no size (a serial console, a bare pty) does not answer cursor position
        # requests either: asking made prompt_toolkit print a CPR warning and, now and then, never finish
        # exiting on Ctrl+D. Without the answer the live region is drawn from the assumed 80x24.
        self.output.enable_cpr = self._reports_size() and os.environ.get("TERM") != "dumb"

    def columns(self) -> int:
        return self._size()[1]

    def rows(self) -> int:
        return self._size()[0]

    def _reports_size(self) -> bool:
        """Whether the terminal itself reports a size (prompt_toolkit's `get_size` puts 24x80 in for zeros)."""
        try:
            size = os.get_terminal_size(self._stdout.fileno())
        except (OSError, ValueError):
            return False
        return size.lines > 0 and size.columns > 0

    def _size(self) -> tuple[int, int]:
        try:
            size = self.output.get_size()
        except OSError:
            return DEFAULT_SIZE
        rows, columns = size.rows, size.columns
        return (rows if rows > 0 else DEFAULT_SIZE[0], columns if columns > 0 else DEFAULT_SIZE[1])

    def write(self, text: str) -> None:
        """Write `text` (ANSI, newline-separated) at the cursor and flush."""
        self.output.write_raw(text)
        self.output.flush()


class StrayOutput:
    """While the UI runs, descriptors 1 and 2 (plugin prints, warnings, child processes that inherit them)
    go to a temporary log file instead of the terminal, where they would tear the live region apart.
    `restore` puts stderr back and returns the log's path when anything was written (else removes it)."""

    def __init__(self) -> None:
        import tempfile

        sys.stderr.flush()
        fd, self.path = tempfile.mkstemp(prefix="agent-forge-stderr-", suffix=".log")
        self._saved = os.dup(2)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)

    def restore(self) -> str | None:
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os.dup2(self._saved, 2)
        os.dup2(self._saved, 1)  # fd 1 pointed at stderr before (`stdout_guard.claim_stdout`)
        os.close(self._saved)
        try:
            if os.path.getsize(self.path) > 0:
                return self.path
            os.remove(self.path)
        except OSError:
            pass
        return None


class RealTerminalFds:
    """Within `with`: descriptors 0, 1 and 2 are the terminal again (for an external editor, which inherits
    them); afterwards they are what they were (the null device, the stray-output log)."""

    def __enter__(self) -> RealTerminalFds:
        self._saved = [os.dup(fd) for fd in (0, 1, 2)]
        os.dup2(protocol_stdin().fileno(), 0)
        os.dup2(protocol_stdout().fileno(), 1)
        os.dup2(protocol_stdout().fileno(), 2)
        return self

    def __exit__(self, *exc: object) -> None:
        for fd, saved in zip((0, 1, 2), self._saved):
            os.dup2(saved, fd)
            os.close(saved)


def osc52_copy(text: str) -> str:
    """The OSC 52 sequence asking the terminal to put `text` on the clipboard (base64: nothing in `text`
    can end the sequence early)."""
    import base64

    return f"\x1b]52;c;{base64.b64encode(text.encode('utf-8')).decode('ascii')}\x07"
