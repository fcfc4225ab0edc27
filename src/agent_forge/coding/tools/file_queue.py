"""Changes to one file one after another: the tool calls of an assistant message run at once (`agent/loop.py`),
so `edit` and `write` of one file would each read, then write, and one change would be lost.

Every built-in tool that rewrites a file holds `hold(path)` around its read-modify-write. Calls on one file
then run in the order they asked (a free file is taken without waiting, so calls that reach it with nothing
to wait for, such as an approval, keep their call order); calls on different files still run at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import AsyncIterator


class _Queue:
    """The lock of one file and how many calls hold it or wait for it (the entry goes when none do)."""

    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0


# Keyed by event loop too: a lock belongs to the loop it is used in, and an SDK host may run sessions in two.
_queues: dict[tuple[asyncio.AbstractEventLoop, str], _Queue] = {}


@contextlib.asynccontextmanager
async def hold(path: str) -> AsyncIterator[None]:
    """Hold the file at the absolute `path` for a change: waits, first come first served, until no other
    call holds it. The file is named by its real path, so a symlink and its target, or `./a` and `a`, are
    one file (hard links are not). Use `async with hold(path):` before the call's first await."""
    key = (asyncio.get_running_loop(), os.path.realpath(path))
    queue = _queues.get(key) or _queues.setdefault(key, _Queue())
    queue.users += 1
    try:
        async with queue.lock:
            yield
    finally:
        queue.users -= 1
        if not queue.users:
            del _queues[key]


def held() -> int:
    """How many files are held or waited for now (0 when every change is done: nothing is kept per path)."""
    return len(_queues)
