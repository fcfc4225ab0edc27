"""Containing plugin failures: telling a real cancellation (which must propagate) from everything else a plugin
may raise, and describing a failure in one line.

Plugin code may raise anything, `BaseException`s included: argparse's `parse_args` raises `SystemExit`, a
plugin may call `sys.exit()` or raise `KeyboardInterrupt`. Raised inside an asyncio task, `SystemExit` and
`KeyboardInterrupt` escape the event loop and end the process, so every place that calls plugin code catches
`BaseException` and lets only `is_cancellation` through.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Awaitable, TypeVar

from ..coding.paths import path_text

_T = TypeVar("_T")


class PluginEscape(Exception):
    """A `BaseException` (`SystemExit`, `KeyboardInterrupt`, ...) raised by plugin code inside a task, carried
    as an ordinary exception so it cannot stop the event loop; `error` is the original."""

    def __init__(self, error: BaseException):
        super().__init__(describe_error(error))
        self.error = error


def is_cancellation(exc: BaseException) -> bool:
    """True when `exc` is the cancellation of the running task (abort, shutdown, a timeout): it must propagate.
    A `CancelledError` that plugin code raised itself, or caught from another task, while the running task is
    not being cancelled is a plugin failure like any other."""
    if not isinstance(exc, asyncio.CancelledError):
        return False
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no running loop: nothing else can be meant
        return True
    return task is None or task.cancelling() > 0


def describe_error(exc: BaseException | str) -> str:
    """`"TypeName: message"` (or just `"TypeName"` when the message is empty) as one line: the message's
    newlines, tabs and control characters as their escapes (`path_text`), so a plugin's `ValueError("a\\nb")`
    cannot split a stderr line, a notice or a warning, nor pass its second line off as a message of its own.
    Never raises, even for an exception whose `__str__` fails."""
    if isinstance(exc, str):
        return path_text(exc)
    if isinstance(exc, PluginEscape):
        exc = exc.error
    try:
        text = str(exc)
    except Exception:
        text = ""
    return f"{type(exc).__name__}: {path_text(text)}" if text else type(exc).__name__


async def contained(awaitable: Awaitable[_T]) -> _T:
    """Await plugin code that runs as its own task: a `BaseException` other than a cancellation comes out as
    `PluginEscape`, so it cannot stop the event loop."""
    try:
        return await awaitable
    except Exception:
        raise
    except BaseException as exc:
        if is_cancellation(exc):
            raise
        raise PluginEscape(exc) from exc


def spawn_contained(awaitable: Awaitable[_T]) -> asyncio.Task[_T]:
    """`contained(awaitable)` as a task. A task cancelled before its first step never awaits `awaitable`; a
    coroutine is then closed, so it is not reported as "never awaited" when it is collected (closing one that
    ran is a no-op)."""
    task = asyncio.ensure_future(contained(awaitable))
    if inspect.iscoroutine(awaitable):
        task.add_done_callback(lambda _: awaitable.close())
    return task
