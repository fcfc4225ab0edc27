"""MCP tool calls once the client is gone: a deadline, so a server that never answers cannot keep the agent alive.
And a call's own limit (`toolTimeoutMs`, or print mode's default): nobody can abort a call in print mode.

At stdin EOF (RPC mode) or `AgentSession.close()` the agent finishes its work and exits. A call to a server
that never answers would make that wait endless, so from then on each running (or later) MCP tool call gets
`pluginHandlerTimeoutMs` (agent dir `settings.json`, default 10 s), as plugin tools do; one still running then
is cancelled (the SDK sends `notifications/cancelled`) and its result is an error saying why; the run goes on.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, TypeVar

T = TypeVar("T")

DEFAULT_TIMEOUT_S = 10.0
"""As the plugins' `pluginHandlerTimeoutMs` default (plugins/runner.py `HANDLER_TIMEOUT_S`)."""


class CallExpired(Exception):
    """The call was cancelled `seconds` after the input closed, or (`limit`) after `seconds` of running."""

    def __init__(self, seconds: float, *, limit: bool = False):
        super().__init__(seconds)
        self.seconds = seconds
        self.limit = limit


class CallDeadlines:
    """The running MCP tool calls; `timeout()` is in seconds. Before `input_closed()` calls have no limit."""

    def __init__(self, timeout: Callable[[], float] = lambda: DEFAULT_TIMEOUT_S):
        self._timeout = timeout
        self._running: set[asyncio.Task] = set()
        self._expired: dict[asyncio.Task, CallExpired] = {}
        self._closed = False

    async def run(self, call: Awaitable[T], limit: float | None = None) -> T:
        """`await call`, as a task of its own (cancelling the caller cancels it), for at most `limit` seconds
        when given. Raises `CallExpired` when the limit or the deadline after `input_closed` cancelled it."""
        task: asyncio.Task = asyncio.ensure_future(call)
        self._running.add(task)
        timer = asyncio.get_running_loop().call_later(limit, self._expire, task, CallExpired(limit, limit=True)) \
            if limit is not None else None
        if self._closed:
            self._arm(task)
        try:
            return await task
        except asyncio.CancelledError:
            if task in self._expired and not _caller_cancelled():
                raise self._expired[task] from None
            raise
        finally:
            if timer is not None:
                timer.cancel()
            self._running.discard(task)
            self._expired.pop(task, None)

    def input_closed(self) -> None:
        """From now on every running and later call has its deadline (idempotent)."""
        if not self._closed:
            self._closed = True
            for task in list(self._running):
                self._arm(task)

    def _arm(self, task: asyncio.Task) -> None:
        seconds = self._timeout()
        asyncio.get_running_loop().call_later(seconds, self._expire, task, CallExpired(seconds))

    def _expire(self, task: asyncio.Task, why: CallExpired) -> None:
        if not task.done() and task not in self._expired:
            self._expired[task] = why
            task.cancel()


def _caller_cancelled() -> bool:
    current: Any = asyncio.current_task()
    return bool(current is not None and current.cancelling())
