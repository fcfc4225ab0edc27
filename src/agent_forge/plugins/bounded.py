"""The one way the agent awaits plugin code: in a task of its own, for a bounded time, never waiting for it
after a cancellation it ignores.

Plugin code may catch `asyncio.CancelledError` and go on (`while True: try: await sleep() except
CancelledError: pass`). Awaited in the caller's own task, such code keeps the caller waiting for ever: a timeout
or an abort only cancels it again. So `bounded` runs the plugin's coroutine as a separate task and waits for
*that* task (`asyncio.wait`), which the caller can always stop waiting for: on its timeout or its own
cancellation it cancels the plugin task, gives it `grace` seconds to clean up, and then goes on without it
(the task is *abandoned*: kept referenced so it is not collected mid-run, its eventual outcome retrieved, and
`on_abandoned` told, so the caller can report it). Synchronous plugin code runs in a worker thread that no
cancellation reaches (`threads.py`): a thread still running when the grace period ends counts the same way.
That report is made before `bounded` returns or raises, so it comes before whatever the caller does next (a
tool's `tool_execution_end`, a command's `agent_settled`).
"""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable, TypeVar

from ..coding.env_waits import wait_from_env
from .isolation import spawn_contained
from .threads import live_threads

_T = TypeVar("_T")


CANCEL_GRACE_S = wait_from_env("AGENT_FORGE_CANCEL_GRACE_MS", 1.0)
"""Seconds cancelled plugin code gets to end (clean up after `CancelledError`) before the agent goes on, and
tasks still running at exit get (`cli_loop`): 1 s, or `AGENT_FORGE_CANCEL_GRACE_MS`, read at start-up."""

_ABANDONED: set[asyncio.Task] = set()  # plugin tasks that ignored their cancellation, until they end


class PluginTimeout(Exception):
    """`bounded`'s timeout passed: the plugin task was cancelled (and, if it ignored that, abandoned)."""


async def bounded(awaitable: Awaitable[_T], timeout: float | None = None, *,
                  extend: Callable[[], bool] | None = None, grace: float = CANCEL_GRACE_S,
                  on_timeout: Callable[[], None] | None = None,
                  on_abandoned: Callable[[], None] | None = None) -> _T:
    """`awaitable`'s result (or exception), awaited as a task of its own for at most `timeout` seconds (None:
    no limit); when the time is up and `extend()` is true (a dialog waits for the client), another `timeout`.

    Raises `PluginTimeout` when the time is up (`on_timeout()` is called first); `CancelledError` when the caller is cancelled. Either way the
    plugin task is cancelled first and gets `grace` seconds to end; one still running then is abandoned
    (`on_abandoned()` is called) and the caller goes on at once. A second cancellation of the caller during the
    grace period ends the wait early (the task is abandoned likewise)."""
    task = spawn_contained(awaitable)
    try:
        while not await _wait(task, timeout):
            if extend is None or not extend():
                break
        else:
            return task.result()
    except asyncio.CancelledError:
        await give_up(task, grace, on_abandoned)
        raise
    if on_timeout is not None:
        on_timeout()
    await give_up(task, grace, on_abandoned)
    raise PluginTimeout(f"did not finish within {timeout:g} s")


class _Waiter(asyncio.Future):
    """What the caller awaits: done when the plugin task is, or when the time is up. Cancelling the caller
    cancels this future, and so the plugin task, in the same step: a dialog answered meanwhile (abort gives
    pending dialogs their defaults) cannot reach the plugin code before its cancellation does."""

    def __init__(self, task: asyncio.Future) -> None:
        super().__init__(loop=task.get_loop())
        self._task = task

    def cancel(self, msg: object = None) -> bool:
        self._task.cancel(msg)
        return super().cancel(msg)

    def finish(self, *_: object) -> None:
        if not self.done():
            self.set_result(None)


async def _wait(task: asyncio.Future, timeout: float | None) -> bool:
    """Wait for `task` for at most `timeout` seconds (None: no limit); True when it is done."""
    waiter = _Waiter(task)
    task.add_done_callback(waiter.finish)
    timer = None if timeout is None else task.get_loop().call_later(timeout, waiter.finish)
    try:
        await waiter
    finally:
        task.remove_done_callback(waiter.finish)
        if timer is not None:
            timer.cancel()
    return task.done()


async def give_up(task: asyncio.Future, grace: float = CANCEL_GRACE_S,
                  on_abandoned: Callable[[], None] | None = None) -> bool:
    """Cancel `task` and wait up to `grace` seconds for it to end; True when it ended. One that did not is
    abandoned (see the module docstring) and `on_abandoned()` is called. Never raises but for the caller's
    own cancellation, which still abandons the task first."""
    task.cancel()
    deadline = task.get_loop().time() + grace
    try:
        await asyncio.wait({task}, timeout=grace)
        threads = live_threads(task) if task.done() else set()
        if threads:  # synchronous plugin code cannot see the cancellation: its thread gets the same grace
            await asyncio.wait(threads, timeout=max(0.0, deadline - task.get_loop().time()))
    except asyncio.CancelledError:
        abandon(task, on_abandoned)
        raise
    if task.done() and not live_threads(task):
        _retrieve(task)
        return True
    abandon(task, on_abandoned)
    return False


async def stoppable(work: Awaitable[object], running: set[asyncio.Task]) -> None:
    """Await `work` as a task kept in `running` meanwhile, so that cancelling the tasks in `running` (an
    `abort`) ends it early; `work` awaits plugin code through `bounded`, so a cancellation reaching it is over
    within the grace. Cancelling the caller cancels `work` too, waits for it to end, and propagates. `work`'s
    exceptions propagate."""
    from ..agent.loop import abortable_step  # the one abortable-step idiom; loaded with the session already

    step: asyncio.Task | None = None

    def track(task: asyncio.Task | None) -> None:
        nonlocal step
        if task is None:
            running.discard(step)
        else:
            running.add(task)
        step = task

    await abortable_step(work, track=track)


def abandon(task: asyncio.Future, on_abandoned: Callable[[], None] | None = None) -> None:
    """Stop waiting for `task`: keep it referenced until it ends, retrieve its outcome then, tell `on_abandoned`
    (also when `task` is done but a worker thread it started still runs)."""
    if task.done():
        _retrieve(task)
        if live_threads(task) and on_abandoned is not None:
            on_abandoned()
        return
    if isinstance(task, asyncio.Task):
        _ABANDONED.add(task)
        task.add_done_callback(_ABANDONED.discard)
    task.add_done_callback(_retrieve)
    if on_abandoned is not None:
        on_abandoned()


def abandoned_count() -> int:
    """How many abandoned plugin tasks are still running (for tests and diagnostics)."""
    return len(_ABANDONED)


def _retrieve(task: asyncio.Future) -> None:
    if not task.cancelled():
        task.exception()  # retrieved: no "exception was never retrieved" noise at exit
