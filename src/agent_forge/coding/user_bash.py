"""Shell commands the user runs in a session (RPC `bash`): run, stream, abort, record as `bashExecution` messages.

Seed 000, "bash" / "abort_bash" / "BashExecutionMessage": the command runs in the session's working directory
in its own process group; its result is stored in the agent's messages and the session file as a
`bashExecution` message, which reaches the model as user text on the next prompt (`coding/messages.py`).

Decisions where the seeds are silent:
- Several commands may run at once; `abort()` stops all of them (the protocol's `abort_bash` names none).
- A command finishing while the agent runs is held back and added when the run settles, so it never lands
  between a tool call and its result (the reference agent defers it the same way). It is on disk before its
  response all the same: a hidden `custom` entry (`USER_BASH_PENDING`, `data: {"message": <the message>}`, never
  part of the context) is written at once, and the `message` entry at settle. A session killed in between is
  made whole when it is opened again (`restore_pending`): each pending entry of the branch with no equal
  `bashExecution` message after it becomes a message after the branch's last entry, once.
- No event announces the message itself (seed 003: "This message does NOT emit an event").
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Awaitable, Callable, NotRequired, TYPE_CHECKING, TypedDict

from ..agent.loop import now_ms
from .errors import CommandError
from .message_persist import persist_message
from .session.entries import USER_BASH_PENDING, holds_custom_type
from .session.shapes import context_message
from .tools.shell import ShellConfig, ShellResult, missing_cwd_error, run_shell, start_error

if TYPE_CHECKING:
    from ..agent.agent import Agent
    from .settings import Settings
    from .session.store import SessionStore


class BashResult(TypedDict):
    """The `bash` response data. `exitCode` is null when the command was cancelled; `fullOutputPath` (a temp
    file with the complete output) is present only when `truncated`; when that file could not be written
    (a missing or full temp dir), `fullOutputError` says why instead (the OS's reason, e.g. `No space left on
    device`)."""

    output: str
    exitCode: int | None
    cancelled: bool
    truncated: bool
    fullOutputPath: NotRequired[str]
    fullOutputError: NotRequired[str]


class BashExecutionMessage(TypedDict):
    """`{role: "bashExecution", ...}` (seed 000 "BashExecutionMessage"); `output` is the truncated tail (2000
    lines / 50 KB), `fullOutputPath` null unless truncated, `timestamp` Unix ms at completion.
    `fullOutputError` (ours) is there when the output was truncated but could not be saved: the OS's reason;
    `totalLines` (ours) when it was truncated: how many lines the whole output had."""

    role: str
    command: str
    output: str
    exitCode: int | None
    cancelled: bool
    truncated: bool
    fullOutputPath: str | None
    timestamp: int
    excludeFromContext: NotRequired[bool]
    fullOutputError: NotRequired[str]
    totalLines: NotRequired[int]


class UserBash:
    """Runs user commands for one session (`AgentSession.user_bash`). `store()` is the session's current store
    and `busy()` whether a run is going on; both are read at each use, so a session that swaps its store
    (new_session, switch_session) is followed. `output_dir()` is where full outputs go."""

    def __init__(self, *, cwd: str, agent: Agent, settings: Settings, store: Callable[[], SessionStore], busy: Callable[[], bool],
                 output_dir: Callable[[], Any]):
        self._cwd = cwd
        self._agent = agent
        self._settings = settings
        self._store = store
        self._busy = busy
        self._output_dir = output_dir
        self._running: dict[asyncio.Event, asyncio.Future[None]] = {}
        self._held: list[BashExecutionMessage] = []

    @property
    def running(self) -> int:
        """How many commands are running now."""
        return len(self._running)

    async def run(self, command: str, *, on_chunk: Callable[[str], None] | None = None,
                  exclude_from_context: bool = False) -> BashResult:
        """Run `command` in the session cwd to completion (or until `abort()`), record it, return the result.

        `on_chunk` gets every piece of decoded output as it arrives, truncated or not. A non-zero exit is a
        result, not an error. Raises `CommandError` when the command is empty or cannot be started (missing
        working directory, NUL character, shell not found).
        """
        cwd = self._cwd
        _check_runnable(command, cwd)
        abort = asyncio.Event()
        finished: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._running[abort] = finished
        try:
            result = await _run(command, cwd, on_chunk, abort, self._shell(), self._output_dir())
            message = bash_execution_message(command, result, exclude_from_context=exclude_from_context)
            self.record(message)
        finally:
            del self._running[abort]
            finished.set_result(None)
        return bash_result(message)

    async def abort(self) -> None:
        """Stop every running command (SIGTERM to its process group, SIGKILL after a grace period) and wait
        until each has been recorded. Returns at once when nothing runs."""
        await self.begin_abort()

    def begin_abort(self) -> Awaitable[object]:
        """`abort` in two parts: the commands running now are told to stop now (one started later runs on);
        the returned awaitable (await it) ends once each of them has been recorded."""
        waiting = list(self._running.values())
        for abort in self._running:
            abort.set()
        return asyncio.wait(waiting) if waiting else _nothing()

    def _shell(self) -> ShellConfig:
        """The settings `shellPath` and `shellCommandPrefix` (a project's only when trusted: settings.py)."""
        settings = self._settings
        return ShellConfig(getattr(settings, "shell_path", None), getattr(settings, "shell_command_prefix", None))

    def record(self, message: BashExecutionMessage) -> None:
        """Add `message` to the conversation now, or when the running agent settles (on disk now all the
        same, as a pending entry: module docstring)."""
        if self._busy():
            self._store().append_custom(USER_BASH_PENDING, {"message": message})
            self._held.append(message)
        else:
            self._append(message)

    def flush_held(self) -> None:
        """Add the messages held back during a run; the session calls this as the run settles."""
        held, self._held = self._held, []
        for message in held:
            self._append(message)

    def restore_pending(self) -> int:
        """Add the messages a session killed before its run settled left pending (`pending_messages` of the
        active branch), after the branch's last entry; the session calls this when it opens a file or moves to
        another (`switching.py`: a fork may copy a pending entry without its settle). Returns
        how many were added; a second call adds none."""
        store = self._store()
        pending = pending_messages(store.branch()) if "custom" in store.branch_types() else []
        for message in pending:
            self._append(message)
        return len(pending)

    def _append(self, message: BashExecutionMessage) -> None:
        persist_message(self._store(), message)  # on disk before anyone can see it (shrunk in place to fit)
        self._agent.messages.append(message)


async def _nothing() -> None:
    return None


def pending_messages(branch: list[Any]) -> list[BashExecutionMessage]:
    """The messages of the `USER_BASH_PENDING` entries of `branch` (entries root → leaf) that no equal
    `bashExecution` message entry follows, in order. Pending entries whose message is unusable (a hand edit)
    are left alone."""
    if not holds_custom_type(branch, USER_BASH_PENDING):  # the usual branch: one quick pass
        return []
    waiting: list[Any] = []
    for entry in branch:
        kind = entry.get("type")
        if kind == "custom" and entry.get("customType") == USER_BASH_PENDING:
            data = entry.get("data")
            message = data.get("message") if isinstance(data, dict) else None
            if context_message(message) is not None and message.get("role") == "bashExecution":
                waiting.append(message)
        elif kind == "message" and waiting and entry.get("message") in waiting:
            waiting.remove(entry["message"])  # settled: the run's end wrote it
    return waiting


def _check_runnable(command: str, cwd: str) -> None:
    """What a shell needs of a command: some text that can be an argv entry, and a working directory. (RPC mode
    refuses such fields before they get here, in its own words: modes/rpc/validation.py.)"""
    if not command.strip():
        raise CommandError("The command is empty: there is nothing to run")
    if "\0" in command:
        raise CommandError("The command contains a NUL character, which no shell can be given")
    try:
        command.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from JSON escapes cannot become an argv entry
        raise CommandError("The command is not valid Unicode text (it has a lone surrogate)") from None
    if not os.path.isdir(cwd):
        raise CommandError(missing_cwd_error(cwd))


async def _run(command: str, cwd: str, on_chunk: Callable[[str], None] | None,
               abort: asyncio.Event, shell: ShellConfig, output_dir: Any) -> ShellResult:
    try:
        return await run_shell(command, cwd, on_chunk=on_chunk, abort=abort, shell=shell, output_dir=output_dir)
    except OSError as exc:
        raise CommandError(start_error(exc)) from None


def bash_execution_message(command: str, result: ShellResult, *,
                           exclude_from_context: bool = False) -> BashExecutionMessage:
    """The stored message for a finished command."""
    message: BashExecutionMessage = {
        "role": "bashExecution", "command": command, "output": result.output,
        "exitCode": None if result.cancelled else result.exit_code, "cancelled": result.cancelled,
        "truncated": result.truncated, "fullOutputPath": result.full_output_path, "timestamp": now_ms(),
    }
    if exclude_from_context:
        message["excludeFromContext"] = True
    total = result.truncation.get("totalLines") if result.truncated else None
    if isinstance(total, int):
        message["totalLines"] = total
    if result.truncated and not result.full_output_path and result.full_output_error:
        message["fullOutputError"] = result.full_output_error
    return message


def bash_result(message: BashExecutionMessage) -> BashResult:
    """The `bash` response data for a recorded message."""
    result: BashResult = {"output": message["output"], "exitCode": message["exitCode"],
                          "cancelled": message["cancelled"], "truncated": message["truncated"]}
    if message["truncated"] and message["fullOutputPath"]:
        result["fullOutputPath"] = message["fullOutputPath"]
    elif "fullOutputError" in message:
        result["fullOutputError"] = message["fullOutputError"]
    return result
