"""Keep the protocol channels clean: only the mode writes to the real stdout and reads the real stdin, and a
reader that goes away is quiet.

Plugins, libraries and child processes that print (`print()`, `os.write(1, ...)`, `subprocess.run(["echo"])`)
would inject stray lines into RPC or JSON-mode output, or into print mode's answer. `claim_stdout()` moves the
real stdout to a private descriptor for the mode's own writes and points descriptor 1 (and `sys.stdout`) at
stderr, so stray output lands in the log instead. `write_out` writes one record and, when the reader has gone
(`| head -1`), points the stream at the null device so the work still finishes and nothing fails again. It is
the one writer of the protocol stream: when that is a pipe or socket, through an `output_pump.OutputPump`, so
a client that stops reading never holds up a stop signal or the end of stdin (`quiet_exit_streams` finishes it).

Any other write error (a full disk: ENOSPC, EIO, EBADF, ...) means the output is being lost: it is recorded
(`failure`), the stream is pointed at the null device too, and the `on_failure` callback a mode registered
stops the mode; `main` then says `agent-forge: cannot write to stdout: <reason>` once and exits 1.

`claim_stdin()` does the same for input: a plugin reading `sys.stdin` (or a child process reading fd 0) would
take protocol lines, so the mode keeps a private descriptor of the real stdin and fd 0 becomes the null device.
"""

from __future__ import annotations

import errno
import io
import os
import sys
from typing import TYPE_CHECKING, Any, BinaryIO, Callable

if TYPE_CHECKING:
    from .output_pump import OutputPump

_claimed: BinaryIO | None = None
failure: OSError | None = None
"""The first stdout write error other than a vanished reader, or None."""
stdout_closed = False
"""Descriptor 1 was closed when the process started (`agent-forge ... >&-`): `ensure_standard_streams` gave it
the null device, and the first write to stdout is an output failure (`CLOSED_AT_START`), never lost silently."""
CLOSED_AT_START = OSError(errno.EBADF, "it was closed when agent-forge started")
_on_failure: Callable[[], None] | None = None
_claimed_in: BinaryIO | None = None
_pump: OutputPump | None = None
"""The `output_pump.OutputPump` that writes the claimed stream when it is a pipe or socket (made by
`claim_stdout`), else None."""


def claim_stdout() -> BinaryIO:
    """The protocol stream (a binary file on the original stdout). Idempotent."""
    global _claimed
    if _claimed is None:
        sys.stdout.flush()
        fd = os.dup(1)
        os.dup2(2, 1)
        widen_pipe(fd)
        _claimed = open(fd, "wb", buffering=1 << 16, closefd=True)
        _start_pump(_claimed)
        sys.stdout = io.TextIOWrapper(open(1, "wb", closefd=False), encoding="utf-8", errors="replace",
                                      line_buffering=True)
    return _claimed


def _start_pump(stream: BinaryIO) -> None:
    """Write `stream` through an `output_pump.OutputPump` when it is a pipe or socket: a client that stops
    reading it must never hold up a stop signal or the end of stdin. Files and terminals are written as they
    are (a terminal's file description is shared with the shell: it must stay blocking)."""
    global _pump
    from . import output_pump

    if output_pump.usable_on(stream.fileno()):
        _pump = output_pump.OutputPump(stream.fileno(), lambda exc: _write_failed(stream, exc))


PIPE_BYTES = 1 << 20
"""What a protocol pipe is asked to hold (1 MiB, Linux's default `pipe-max-size`; 64 KiB is the default size): a
multi-MB answer (`get_messages` of a long session) then crosses in a few wake-ups of the client, not dozens."""


def widen_pipe(fd: int) -> None:
    """Ask for a `PIPE_BYTES` buffer on `fd` when it is a pipe (Linux `F_SETPIPE_SZ`); anything else (not a
    pipe, another system, a limit lowered by the administrator) keeps the buffer as it is."""
    import fcntl

    setter = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setter is None:
        return
    try:
        fcntl.fcntl(fd, setter, PIPE_BYTES)
    except OSError:  # EBADF/EINVAL: not a pipe; EPERM: over the limit for this user
        pass


def claim_stdin() -> BinaryIO:
    """The mode's input stream (a binary file on the original stdin); descriptor 0 and `sys.stdin` read the
    null device from now on (end of file at once). Idempotent."""
    global _claimed_in
    if _claimed_in is None:
        fd = os.dup(0)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        _claimed_in = open(fd, "rb", buffering=0, closefd=True)
        sys.stdin = io.TextIOWrapper(open(0, "rb", closefd=False), encoding="utf-8", errors="replace")
    return _claimed_in


def protocol_stdin() -> BinaryIO:
    """The claimed input stream, or the process's stdin when nothing claimed it (SDK use, tests)."""
    return _claimed_in if _claimed_in is not None else sys.stdin.buffer


def protocol_stdout() -> BinaryIO:
    """The claimed protocol stream, or the process's stdout when nothing claimed it (SDK use, tests)."""
    return _claimed if _claimed is not None else sys.stdout.buffer


