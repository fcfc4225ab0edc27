"""Key values: what an `auth.json` `key`, a `models.json` `apiKey` or a header value stands for.

A *key value* is resolved by `resolve_key_value`:

- `!command`: the command's standard output, stripped (run with the shell, stdin closed, in its own process
  group; empty output, output of more than one line or with control characters, more than
  `KEY_COMMAND_MAX_OUTPUT` bytes, a non-zero exit, a death by signal or a timeout of `KEY_COMMAND_TIMEOUT_S`
  leaves it unresolved, with a reason that shows the command and its stderr but never its output). The output
  is what was printed when the shell exited (plus `KEY_COMMAND_DRAIN_S` for the pipes to close), so a
  background child holding stdout open does not delay it. `resolve_key_value_async` runs it without blocking
  the event loop; cancelling it (an abort) kills the command's process group, also while asyncio is still
  starting it, and returns once its shell is reaped;
- `$NAME` / `${NAME}` anywhere in the value: the environment variable (unset or empty: unresolved);
  `$$` is a literal `$` and `$!` a literal `!` (so `$!x` is the literal `!x`, not a command);
- a bare upper-case name that is set in the environment: its value (the reference agent's older form);
  unset, it is a literal like any other (dummy keys such as `EMPTY` or `NOT_NEEDED` are common);
- anything else: the literal value.

Lookups (`KeyLookup`) are written once for both kinds of caller: a generator that yields each `!command` it
needs run and receives the command's outcome; `run_lookup` runs the commands blocking, `run_lookup_async` as
cancellable asyncio subprocesses. Nothing else differs between the synchronous and the asynchronous path.
"""
from __future__ import annotations

import os
import re
from collections.abc import Generator, Mapping
from typing import TYPE_CHECKING, TypeGuard, TypeVar

from ...lazy_re import LazyPattern

if TYPE_CHECKING:
    import asyncio

KEY_COMMAND_TIMEOUT_S = 30.0
"""How long a `!command` key may run before it is killed (a secret manager may wait for an unlock prompt);
an abort stops it sooner."""

KEY_COMMAND_MAX_OUTPUT = 64 * 1024
"""The most a `!command` key may print (bytes on stdout); more fails the key at once and kills the command
(a key, even a long JWT, is far smaller: more is a wrong command, not a key)."""

KEY_COMMAND_DRAIN_S = 0.5
"""After the command's shell exits, how long its output pipes may stay open (a background child that
inherited them); then the output read so far is the command's output."""

_CONTROL = LazyPattern(r"[\x00-\x08\x0a-\x1f\x7f]")  # no HTTP header value may hold these (RFC 9110 §5.5)
_BARE_ENV_NAME = LazyPattern(r"[A-Z][A-Z0-9_]*")
_INTERPOLATION = LazyPattern(r"\$(?:\$|!|\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")

KeyOutcome = tuple[str | None, str | None]
"""`(key, None)` when a key value resolved, else `(None, reason)`: a one-line reason for people (or
`(None, None)` when there was nothing to resolve)."""

T = TypeVar("T")
KeyLookup = Generator[str, KeyOutcome, T]
"""A lookup that needs `!command`s run: it yields each command (without the `!`), is sent the command's
`KeyOutcome`, and returns its result `T`. Run it with `run_lookup` or `run_lookup_async`."""


def resolve_key_value(value: object, env: Mapping[str, str] | None = None) -> str | None:
    """The key `value` stands for (rules in the module docstring), or None when it cannot be resolved.

    Never raises: a failing command or a missing variable gives None (`explain_key_value` says why).
    """
    return explain_key_value(value, env)[0]


def explain_key_value(value: object, env: Mapping[str, str] | None = None) -> KeyOutcome:
    """`(key, None)` when `value` resolves, else `(None, reason)` with a one-line human-readable reason."""
    return run_lookup(key_value_lookup(value, env))


