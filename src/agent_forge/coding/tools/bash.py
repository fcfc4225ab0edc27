"""The `bash` tool: run a shell command in the working directory, streaming its output as progress."""

from __future__ import annotations

import asyncio
import math
import os
import time
from typing import TYPE_CHECKING, Callable, Protocol

from ...agent.types import ToolError, ToolResult, ToolUpdate, text_result
from ...ai.types import JsonValue, UserContent
from .args import check_object, optional_number, require_string
from .shell import ShellConfig, ShellResult, missing_cwd_error, run_shell, start_error
from .shell_output import TailBuffer
from .truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncationResult, append_notice, format_size
from ...words import counted

if TYPE_CHECKING:
    from .output_files import OutputDir


class CommandRunner(Protocol):
    async def run(self, tool_call_id: str, command: str, cwd: str, timeout: float | None) -> ShellResult | None:
        """Run `command` to its end (killing it after `timeout` seconds, or when cancelled); its result, or None
        to run it in a local shell instead. Raises `ToolError`."""
        ...

UPDATE_INTERVAL_S = 0.1
"""Progress updates are coalesced to at most one per interval: each carries up to 50 KB of text, and a
chatty command may produce thousands of reads per second."""

DESCRIPTION = (
    "Run a bash command in the working directory; stdout and stderr are merged. Only the last "
    f"{DEFAULT_MAX_LINES} lines or {format_size(DEFAULT_MAX_BYTES)} of output are returned (whichever is less); "
    "when output is cut, the full output is saved to a file whose path is given, which you can read or grep. "
    "A non-zero exit code is reported as an error. `timeout` (seconds) stops the command; there is none by "
    "default, so avoid commands that wait for input or never end (redirect long-running servers to a file "
    "and run them in the background)."
)

PARAMETERS: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "The bash command to run"},
        "timeout": {"type": "number", "description": "Stop the command after this many seconds (default: no limit)"},
    },
    "required": ["command"],
}


class BashTool:
    """`bash(command, timeout?)`; `details` is `{"truncation": TruncationResult | None, "fullOutputPath": str |
    None}`, on success and on `ToolError` alike.

    Progress: `on_update` gets the tail-truncated output so far (at most every `update_interval_s`; 0 sends
    one update per output chunk). The result is the output (`(no output)` when empty) with a notice when it
    was cut. Non-zero exit → `ToolError("<output>\\n\\nCommand exited with code N")`; timeout →
    `ToolError("<output>\\n\\nCommand timed out after N seconds")`. `timeout` 0 means no limit.
    """

    name = "bash"
    label = "Bash"
    description = DESCRIPTION
    parameters = PARAMETERS

    def __init__(self, cwd: str, *, update_interval_s: float = UPDATE_INTERVAL_S, shell: ShellConfig | None = None):
        self.cwd = cwd
        self.update_interval_s = update_interval_s
        self.output_dir: Callable[[], OutputDir] | None = None
        """Where full outputs go: the session sets its `AgentSession.output_dir` here (default: the process's)."""
        self.shell = shell or ShellConfig()  # settings `shellPath`, `shellCommandPrefix`
        self.terminals: CommandRunner | None = None
        """Where commands run instead of here (an editor's terminals over ACP); None: a local shell."""

    async def execute(self, tool_call_id: str, args: dict[str, JsonValue],
                      on_update: ToolUpdate | None = None) -> ToolResult:
        args = check_object(args)
        command = require_string(args, "command")
        timeout = optional_number(args, "timeout", minimum=0) or None
        if not os.path.isdir(self.cwd):
            raise ToolError(missing_cwd_error(self.cwd))
        if self.terminals is not None:
            result = await self.terminals.run(tool_call_id, command, self.cwd, timeout)
            if result is not None:
                return final_result(result, timeout)
        tail = TailBuffer()
        progress = _Progress(on_update, tail, self.update_interval_s) if on_update else None
        try:
            result = await run_shell(command, self.cwd, on_chunk=progress and progress.chunk, timeout_s=timeout,
                                     tail=tail, shell=self.shell,
                                     output_dir=self.output_dir() if self.output_dir else None)
        except OSError as exc:
            raise ToolError(start_error(exc)) from None
        finally:
            if progress:
                progress.stop()
        return final_result(result, timeout)


def final_result(result: ShellResult, timeout: float | None) -> ToolResult:
    """The tool result for a finished command; raises `ToolError` for a timeout or a non-zero exit code."""
    truncation = result.truncation
    text = result.output
    if truncation["truncated"]:
        text = append_notice(text, _truncation_notice(truncation, result))
    details = {"truncation": truncation if truncation["truncated"] else None,
               "fullOutputPath": result.full_output_path}
    if result.timed_out:
        seconds = f"{_seconds(timeout)} second{'' if timeout == 1 else 's'}"  # a float: `counted` takes counts
        raise ToolError(append_notice(text, f"Command timed out after {seconds}"), details)
    if result.exit_code != 0:
        raise ToolError(append_notice(text, f"Command exited with code {result.exit_code}"), details)
    return text_result(text or "(no output)", details)


def _truncation_notice(truncation: TruncationResult, result: ShellResult) -> str:
    where = f" Full output: {result.full_output_path}" if result.full_output_path else ""
    if not result.full_output_path and result.full_output_error:
        where = f" Full output not saved: {result.full_output_error}"
    total = truncation["totalLines"]
    if truncation["lastLinePartial"]:
        size = format_size(truncation["outputBytes"])
        return f"[Showing the last {size} of line {total}, which is longer than that.{where}]"
    by_bytes = f" ({format_size(truncation['maxBytes'])} limit)" if truncation["truncatedBy"] == "bytes" else ""
    shown = truncation["outputLines"]
    return f"[Showing last {counted(shown, 'line')} of {total}{by_bytes}.{where}]"


def _seconds(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return str(value)
    return str(int(value)) if value == int(value) else str(value)


class _Progress:
    """Sends the accumulated output to `on_update`, at most once per interval; output arriving in between is
    sent when the interval ends, so the last state is never lost."""

    def __init__(self, on_update: ToolUpdate, tail: TailBuffer, interval_s: float):
        self.on_update, self.tail, self.interval_s = on_update, tail, interval_s
        self._last_sent = -math.inf
        self._timer: asyncio.TimerHandle | None = None

    def chunk(self, _text: str) -> None:
        if self._timer is not None:
            return
        wait = self._last_sent + self.interval_s - time.monotonic()
        if wait <= 0:
            self._send()
        else:
            self._timer = asyncio.get_running_loop().call_later(wait, self._send)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _send(self) -> None:
        self._timer = None
        self._last_sent = time.monotonic()
        content: list[UserContent] = [{"type": "text", "text": self.tail.result()["content"]}]
        self.on_update(ToolResult(content=content, details={"truncation": None, "fullOutputPath": None}))
