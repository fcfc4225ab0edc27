"""bash in the editor's terminals (`BashTool.terminals`), when the client advertised `terminal`: the command
runs in `terminal/create` (`bash -c COMMAND` in the session's directory), the tool call embeds the terminal
(content `{"type": "terminal", "terminalId"}`) so the editor shows it live, and the result the model gets is
the terminal's output (`terminal/output`, cleaned and tail-truncated as a local command's) and exit status.

A `timeout` kills the terminal's command (`terminal/kill`); an abort kills and releases it without waiting
for the client's answers (an editor that never answers cannot hold up `session/cancel`). Every terminal is
released once its call is over.
"""

from __future__ import annotations

import asyncio
import signal
from typing import Any, Awaitable, Callable

from ...agent.types import ToolError
from ...coding.tools.sanitize import sanitize_output
from ...coding.tools.shell import ShellResult
from ...coding.tools.truncate import DEFAULT_MAX_BYTES, truncate_tail
from .protocol import AcpError

Request = Callable[[str, dict[str, Any]], Awaitable[Any]]
OUTPUT_LIMIT = 4 * DEFAULT_MAX_BYTES
"""`outputByteLimit` asked of the client: the model sees the last 50 KB; a little more keeps whole lines."""
RELEASE_WAIT_S = 5.0


class ClientTerminals:
    """`CommandRunner` over the client's `terminal/*` methods for session `session_id`; `on_terminal(call id,
    terminal id)` is told each terminal as it is created (the update translator embeds it)."""

    def __init__(self, request: Request, session_id: str):
        self.request, self.session_id = request, session_id
        self.on_terminal: Callable[[str, str], None] = lambda call_id, terminal_id: None
        self._cleanups: set[asyncio.Task[None]] = set()  # kill + release after aborts: awaited by `close`

    async def run(self, tool_call_id: str, command: str, cwd: str, timeout: float | None) -> ShellResult | None:
        terminal_id = await self._create(command, cwd)
        self.on_terminal(tool_call_id, terminal_id)
        ids = {"sessionId": self.session_id, "terminalId": terminal_id}
        try:
            status, timed_out = await self._wait(ids, timeout)
            output = await self.request("terminal/output", ids)
        except asyncio.CancelledError:  # an abort: stop the command, never wait for the client here
            cleanup = asyncio.ensure_future(self._kill_and_release(ids))
            self._cleanups.add(cleanup)
            cleanup.add_done_callback(self._cleanups.discard)
            raise
        except AcpError as exc:
            await self._release(ids)
            raise ToolError(f"The editor's terminal failed: {exc.message}") from None
        await self._release(ids)
        return _result(output, None if timed_out else status)

    async def _create(self, command: str, cwd: str) -> str:
        try:
            created = await self.request("terminal/create", {
                "sessionId": self.session_id, "command": "bash", "args": ["-c", command], "cwd": cwd,
                "outputByteLimit": OUTPUT_LIMIT})
        except AcpError as exc:
            raise ToolError(f"The editor could not start a terminal: {exc.message}") from None
        terminal_id = created.get("terminalId") if isinstance(created, dict) else None
        if not isinstance(terminal_id, str):
            raise ToolError("The editor's terminal/create answer has no terminalId")
        return terminal_id

    async def _wait(self, ids: dict[str, str], timeout: float | None) -> tuple[Any, bool]:
        """(exit status, timed out)."""
        try:
            return await asyncio.wait_for(self.request("terminal/wait_for_exit", ids), timeout), False
        except asyncio.TimeoutError:
            await self.request("terminal/kill", ids)
            return None, True

    async def _release(self, ids: dict[str, str]) -> None:
        try:
            await asyncio.wait_for(self._quietly("terminal/release", ids), RELEASE_WAIT_S)
        except asyncio.TimeoutError:
            pass

    async def close(self) -> None:
        """Wait (at most `RELEASE_WAIT_S`) for the kills and releases of aborted commands, then drop them: no
        task is left pending when the mode exits."""
        if self._cleanups:
            _done, pending = await asyncio.wait(set(self._cleanups), timeout=RELEASE_WAIT_S)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

    async def _kill_and_release(self, ids: dict[str, str]) -> None:
        await self._quietly("terminal/kill", ids)
        await self._quietly("terminal/release", ids)

    async def _quietly(self, method: str, ids: dict[str, str]) -> None:
        try:
            await self.request(method, ids)
        except AcpError:
            pass


def _result(output: Any, status: Any) -> ShellResult:
    """A `ShellResult` from `terminal/output` (`{output, truncated, exitStatus?}`) and the exit status of
    `terminal/wait_for_exit` (`{exitCode, signal}`; None after a timeout)."""
    text = sanitize_output(str(output.get("output", ""))) if isinstance(output, dict) else ""
    if isinstance(output, dict) and output.get("truncated"):  # the client kept only the tail
        text = f"[Earlier output was not kept by the editor's terminal.]\n{text}"
    truncation = truncate_tail(text)
    return ShellResult(output=truncation["content"], exit_code=_exit_code(status), cancelled=False,
                       timed_out=status is None, truncated=bool(truncation["truncated"]), full_output_path=None,
                       truncation=truncation)


def _exit_code(status: Any) -> int | None:
    if not isinstance(status, dict):
        return None
    if isinstance(status.get("exitCode"), int):
        return status["exitCode"]
    name = status.get("signal")
    try:
        return 128 + signal.Signals[str(name)].value
    except KeyError:
        return 1


def runner(capabilities: dict[str, Any], request: Request, session_id: str) -> ClientTerminals | None:
    """A `ClientTerminals` when the client's `initialize` capabilities offer `terminal`, else None."""
    return ClientTerminals(request, session_id) if capabilities.get("terminal") is True else None