async def resolve_key_value_async(value: object, env: Mapping[str, str] | None = None) -> KeyOutcome:
    """`explain_key_value`, with a `!command` run as an asyncio subprocess: the event loop keeps serving
    while it runs, and cancelling the call kills the command's process group at once."""
    return await run_lookup_async(key_value_lookup(value, env))


def key_value_configured(value: object, env: Mapping[str, str] | None = None) -> bool:
    """Whether `value` looks usable without running anything: commands count as configured (they run only
    when the key is needed), `$NAME` references need their variables set."""
    if not isinstance(value, str) or not value.strip():
        return False
    if is_key_command(value):
        return len(value) > 1
    return resolve_literal(value, env)[0] is not None


def is_key_command(value: object) -> TypeGuard[str]:
    """Whether `value` is a `!command` key value (the only kind that runs anything)."""
    return isinstance(value, str) and value.startswith("!")


def key_value_lookup(value: object, env: Mapping[str, str] | None = None) -> KeyLookup[KeyOutcome]:
    """The lookup of one key value: yields the command of a `!command` value, resolves anything else now."""
    if is_key_command(value):
        return (yield value[1:].strip())
    return resolve_literal(value, env)


def resolve_literal(value: object, env: Mapping[str, str] | None = None) -> KeyOutcome:
    """The outcome of a value that is not a `!command` (`$VAR`, a bare variable name, a literal)."""
    env = os.environ if env is None else env
    if not isinstance(value, str) or not value.strip():
        return None, "the key value is empty"
    if _BARE_ENV_NAME.fullmatch(value) and env.get(value):
        return env[value], None
    return _interpolate(value, env)


def _interpolate(value: str, env: Mapping[str, str]) -> KeyOutcome:
    missing: list[re.Match[str]] = []

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        if name is None:
            return match.group(0)[1]  # `$$` -> `$`, `$!` -> `!`
        if not env.get(name):
            missing.append(match)
            return ""
        return env[name]

    result = _INTERPOLATION.sub(substitute, value)
    if missing:
        return None, _missing_variable(missing[0], env)
    return (result, None) if result else (None, "the key value is empty")


def _missing_variable(match: re.Match[str], env: Mapping[str, str]) -> str:
    """Why a `$NAME` reference gave nothing; shows the reference only, never the rest of the value (which may
    hold a secret)."""
    name = match.group(1) or match.group(2)
    state = "is empty" if name in env else "is not set"
    return f'"{match.group(0)}" reads the environment variable {name}, which {state}'


def outcome_without_running(lookup: KeyLookup[KeyOutcome]) -> KeyOutcome | None:
    """`lookup`'s outcome when it needs no `!command` run (a `$VAR`, a literal, a cached command outcome);
    None when it would run one (it is closed unrun)."""
    try:
        next(lookup)
    except StopIteration as done:
        return done.value
    lookup.close()
    return None


def run_lookup(lookup: KeyLookup[T]) -> T:
    """Run `lookup` to its result, each `!command` blocking the caller (`run_key_command`)."""
    try:
        command = next(lookup)
        while True:
            command = lookup.send(run_key_command(command))
    except StopIteration as done:
        return done.value
    finally:
        lookup.close()


async def run_lookup_async(lookup: KeyLookup[T]) -> T:
    """Run `lookup` to its result, each `!command` as an asyncio subprocess (`run_key_command_async`).

    Cancelling the call kills the running command and closes the lookup: nothing is sent back, so a
    cancelled command's outcome is never recorded (cached) by the lookup."""
    try:
        command = next(lookup)
        while True:
            command = lookup.send(await run_key_command_async(command))
    except StopIteration as done:
        return done.value
    finally:
        lookup.close()


