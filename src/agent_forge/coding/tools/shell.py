"""Running a shell command in its own process group with streamed, bounded output, timeout and abort.

Shared by the `bash` tool and the RPC `bash` command.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from .procgroup import kill_command, terminate_group
from .shell_output import OutputCollector, TailBuffer, os_error_text
from .truncate import TruncationResult, append_notice
from ..paths import path_text

if TYPE_CHECKING:
    from .output_files import OutputDir

DRAIN_GRACE_S = 0.25
"""After the shell exits (or is killed), how long to keep reading output still in the pipe. A background
process that inherited the pipe would otherwise keep the call waiting for an end of output forever."""


@dataclass
class ShellResult:
    """What `run_shell` returns.

    `output` is the tail of the cleaned output (`sanitize.sanitize_output`: no escape sequences or control
    characters) that fits the limits (2000 lines / 50 KB), followed by the sanitizer's note when cleaning
    removed or overwrote anything (`[Output cleaned: ...]`), `truncation` describes the cut (`truncated` mirrors
    its flag), and `full_output_path` names the temp file holding the complete raw output when it exceeded
    the limits (raw or cleaned; so a path can come with an untruncated `output` that cleaning shrank);
    `full_output_error` says why there is no such file when there should be one (`No space left on device`).
    `exit_code` is None when the command was stopped (`timed_out` or `cancelled`); a command killed by some
    other signal N reports 128 + N, as shells do.
    """

    output: str
    exit_code: int | None
    cancelled: bool
    timed_out: bool
    truncated: bool
    full_output_path: str | None
    truncation: TruncationResult
    full_output_error: str | None = None


@functools.cache
def shell_path() -> str:
    """`bash` from PATH, else `/bin/sh`."""
    import shutil  # imported on first use: it pulls in compression modules the CLI start-up does not need

    return shutil.which("bash") or shutil.which("sh") or "/bin/sh"


@dataclass(frozen=True)
class ShellConfig:
    """Which shell runs commands, from the settings of the same names (the reference agent's `settings.md`).

    `path` (`shellPath`): the shell executable, a leading `~` expanded; None uses `shell_path()`. It is run as
    `<path> -c <command>`. `command_prefix` (`shellCommandPrefix`): text run before every command, joined to it
    by a newline (e.g. `shopt -s expand_aliases`); None or "" adds nothing.
    """

    path: str | None = None
    command_prefix: str | None = None

    def argv(self, command: str) -> list[str]:
        """The shell's argument vector for `command`."""
        shell = os.path.expanduser(self.path) if self.path else shell_path()
        if self.command_prefix:
            command = f"{self.command_prefix}\n{command}"
        return [shell, "-c", command]


def cannot_run(reason: str) -> str:
    """The one wording of a command that could not start, for the `bash` tool and the RPC `bash` command
    alike: `Cannot run the command: <reason>`."""
    return f"Cannot run the command: {reason}"


def start_error(exc: OSError) -> str:
    """`cannot_run` for a shell the OS could not start, naming the file (the shell or the directory) when the
    OS did: `Cannot run the command: No such file or directory: /home/me/bin/mysh`."""
    return cannot_run(os_error_text(exc))


def missing_cwd_error(cwd: str) -> str:
    """`cannot_run` for a working directory that no longer exists."""
    return cannot_run(f"working directory {path_text(cwd)} does not exist")


async def run_shell(
    command: str,
    cwd: str,
    *,
    on_chunk: Callable[[str], None] | None = None,
    timeout_s: float | None = None,
    abort: asyncio.Event | None = None,
    tail: TailBuffer | None = None,
    output_dir: OutputDir | None = None,
    shell: ShellConfig | None = None,
) -> ShellResult:
    """Run `shell -c command` in `cwd` (`shell`: which shell and prefix, default `ShellConfig()`), stdin from
    /dev/null, stdout and stderr merged.

    `on_chunk` receives each decoded and cleaned piece of output as it arrives; a `\\r` in a piece means the
    current line restarts (a progress bar redraws). `timeout_s` (None: no limit) stops the command with
    `timed_out=True`; setting `abort` stops it with `cancelled=True`. Stopping sends SIGTERM to the command's
    whole process group and to every process carrying its `lifeline` token (one that left the group with
    `setsid`), and SIGKILL to what still runs after a grace period (`procgroup.terminate_group`). If the
    calling task is cancelled, the command is stopped the same way and `CancelledError` propagates. A command
    that ended by itself leaves its background jobs running. `tail` lets the caller supply the
    `TailBuffer` (to show progress from it); `output_dir` receives the full output file (`output_files.py`).
    Raises `OSError` when the shell cannot be started (e.g. `cwd`
    does not exist), and re-raises an exception from `on_chunk` after stopping the command.

    While the command runs, its processes carry a `lifeline` token, so they are killed if this process dies
    without stopping them (kill -9).
    """
    from . import lifeline  # imported on first use: start-up does not run commands

    watch = lifeline.token()
    try:
        env = None if watch is None else {**os.environ, lifeline.ENV_VAR: watch}
        argv = (shell or ShellConfig()).argv(command)
        return await _run(argv, cwd, watch, env, OutputCollector(on_chunk, tail, output_dir), timeout_s, abort)
    finally:
        lifeline.release(watch)


async def _run(argv: list[str], cwd: str, token: str | None, env: dict[str, str] | None,
               collector: OutputCollector, timeout_s: float | None, abort: asyncio.Event | None) -> ShellResult:
    """`run_shell` once the command is registered: `token` is its lifeline token (in `env`), None without one.
    A stopped command (timeout, abort, error, cancellation) takes its group and every carrier of `token`."""
    proc, transport, reader = await _spawn(argv, cwd, token, env, collector)
    try:
        stop_reason = await _wait_for_exit(proc, reader, timeout_s, abort)
        if stop_reason is not None:
            await terminate_group(proc.pid, token=token)
        await proc.wait()
        await asyncio.wait({reader.closed}, timeout=DRAIN_GRACE_S)
    except asyncio.CancelledError:
        await _stop_after_cancel(proc.pid, token, transport, collector)
        raise
    transport.close()
    collector.finish()
    if reader.error is not None:
        raise reader.error
    return _result(collector, proc.returncode, stop_reason)


class _PipeReader(asyncio.Protocol):
    """Feeds the read end of the output pipe into the collector."""

    def __init__(self, collector: OutputCollector):
        loop = asyncio.get_running_loop()
        self.collector = collector
        self.closed: asyncio.Future[None] = loop.create_future()
        self.failed: asyncio.Future[None] = loop.create_future()
        self.error: BaseException | None = None

    def data_received(self, data: bytes) -> None:
        if self.error is not None:
            return
        try:
            self.collector.feed(data)
        except Exception as exc:  # the callback's failure must reach the caller, not the event loop's log
            self.error = exc
            self.failed.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


async def _spawn(argv: list[str], cwd: str, token: str | None, env: dict[str, str] | None,
                 collector: OutputCollector):
    read_fd, write_fd = os.pipe()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=cwd, env=env, stdin=asyncio.subprocess.DEVNULL, stdout=write_fd, stderr=write_fd,
            start_new_session=True,
        )
    except ValueError as exc:  # a NUL byte in an argument (the command, `shellPath`) or the environment
        os.close(read_fd)
        raise OSError(errno.EINVAL, f"{exc}: a command, its shell path and environment cannot hold a NUL "
                                    "byte") from None
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)  # only the child keeps the write end, so EOF arrives when its group closes it
    loop = asyncio.get_running_loop()
    try:
        transport, reader = await loop.connect_read_pipe(
            lambda: _PipeReader(collector), os.fdopen(read_fd, "rb", buffering=0))
    except BaseException:  # cancelled in between: nobody would ever stop the command
        kill_command(proc.pid, token)
        raise
    return proc, transport, reader


