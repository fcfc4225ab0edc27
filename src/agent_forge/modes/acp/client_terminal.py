"""bash in the editor's terminals (`BashTool.terminals`), when the client advertised `terminal`: the command
runs in `terminal/create` (`bash -c COMMAND` in the session's directory), the tool call embeds the terminal
(content `{"type": "terminal", "terminalId"}`) so the editor shows it live, and the result the model gets is
the terminal's output (`terminal/output`, cleaned and tail-truncated as a local command's) and exit status.

A `timeout` kills the terminal's command (`terminal/kill`); an abort kills and releases it without waiting
for the client's answers (an editor that never answers cannot hold up `session/cancel`). Every terminal is
released once its call is over, and so is one whose `terminal/create` answer comes after an abort.
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
EDITOR_CUT = "[Earlier output was not kept by the editor's terminal.]"


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
            self._clean_up(self._kill_and_release(ids))
            raise
        except AcpError as exc:
            await self._release(ids)
            raise ToolError(f"The editor's terminal failed: {exc.message}") from None
        await self._release(ids)
        return _result(output, None if timed_out else status)

    async def _create(self, command: str, cwd: str) -> str:
        """The new terminal's id. Cancelled before the client answered, the answer is still awaited (in
        `_cleanups`): a terminal it creates is killed and released, never left running in the editor."""
        asked = asyncio.ensure_future(self.request("terminal/create", {
            "sessionId": self.session_id, "command": "bash", "args": ["-c", command], "cwd": cwd,
            "outputByteLimit": OUTPUT_LIMIT}))
        try:
            created = await asyncio.shield(asked)
        except asyncio.CancelledError:
            self._clean_up(self._release_late(asked))
            raise
        except AcpError as exc:  # an error answer, or one without a string terminalId (`answers.py`)
            raise ToolError(f"The editor could not start a terminal: {exc.message}") from None
        return str(created["terminalId"])

    async def _release_late(self, asked: "asyncio.Future[Any]") -> None:
        try:
            created = await asked
        except AcpError:
            return  # no terminal was made
        await self._kill_and_release({"sessionId": self.session_id, "terminalId": str(created["terminalId"])})

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

    def _clean_up(self, work: Awaitable[None]) -> None:
        """Run `work` (kills and releases after an abort) in the background; `close` waits for it."""
        cleanup = asyncio.ensure_future(work)
        self._cleanups.add(cleanup)
        cleanup.add_done_callback(self._cleanups.discard)

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


def _result(output: dict[str, Any], status: Any) -> ShellResult:
    """A `ShellResult` from `terminal/output` (`{output, truncated, exitStatus?}`, shape checked by `answers.py`)
    and the exit status of `terminal/wait_for_exit` (`{exitCode, signal}`; None after a timeout). The output is
    cut to the model's limits first, then `EDITOR_CUT` goes in front when the editor had cut it already: the
    notice always reaches the model, and the line counts are those of the text the editor kept."""
    text = sanitize_output(output["output"])
    truncation = truncate_tail(text)
    kept, editor_cut = truncation["content"], bool(output.get("truncated"))
    if editor_cut:
        kept = f"{EDITOR_CUT}\n{kept}"
    return ShellResult(output=kept, exit_code=_exit_code(status), cancelled=False, timed_out=status is None,
                       truncated=bool(truncation["truncated"]), full_output_path=None, truncation=truncation,
                       full_output_error="the editor's terminal kept only the end of it" if editor_cut else None)


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