def write_out(stream: BinaryIO, data: bytes) -> None:
    """Write and flush `data`. When the reader has gone (BrokenPipeError) the stream's descriptor is pointed at
    the null device (`discard`), so later writes and the flush at exit succeed silently; any other OSError
    is an output failure (`output_failed`), and so is any write to a stdout closed at start (`stdout_closed`); a
    stream closed in-process (ValueError) is ignored."""
    if stdout_closed and _is_stdout(stream):
        output_failed(stream, CLOSED_AT_START)
        return
    if _pump is not None and stream is _claimed:
        _pump.write(data)
        return
    try:
        stream.write(data)
        stream.flush()
    except BrokenPipeError:
        discard(stream)
    except OSError as exc:
        output_failed(stream, exc)
    except ValueError:
        pass


def _write_failed(stream: Any, exc: OSError) -> None:
    if isinstance(exc, BrokenPipeError):
        discard(stream)
    else:
        output_failed(stream, exc)


def _is_stdout(stream: Any) -> bool:
    """Whether `stream` writes to the process's stdout: the claimed protocol stream or descriptor 1."""
    if stream is _claimed:
        return True
    try:
        return stream.fileno() == 1
    except (OSError, ValueError, AttributeError):
        return False


def refuse_closed_stdout() -> bool:
    """For a mode whose whole output is stdout (print, JSON, RPC, ACP): True (the failure recorded, so `main`
    says `cannot write to stdout: it was closed when agent-forge started` and exits 1) when stdout was
    closed at start; nothing is run whose answer nobody could read."""
    if stdout_closed:
        output_failed(sys.stdout, CLOSED_AT_START)
    return stdout_closed


def print_out(text: str, end: str = "\n") -> None:
    """`print(text, end=end)` to stdout for the one-shot commands (`--list-sessions`, `--help`, ...), through
    `write_out`."""
    try:
        sys.stdout.flush()
    except OSError as exc:
        output_failed(sys.stdout, exc)
        return
    write_out(sys.stdout.buffer, f"{text}{end}".encode("utf-8", "replace"))


def output_failed(stream: Any, exc: OSError) -> None:
    """Record `exc` as the stdout failure (the first one wins), discard the stream and tell the mode once."""
    global failure
    discard(stream)
    if failure is None:
        failure = exc
        if _on_failure is not None:
            _on_failure()


def on_failure(callback: Callable[[], None] | None) -> None:
    """Call `callback()` (no arguments) at the first output failure; None unregisters."""
    global _on_failure
    _on_failure = callback


def failure_message() -> str | None:
    """The one stderr line for an output failure (`failure`), or None when there was none."""
    if failure is None:
        return None
    return f"agent-forge: cannot write to stdout: {failure.strerror or failure}"


def discard(stream: Any) -> None:
    """Point `stream`'s descriptor at the null device; its buffered bytes then go nowhere on the next flush."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def quiet_exit_streams() -> None:
    """Write what waits for the protocol's client (`OutputPump.finish`; output dropped because a stopping agent's
    client took none of it is said in one stderr line), then flush stdout and stderr before the interpreter
    does, discarding a stream whose reader has gone: Python would otherwise print `Exception ignored ...
    BrokenPipeError` and exit 120. Another error flushing stdout is an output failure (`output_failed`); one on
    stderr has nowhere to be reported."""
    if _pump is not None:
        from .output_pump import dropped_message

        _pump.finish()
        dropped = dropped_message(_pump)
        if dropped is not None:
            print(dropped, file=sys.stderr)
    for stream in (sys.stdout, sys.stderr):
        if stream is None:
            continue
        try:
            stream.flush()
        except BrokenPipeError:
            discard(stream)
        except OSError as exc:
            if stream is sys.stdout and _claimed is None:  # once claimed, sys.stdout writes to stderr
                output_failed(stream, exc)
            else:
                discard(stream)
        except ValueError:
            pass


class _TolerantStderr:
    """`sys.stderr` that never raises on a write error (a full disk under `>log 2>&1`): diagnostics that
    cannot be shown are dropped, so they never crash the mode or change its exit code."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError:
            discard(self._stream)
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError:
            discard(self._stream)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def tolerate_stderr_errors() -> None:
    """Make `sys.stderr` drop what it cannot write (`_TolerantStderr`). Idempotent."""
    if sys.stderr is not None and not isinstance(sys.stderr, _TolerantStderr):
        sys.stderr = _TolerantStderr(sys.stderr)  # type: ignore[assignment]


def ensure_standard_streams() -> None:
    """Give a closed stdin, stdout or stderr (`agent-forge ... >&-`) the null device. Otherwise the next file
    opened would take descriptor 1 or 2, and output meant for the reader would land in it (a session file);
    and `sys.stdout` would be None. A closed stdout is remembered (`stdout_closed`). `sys.stdout` replaces what
    it cannot encode."""
    global stdout_closed
    for fd, name, mode in ((0, "stdin", os.O_RDONLY), (1, "stdout", os.O_WRONLY), (2, "stderr", os.O_WRONLY)):
        try:
            os.fstat(fd)
        except OSError:
            stdout_closed = stdout_closed or fd == 1
            devnull = os.open(os.devnull, mode)
            if devnull != fd:
                os.dup2(devnull, fd)
                os.close(devnull)
            if getattr(sys, name) is None:
                setattr(sys, name, open(fd, "r" if fd == 0 else "w", encoding="utf-8", errors="replace",
                                        closefd=False))
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:  # a lone surrogate (undecodable file name, bad escape) prints "?", no traceback
        reconfigure(errors="replace")