async def _wait_for_exit(proc, reader: _PipeReader, timeout_s: float | None, abort: asyncio.Event | None):
    """None when the command exits by itself; otherwise why it must be stopped: timeout, abort or error."""
    exited = asyncio.ensure_future(proc.wait())
    reasons = {exited: None, reader.failed: "error"}
    if abort is not None:
        reasons[asyncio.ensure_future(abort.wait())] = "abort"
    try:
        done, _ = await asyncio.wait(reasons, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in reasons:
            if waiter is not reader.failed:
                waiter.cancel()
    if exited in done:
        return None
    return "timeout" if not done else reasons[next(iter(done))]


async def _stop_after_cancel(pgid: int, token: str | None, transport: asyncio.BaseTransport,
                             collector: OutputCollector) -> None:
    try:
        await terminate_group(pgid, token=token)
    finally:  # even if cancelled again: terminate_group has sent SIGKILL, now stop reading
        transport.close()
        collector.close()


def _result(collector: OutputCollector, returncode: int | None, stop_reason: str | None) -> ShellResult:
    truncation = collector.tail.result()
    exit_code = None
    if stop_reason is None and returncode is not None:
        exit_code = 128 - returncode if returncode < 0 else returncode
    output = truncation["content"]
    note = collector.cleaning_note()
    if note:  # the model, the session and the screen all learn that the text is not all the command printed
        if collector.full_output_path and not truncation["truncated"]:  # (a cut output's notice names it)
            note = f"{note[:-1]}. Raw output: {collector.full_output_path}]"
        output = append_notice(output, note)
    return ShellResult(
        output=output, exit_code=exit_code, cancelled=stop_reason == "abort",
        timed_out=stop_reason == "timeout", truncated=truncation["truncated"],
        full_output_path=collector.full_output_path, truncation=truncation,
        full_output_error=collector.full_output_error,
    )