def run_key_command(command: str) -> KeyOutcome:
    """`run_key_command_async` for synchronous callers: one implementation, so both paths fail alike."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(run_key_command_async(command))
    from concurrent.futures import ThreadPoolExecutor  # called from a loop's thread: run on a private loop

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(run_key_command_async(command))).result()


async def run_key_command_async(command: str) -> KeyOutcome:
    """The outcome of running the key command `command` (rules in the module docstring); never raises but
    `CancelledError`, and then only once the command's process group is killed and its shell reaped."""
    if not command:
        return None, "the key command is empty"
    import asyncio

    from ..tools import lifeline  # imported on first use: start-up runs no key command

    watch = lifeline.token()  # its processes carry it: a kill -9 of the agent, a timeout or an abort ends them
    try:
        return await _run(command, watch)
    finally:
        lifeline.release(watch)  # what a finished command left running is no longer its (as for `bash`)


async def _run(command: str, watch: str | None) -> KeyOutcome:
    """`run_key_command_async` once `watch` (its lifeline token, or None) is registered."""
    import asyncio

    try:
        transport, output = await _start(command, watch)
    except OSError as exc:
        return None, f"the key command `{command}` could not start ({exc.strerror or exc})"
    try:
        return await asyncio.wait_for(_collect(command, transport, output), KEY_COMMAND_TIMEOUT_S)
    except asyncio.TimeoutError:
        await _stop(transport, output)  # reaped on this loop (a sync caller's private loop closes after)
        return None, _timed_out(command)
    except BaseException:  # cancelled (an abort): the command and its children must not outlive the request
        await _stop(transport, output)
        raise
    finally:
        transport.close()  # our ends of the pipes; a child the shell left behind keeps running, unheard


async def _start(command: str, watch: str | None) -> tuple[asyncio.SubprocessTransport, _KeyCommandOutput]:
    """Start `command` with the shell in a new session (so a timeout or an abort can kill its whole process
    group, not just the shell), its processes carrying the lifeline token `watch` (unless None: what leaves the
    group is found by it). Raises OSError when it cannot start, CancelledError when cancelled meanwhile.

    The start is never cancelled itself: a cancellation that arrives while asyncio connects the pipes (the
    shell is running by then, and may have forked) lets the start finish, kills the group, then raises.
    Cancelled inside `subprocess_shell`, asyncio would kill the shell alone and leave its children running."""
    import asyncio
    import subprocess

    loop = asyncio.get_running_loop()
    start = asyncio.ensure_future(loop.subprocess_shell(
        lambda: _KeyCommandOutput(loop, watch), command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, start_new_session=True, env=_environment(watch)))
    if not await _wait_through_cancellation(start):
        return start.result()
    if start.exception() is None:
        transport, output = start.result()
        try:
            await _stop(transport, output)
        finally:
            transport.close()
    raise asyncio.CancelledError


def _environment(watch: str | None) -> dict[str, str] | None:
    """The command's environment: this process's, with the lifeline token when there is one."""
    from ..tools import lifeline

    return None if watch is None else {**os.environ, lifeline.ENV_VAR: watch}


async def _stop(transport: asyncio.SubprocessTransport, output: _KeyCommandOutput) -> None:
    """Kill the command's process group, and what left it but carries its token (`setsid`), and wait until its
    shell is reaped (at once: SIGKILL), through any cancellation, which is raised after. A group it may not
    kill is not waited for (an abort stays prompt)."""
    import asyncio
    import signal

    from ..tools import lifeline

    killed = _kill_group(transport.get_pid())
    for _ in range(3 if output.watch is not None else 0):  # again: one forked just before its parent's SIGKILL
        if not lifeline.signal_carriers(output.watch, signal.SIGKILL):
            break
    if killed and await _wait_through_cancellation(output.exited):
        raise asyncio.CancelledError


async def _wait_through_cancellation(future: asyncio.Future[T]) -> bool:
    """Wait until `future` is done, even while being cancelled (only for waits that are short by construction);
    True when the caller was cancelled meanwhile (it must then raise CancelledError itself)."""
    import asyncio

    cancelled = False
    while not future.done():
        try:
            await asyncio.wait({future})
        except asyncio.CancelledError:
            cancelled = True
    return cancelled


