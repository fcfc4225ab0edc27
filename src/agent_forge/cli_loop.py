"""The CLI's event loop: `asyncio.run` with two differences a coding agent needs (stop signals during start-up, and plugin
tasks that ignore their cancellation at exit)."""

from __future__ import annotations

from typing import Any

from .modes.early_signals import STOP_SIGNALS, StoppedEarly


def run_loop(main: Any) -> int:
    """`asyncio.run(main)`, except at the start and the end. A stop signal before the mode takes the signals over
    cancels `main` and raises `StoppedEarly` (`_cancel_on_stop_signals`). At the end, tasks still running
    (plugin code that ignores its cancellation) are cancelled and get `CANCEL_GRACE_S` (1 s, or
    `AGENT_FORGE_CANCEL_GRACE_MS`), then are abandoned, where `asyncio.run` would wait for them for ever and
    the process would never exit. The loop comes without OpenSSL until something needs it (`lazy_ssl.py`)."""
    try:
        from .lazy_ssl import defer_ssl

        defer_ssl()
        import asyncio

        from .plugins.bounded import CANCEL_GRACE_S

        loop = asyncio.new_event_loop()
    except BaseException:  # a signal before the loop ran `main`: it is never awaited, so it is closed
        main.close()
        raise
    try:
        asyncio.set_event_loop(loop)
        task = loop.create_task(main)
        stops = _cancel_on_stop_signals(loop, task)
        try:
            return loop.run_until_complete(task)
        except asyncio.CancelledError:
            if stops:
                raise StoppedEarly(stops[0]) from None
            raise
    finally:
        try:
            leftovers = [task for task in asyncio.all_tasks(loop) if not task.done()]
            for task in leftovers:
                task.cancel()
            if leftovers:
                loop.run_until_complete(asyncio.wait(leftovers, timeout=CANCEL_GRACE_S))
            loop.run_until_complete(loop.shutdown_asyncgens())
            # A worker thread blocked in the kernel (a FIFO without a writer) cannot be interrupted: waiting
            # for it would keep the process for ever (`leave_stuck_threads` ends the process past it).
            loop.run_until_complete(asyncio.wait({loop.create_task(loop.shutdown_default_executor())},
                                                 timeout=CANCEL_GRACE_S))
        finally:
            asyncio.set_event_loop(None)
            loop.close()


def _cancel_on_stop_signals(loop: Any, task: Any) -> list[int]:
    """Until a mode takes the signals over (`termination`), a stop signal (SIGINT, SIGTERM, SIGHUP) cancels the
    start-up `task`; the returned list holds the exit code (128 + signum) once one did. An exception raised
    wherever the main thread happens to be could be caught as a plugin's own failure (its `setup` running at
    that moment) and start-up would go on. A second signal (start-up code that ignores its cancellation)
    raises `StoppedEarly` at once. Signals the parent set to be ignored stay ignored."""
    import signal

    codes: list[int] = []

    def on_signal(code: int) -> None:
        if codes:
            raise StoppedEarly(codes[0])
        codes.append(code)
        task.cancel()

    for signum in STOP_SIGNALS:
        try:
            if signal.getsignal(signum) is not signal.SIG_IGN:
                loop.add_signal_handler(signum, on_signal, 128 + signum)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals (Windows)
            pass
    return codes


STUCK_THREADS = ("asyncio_", "plugin-")
"""The names' starts of the worker threads `leave_stuck_threads` does not leave to the interpreter's exit: the
event loop's (tools' blocking calls) and plugin code's (`plugins/threads.in_thread`: a synchronous setup,
handler or tool given up, a blocked import)."""


def leave_stuck_threads(code: int) -> None:
    """End the process now with `code` when worker threads (`STUCK_THREADS`) are still alive once the loop is
    closed: the interpreter would join an event-loop worker at exit, for ever when one is blocked in the kernel,
    and its finalization with a daemon thread still running Python code (a plugin's setup given up by a stop
    signal) can crash it (SIGSEGV, `corrupted double-linked list`) instead of exiting with `code`. Standard
    streams are flushed first. Returns when there are none (the normal case)."""
    import os
    import sys
    import threading

    if not any(t.name.startswith(STUCK_THREADS) and t.is_alive() for t in threading.enumerate()):
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
