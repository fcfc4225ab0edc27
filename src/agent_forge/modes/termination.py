"""SIGTERM, SIGHUP and SIGINT end a mode the way stdin EOF would not: abort the run, kill every child process
group and whatever else still carries a running command's lifeline token, release the session file, and exit
with 128 + the signal number.

Editors stop an embedded agent with SIGTERM (Node's `child.kill()` default) or close its terminal (SIGHUP), and
Ctrl-C in a terminal sends SIGINT to the agent too; without this, a running build or server started by the
`bash` tool would outlive the agent. A process that left its command's group (`setsid`) is found by its token
(`coding/tools/lifeline.py`), so these signals leave no more behind than a kill -9 does.
"""

from __future__ import annotations

import asyncio
import signal
from typing import Any, Awaitable

SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


async def run_until_terminated(session: Any, mode: Awaitable[int]) -> int:
    """Run `mode` (a coroutine returning an exit code); on SIGTERM/SIGHUP/SIGINT terminate the session and
    return 128 + signum instead."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(mode)
    received: list[int] = []
    terminating: list[asyncio.Task] = []

    def on_signal(signum: int) -> None:
        if not terminating:
            received.append(signum)
            terminating.append(asyncio.ensure_future(_terminate(session, task)))

    for signum in SIGNALS:
        loop.add_signal_handler(signum, on_signal, signum)
    try:
        code = await task
    except asyncio.CancelledError:
        if not terminating:
            raise
    finally:
        for signum in SIGNALS:
            loop.remove_signal_handler(signum)
    if not terminating:
        return code
    await asyncio.gather(*terminating, return_exceptions=True)
    return 128 + received[0]


async def _terminate(session: Any, task: asyncio.Task) -> None:
    from ..coding.tools import lifeline  # the signal has come: start-up time no longer matters

    running = lifeline.live_tokens()  # before the session stops the commands and releases their tokens
    try:
        await asyncio.wait_for(session.terminate(), timeout=10)
    finally:
        try:  # what escaped the process groups (`setsid`) goes too: the groups got their SIGTERM grace first
            await asyncio.to_thread(lifeline.sweep, running)
        finally:
            task.cancel()  # last: the signal handlers stay installed until the mode's task has ended
