"""Stop signals (SIGINT, SIGTERM, SIGHUP) from the console's first line of agent-forge code until a mode takes
them over (`modes/termination.py`): each ends start-up with exit code 128 + the signal number, one line on
stderr (`agent-forge: Stopped by SIGTERM during start-up.`) and no lock file left, never a traceback.

Three stretches, one rule: before the event loop, `hold` makes each signal raise `StoppedEarly` wherever the
main thread is (as Python's own SIGINT raises KeyboardInterrupt; a blocking read is interrupted too); RPC
mode's first-line wait has its own handlers (`modes/rpc/early.py`); in the event loop the start-up task is
cancelled instead (`cli_loop`). Only the interpreter's own start, before `console.main` runs, keeps the
system's defaults. Nothing here imports more than the C module `_signal` (`signal`, ~3.6 M instructions of
start-up's ~155 M for its enums, is imported by the report of a stop, `signal_name`).
"""

from __future__ import annotations

import _signal
import sys
from typing import Any

STOP_SIGNALS = (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP)
"""SIGINT, SIGTERM and SIGHUP as plain numbers (equal to the `signal.Signals` members)."""

_held = False
_answered = False  # a client has its first answer (RPC mode's early `get_state`): start-up is over for it


class StoppedEarly(KeyboardInterrupt):
    """A stop signal came before the mode's own handlers: `code` is the exit code, 128 + the signal number.

    A KeyboardInterrupt, so start-up code's `except Exception` never swallows it and asyncio lets it through
    as it does Ctrl-C."""

    def __init__(self, code: int):
        super().__init__(code)
        self.code = code

    @property
    def signal_name(self) -> str:
        """`"SIGTERM"` for code 143."""
        import signal

        return signal.Signals(self.code - 128).name


def hold() -> None:
    """From now on each stop signal raises `StoppedEarly` in the main thread; a signal the parent set to be
    ignored (`nohup`'s SIGHUP) stays ignored. Called once, by the console entry point (`console.main`)."""
    global _held
    _held = True
    for signum in STOP_SIGNALS:
        if _signal.getsignal(signum) != _signal.SIG_IGN:
            _signal.signal(signum, _raise)


def _raise(signum: int, frame: Any) -> None:
    raise StoppedEarly(128 + signum)


def answered() -> None:
    """A client was answered before the mode serves (RPC mode's early `get_state`): a later stop is no longer
    said to come `during start-up`, as the client saw the agent serve."""
    global _answered
    _answered = True


def stopped(exc: KeyboardInterrupt, *, starting: bool = True) -> int:
    """Report an interrupted run on stderr and release its session locks; the exit code (130 for a plain
    KeyboardInterrupt). `starting`: the mode was not serving yet (the line says `during start-up` unless a
    client was `answered` already)."""
    stop = exc if isinstance(exc, StoppedEarly) else StoppedEarly(128 + _signal.SIGINT)
    if _held:  # the process is ending: a second signal must not interrupt the clean-up
        for signum in STOP_SIGNALS:
            _signal.signal(signum, _signal.SIG_IGN)
    try:
        from ..coding.session.lock import release_held_locks

        release_held_locks()
    finally:
        when = " during start-up" if starting and not _answered else ""
        print(f"agent-forge: Stopped by {stop.signal_name}{when}.", file=sys.stderr)
    return stop.code
