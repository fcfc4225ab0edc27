"""Keys typed before the editor is ready (no prompt_toolkit here: this runs as soon as the CLI knows it is
interactive).

Until prompt_toolkit puts the terminal into raw mode, the terminal is in cooked mode: it echoes what is typed
on the screen (above the header) and turns Enter into a newline, which the editor would take as Ctrl+J, a new
line, so `early bird` + Enter never sent. `hold(fd)` switches echo, line editing and the CR→NL translation off
at once, takes what the terminal already queued (Enter's newlines become Enter again), and erases its echo;
keys typed later stay queued, raw, for prompt_toolkit. `take()` gives the held text to the editor as typed keys
(`app.InteractiveMode`); `release()` puts the terminal's own modes back (at exit, and around a question asked
on the cooked terminal: `paused`)."""

from __future__ import annotations

import atexit
import contextlib
import os
import select
from typing import Iterator

_state: dict[str, object] = {}
"""`fd`, `saved` (the terminal's modes before `hold`), `held` (the text taken, not yet `take`n)."""


def hold(fd: int, out_fd: int | None = None, *, take_queued: bool = True) -> None:
    """Raw-ish input on terminal `fd` from now on (echo, canonical mode and ICRNL off; output processing and
    signals as they were); what it had queued is kept for `take` (unless not `take_queued`), its echo erased on
    `out_fd`. Does nothing when `fd` is no terminal or already held."""
    import termios

    if "saved" in _state:
        return
    try:
        saved = termios.tcgetattr(fd)
        mode = [list(part) if isinstance(part, list) else part for part in saved]
        mode[0] &= ~termios.ICRNL
        mode[3] &= ~(termios.ECHO | termios.ICANON)
        mode[6][termios.VMIN], mode[6][termios.VTIME] = 1, 0
        termios.tcsetattr(fd, termios.TCSANOW, mode)
    except (termios.error, OSError):
        return
    if "fd" not in _state:  # a descriptor of our own: fd 0 becomes the null device (`claim_stdin`)
        _state["fd"] = os.dup(fd)
        atexit.register(release)
    _state["saved"] = saved
    if not take_queued:
        return
    queued = _read_queued(fd)
    if queued and saved[3] & termios.ECHO and out_fd is not None:
        _erase_echo(queued, out_fd)
    # cooked mode had made each Enter a newline: the editor reads a newline as Ctrl+J (a new line, not send)
    _state["held"] = str(_state.get("held", "")) + queued.replace("\n", "\r")


def take() -> str:
    """The text held since `hold` (once: later calls give "")."""
    held = str(_state.pop("held", ""))
    return held


def release() -> None:
    """Put back the terminal modes `hold` found (idempotent)."""
    import termios

    saved = _state.pop("saved", None)
    if saved is not None:
        with contextlib.suppress(termios.error, OSError):
            termios.tcsetattr(int(_state["fd"]), termios.TCSANOW, saved)  # type: ignore[arg-type]


@contextlib.contextmanager
def paused(*, take_queued: bool = True) -> Iterator[None]:
    """Within `with`: the terminal's own modes (a question read line by line, with echo; the shell while the
    process is suspended); held again after (what was typed meanwhile kept for `take` if `take_queued`)."""
    fd = _state.get("fd")
    was_held = "saved" in _state
    release()
    try:
        yield
    finally:
        if was_held and isinstance(fd, int):
            hold(fd, take_queued=take_queued)


def _read_queued(fd: int) -> str:
    """What the terminal queued (typed before `hold`), without waiting for more."""
    data = b""
    while select.select([fd], [], [], 0)[0]:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    return data.decode("utf-8", "replace")


def _erase_echo(text: str, out_fd: int) -> None:
    """Remove the cooked terminal's echo of `text` (typed at the start of a line, as after the shell's Enter):
    back up over the rows it took and clear to the end of the screen. Control characters were echoed as `^X`."""
    columns = _columns(out_fd)
    lines = text.split("\n")
    rows = sum(max(1, -(-_echo_width(line) // columns)) for line in lines[:-1])
    rows += (_echo_width(lines[-1]) // columns) if lines[-1] else 0
    up = f"\x1b[{rows}A" if rows else ""
    with contextlib.suppress(OSError):
        os.write(out_fd, f"{up}\r\x1b[J".encode("ascii"))


def _echo_width(line: str) -> int:
    return sum(2 if ord(char) < 32 or ord(char) == 127 else 1 for char in line)


def _columns(fd: int) -> int:
    try:
        return max(1, os.get_terminal_size(fd).columns)
    except OSError:
        return 80
