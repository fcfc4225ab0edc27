"""Running a plugin's synchronous code in a worker thread, with what it does through `ctx` carried back to the
event loop.

A synchronous handler or command (`time.sleep`, a blocking HTTP call, a long computation) run on the event
loop would stop everything else: `abort` and `get_state` would wait for it and streaming would stall. So it runs
in a daemon thread of its own (a handler that never returns cannot keep the process alive at exit), and the
loop awaits its result. The session is not thread-safe, so the `ctx.ui` and `ctx.session` the thread gets are
`LoopProxy`s: every attribute read and method call runs on the loop's thread and the worker waits for its
result; an `async` method (`ctx.ui.confirm(...)`, `ctx.session.abort()`) is awaited there, so a synchronous
handler gets its result directly.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import functools
import inspect
import threading
from typing import TYPE_CHECKING, Any, Callable, Literal, TypeVar, Union

from .isolation import PluginEscape

if TYPE_CHECKING:
    from .api import Context

_R = TypeVar("_R")
_C = TypeVar("_C", bound="Context")
_Outcome = Union[tuple[Literal[True], _R], tuple[Literal[False], BaseException]]


def is_async(fn: Callable[..., object]) -> bool:
    """True for an `async def` function (also behind `functools.partial`, or as a callable object's `__call__`)."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))


_THREADS: dict[asyncio.Future, set[asyncio.Future]] = {}  # task -> "thread ended" futures of its live threads


def live_threads(task: asyncio.Future) -> set[asyncio.Future]:
    """Futures, each done when a worker thread `in_thread` started from `task` ends; only threads still running.
    A cancelled `in_thread` stops waiting at once, so `task` can be done while its thread goes on: `bounded`
    asks this to count such a thread as plugin code ignoring its cancellation."""
    return {ended for ended in _THREADS.get(task, ()) if not ended.done()}


def _track(loop: asyncio.AbstractEventLoop) -> asyncio.Future[None]:
    """A future done when the thread about to start ends, noted under the current task."""
    ended: asyncio.Future[None] = loop.create_future()
    owner = asyncio.current_task(loop)
    if owner is not None:
        _THREADS.setdefault(owner, set()).add(ended)

        def forget(_: object) -> None:
            threads = _THREADS.get(owner)
            if threads is not None:
                threads.discard(ended)
                if not threads:
                    del _THREADS[owner]
        ended.add_done_callback(forget)
    return ended


async def in_thread(fn: Callable[..., _R], *args: object) -> _R:
    """`fn(*args)` in a new daemon thread; its result or exception (a `BaseException` that is not an
    `Exception`, such as `SystemExit`, comes as `PluginEscape`). Cancelling the await stops waiting at once: the
    thread cannot be stopped, its result is dropped, and `live_threads` names it until it ends."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[_R] = loop.create_future()
    ended = _track(loop)

    def run() -> None:
        try:
            outcome: _Outcome[_R] = (True, fn(*args))
        except Exception as exc:
            outcome = (False, exc)
        except BaseException as exc:
            outcome = (False, PluginEscape(exc))
        try:
            loop.call_soon_threadsafe(_deliver, future, outcome, ended)
        except RuntimeError:
            pass  # the loop is closed: nobody waits for this any more

    context = contextvars.copy_context()  # the caller's context variables hold in the thread and its ctx calls
    threading.Thread(target=context.run, args=(run,), name=f"plugin-{getattr(fn, '__name__', 'handler')}",
                     daemon=True).start()
    return await future


def _deliver(future: asyncio.Future[_R], outcome: _Outcome[_R], ended: asyncio.Future[None]) -> None:
    if not ended.done():
        ended.set_result(None)
    if future.done():
        return  # cancelled meanwhile
    if outcome[0] is True:
        future.set_result(outcome[1])
    else:
        future.set_exception(outcome[1])


class LoopProxy:
    """`target` seen from a worker thread: attribute reads and calls run on `loop`'s thread (directly when
    already there); an awaitable result is awaited on the loop; callable attributes come back as proxies of
    their own, so `ctx.ui.notify(...)` and `ctx.session.send_user_message(...)` are safe from any thread.

    Attribute reads and calls are typed `Any`: a proxy has whatever attributes `target` has."""

    def __init__(self, target: object, loop: asyncio.AbstractEventLoop):
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_loop", loop)

    def __getattr__(self, name: str) -> Any:
        value = on_loop(self._loop, getattr, self._target, name)
        return LoopProxy(value, self._loop) if callable(value) else value

    def __setattr__(self, name: str, value: object) -> None:
        on_loop(self._loop, setattr, self._target, name, value)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return on_loop(self._loop, self._target, *args, **kwargs)

    def __repr__(self) -> str:
        return f"LoopProxy({self._target!r})"


def on_loop(loop: asyncio.AbstractEventLoop, fn: Callable[..., object], *args: object, **kwargs: object) -> object:
    """`fn(*args, **kwargs)` on `loop`'s thread (an awaitable result awaited there); blocks the calling worker
    thread until done. Called on the loop's own thread, it calls `fn` directly."""
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        return fn(*args, **kwargs)

    async def call() -> object:
        result = fn(*args, **kwargs)
        return await result if inspect.isawaitable(result) else result

    return asyncio.run_coroutine_threadsafe(call(), loop).result()


def thread_context(ctx: _C) -> _C:
    """A copy of the handler context `ctx` (a `Context` dataclass) for a worker thread: `ui`, `session` and a
    tool context's `on_update` marshalled to the running loop."""
    loop = asyncio.get_running_loop()
    changes: dict[str, object] = {"ui": LoopProxy(ctx.ui, loop), "session": LoopProxy(ctx.session, loop)}
    if hasattr(ctx, "on_update"):
        changes["on_update"] = functools.partial(on_loop, loop, ctx.on_update)
    return dataclasses.replace(ctx, **changes)