async def _collect(command: str, transport: asyncio.SubprocessTransport, output: _KeyCommandOutput) -> KeyOutcome:
    """Wait until the shell exits (or prints too much), then give its pipes `KEY_COMMAND_DRAIN_S` to close:
    a background child that inherited stdout must not hold the key back until the timeout."""
    import asyncio

    await asyncio.wait({output.exited, output.overflow}, return_when=asyncio.FIRST_COMPLETED)
    if not output.overflow.done():
        await asyncio.wait({output.closed, output.overflow}, timeout=KEY_COMMAND_DRAIN_S,
                           return_when=asyncio.FIRST_COMPLETED)
    if output.overflow.done():  # also when the excess arrived after the shell had exited
        await _stop(transport, output)
        return None, (f"the key command `{command}` printed more than {KEY_COMMAND_MAX_OUTPUT // 1024} KiB "
                      "(the output is not shown)")
    return _key_from_output(command, transport.get_returncode(), bytes(output.out), bytes(output.err))


class _KeyCommandOutput:
    """Subprocess protocol of a key command: collects stdout and stderr (each capped at
    `KEY_COMMAND_MAX_OUTPUT` + 1 bytes) and marks the shell's exit and the pipes' close separately. `watch`: the
    command's lifeline token (None without one)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, watch: str | None) -> None:
        self.watch = watch
        self.out, self.err = bytearray(), bytearray()
        self.exited, self.closed, self.overflow = loop.create_future(), loop.create_future(), loop.create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        pass

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        buffer = self.out if fd == 1 else self.err
        buffer += data[:max(0, KEY_COMMAND_MAX_OUTPUT + 1 - len(buffer))]
        if fd == 1 and len(buffer) > KEY_COMMAND_MAX_OUTPUT:
            _settle(self.overflow)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        pass

    def pause_writing(self) -> None:  # stdin is the null device: nothing is written, but the protocol has these
        pass

    def resume_writing(self) -> None:
        pass

    def process_exited(self) -> None:
        _settle(self.exited)

    def connection_lost(self, exc: Exception | None) -> None:
        _settle(self.exited)  # all pipes closed and the process reaped
        _settle(self.closed)


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _timed_out(command: str) -> str:
    return f"the key command `{command}` did not finish within {KEY_COMMAND_TIMEOUT_S:g} s and was stopped"


def _key_from_output(command: str, status: int | None, out: bytes, err: bytes) -> KeyOutcome:
    """The key a finished command printed, or why there is none. The output is never part of a reason: it
    may be the secret, or a fragment of it."""
    if status is not None and status < 0:  # asyncio's returncode for a death by signal
        return None, f"the key command `{command}` was killed by signal {-status}" + _signal_name(-status)
    if status != 0:
        detail = _first_line(err)
        return None, f"the key command `{command}` failed with exit status {status}" + (
            f": {detail}" if detail else "")
    key = out.decode("utf-8", errors="replace").strip()
    if not key:
        return None, f"the key command `{command}` printed nothing"
    if "\n" in key or "\r" in key:
        return None, f"the key command `{command}` printed more than one line (the output is not shown)"
    if _CONTROL.search(key):
        return None, f"the key command `{command}` printed control characters (the output is not shown)"
    return key, None


def _signal_name(number: int) -> str:
    import signal

    try:
        return f" ({signal.Signals(number).name})"
    except ValueError:
        return ""


def _kill_group(pid: int | None) -> bool:
    """SIGKILL the process group `pid` leads (the shell alone without process groups); False when it may
    still run: no pid, or not ours to kill (a setuid program the shell exec'd)."""
    if pid is None:
        return False

    import signal

    try:
        os.killpg(pid, signal.SIGKILL)
    except PermissionError:
        return False
    except (OSError, AttributeError):  # already gone, or no process groups on this platform
        try:
            os.kill(pid, signal.SIGKILL)
        except PermissionError:
            return False
        except OSError:
            pass
    return True


def _first_line(data: bytes) -> str:
    lines = data.decode("utf-8", errors="replace").strip().splitlines()
    return lines[0][:200] if lines else ""
