"""Plugin tools after stdin closed: a deadline, so a blocked tool cannot keep the agent alive for ever.

At stdin EOF the agent finishes its work and exits (docs/rpc.md). A synchronous plugin tool stuck in
`time.sleep(1000)` would make that wait endless: its worker thread cannot be stopped. So from EOF on, each plugin
tool call running (or starting later) gets `pluginHandlerTimeoutMs`, as plugin commands do; one still running
then is reported and the run is aborted (its thread, a daemon, is abandoned and cannot keep the process alive).
Print and JSON mode, where nobody can abort, close the input from the start (`print_mode.run_print_mode`).
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any, Awaitable, Callable


class ToolDeadlines:
    """Tracks running plugin tool calls (each `call` any object, e.g. the PluginTool). When a call outlives
    `timeout()` seconds after `input_closed()`, `report(call, message)` tells of it and `abort()` (the session's)
    ends the run; a call that ends first is forgotten."""

    def __init__(self, timeout: Callable[[], float], report: Callable[[Any, str], None],
                 abort: Callable[[], Awaitable[None]]):
        self._timeout = timeout
        self._report = report
        self._abort = abort
        self._running: dict[int, Any] = {}
        self._timers: dict[int, asyncio.TimerHandle] = {}
        self._tokens = itertools.count()
        self._closed = False
        self._aborting: asyncio.Future[None] | None = None

    def enter(self, call: Any) -> int:
        """Note `call` starting; returns the token to pass to `exit` when it ends."""
        token = next(self._tokens)
        self._running[token] = call
        if self._closed:
            self._arm(token)
        return token

    def exit(self, token: int) -> None:
        self._running.pop(token, None)
        timer = self._timers.pop(token, None)
        if timer is not None:
            timer.cancel()

    def report(self, call: Any, message: str) -> None:
        """Tell of `call` failing with `message` (as the deadline itself does)."""
        self._report(call, message)

    def input_closed(self) -> None:
        """From now on every running and later call has its deadline."""
        if not self._closed:
            self._closed = True
            for token in list(self._running):
                self._arm(token)

    def _arm(self, token: int) -> None:
        timeout = self._timeout()
        self._timers[token] = asyncio.get_running_loop().call_later(timeout, self._fire, token, timeout)

    def _fire(self, token: int, timeout: float) -> None:
        self._timers.pop(token, None)
        call = self._running.get(token)
        if call is None:
            return
        self._report(call, f"TimeoutError: the tool was still running {timeout:g} s after stdin closed (in print "
                           "and JSON mode: after it started; pluginHandlerTimeoutMs); the run was aborted")
        if self._aborting is None or self._aborting.done():
            self._aborting = asyncio.ensure_future(self._abort())


def runner_deadlines(runner: Any) -> ToolDeadlines:
    """The deadlines of a `PluginRunner`'s tools: its `handler_timeout`, reported as the tool's plugin failing in
    `tool:<name>`, the run ended by the session's `abort`."""
    def report(tool: Any, error: str) -> None:
        runner.report(tool.spec.plugin, f"tool:{tool.name}", error)

    return ToolDeadlines(lambda: runner.handler_timeout, report, runner.session.abort)
