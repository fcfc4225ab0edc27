"""Stop a mode early and cleanly: on SIGINT, SIGTERM or SIGHUP, or when stdout cannot be written.

Either way the run is aborted (its `agent_end` and `agent_settled` are still emitted), every child process
group is killed, the session file is released (its lock file removed) and the process exits with 128 + the
signal number, or 1 for an output failure (`stdout_guard.failure`; `cli.main` prints its one line).

Editors stop an embedded agent with SIGTERM (Node's `child.kill()` default) or close its terminal (SIGHUP),
users press Ctrl-C (SIGINT); without this, a running build or server started by the `bash` tool would outlive
the agent, and SIGINT's default KeyboardInterrupt would leave the session's lock file behind.
A process that left its command's group (`setsid`) is found by its lifeline token (`coding/tools/lifeline.py`),
so these signals leave no more behind than a kill -9 does.
"""

from __future__ import annotations

import asyncio
import signal
from typing import TYPE_CHECKING, Awaitable, Callable

from . import output_pump, stdout_guard

if TYPE_CHECKING:
    from ..coding.agent_session import AgentSession

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
OUTPUT_FAILURE_EXIT = 1

stopped_by: str | None = None
"""The name of the signal that stopped the mode (`"SIGTERM"`), set as it arrives; None before one has."""


async def run_until_terminated(session: AgentSession | Callable[[], AgentSession | None],
                               mode: Awaitable[int]) -> int:
    """Run `mode` (a coroutine returning an exit code); on a signal in `SIGNALS` terminate the session and
    return 128 + signum instead, on an output failure terminate it and return `OUTPUT_FAILURE_EXIT`.
    `session` may be a function returning the session, or None while it is not built yet (the interactive
    mode builds it after its first paint): a signal then just stops the mode."""
    current = session if callable(session) else (lambda: session)
    global stopped_by
    stopped_by = None  # a new mode: no signal yet
    output_pump.serving()
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(mode)
    codes: list[int] = []
    terminating: list[asyncio.Task] = []

    def stop(code: int) -> None:
        global stopped_by
        if codes:
            return
        codes.append(code)
        if code > 128:
            stopped_by = signal.Signals(code - 128).name
        now = current()
        if not task.done() and not (now is not None and now.closed):  # a closed session's mode just finishes
            terminating.append(asyncio.ensure_future(_terminate(now, task)))

    for signum in SIGNALS:
        loop.add_signal_handler(signum, stop, 128 + signum)
        # asyncio hears of the signal through its wake-up descriptor; the Python-level handler it sets does
        # nothing. This one notes the signal where a wait for a client that does not read can see it.
        signal.signal(signum, output_pump.note_signal)
        signal.siginterrupt(signum, False)  # as asyncio left it (SA_RESTART): other threads' system calls go on
    stdout_guard.on_failure(lambda: stop(OUTPUT_FAILURE_EXIT))
    try:
        code = await _outcome(task, terminating)
    finally:
        stdout_guard.on_failure(None)
        for signum in SIGNALS:
            loop.remove_signal_handler(signum)
    await asyncio.gather(*terminating, return_exceptions=True)
    return codes[0] if codes else code


async def _outcome(task: asyncio.Task, terminating: list[asyncio.Task]) -> int:
    """The mode's exit code; 0 when termination cancelled it (the caller then uses the termination's code)."""
    try:
        return await task
    except asyncio.CancelledError:
        if not terminating:
            raise
        return 0


async def _terminate(session: AgentSession | None, task: asyncio.Task) -> None:
    from ..coding.tools import lifeline  # the signal has come: start-up time no longer matters

    running = lifeline.live_tokens()  # before the session stops the commands and releases their tokens
    try:
        if session is not None:
            await asyncio.wait_for(session.terminate(), timeout=10)
    finally:
        try:  # what escaped the process groups (`setsid`) goes too: the groups got their SIGTERM grace first
            await asyncio.to_thread(lifeline.sweep, running)
        finally:
            task.cancel()  # last: the signal handlers stay installed until the mode's task has ended
