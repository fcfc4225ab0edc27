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
_Key = tuple[asyncio.AbstractEventLoop, str]
_queues: dict[_Key, _Queue] = {}


@contextlib.asynccontextmanager
async def hold(path: str) -> AsyncIterator[None]:
    """Hold the file at the absolute `path` for a change: waits, first come first served, until no other
    call holds it. A file is known by its real path and, when it exists, by its device and inode, and a call
    holds both: a symlink and its target, `./a` and `a`, two hard links of one file, or a path whose file a
    `write` replaced (a new inode) are each one file. Use `async with hold(path):` before the call's first
    await."""
    loop = asyncio.get_running_loop()
    keys = sorted({(loop, name) for name in _names(path)}, key=lambda key: key[1])  # one order: no deadlock
    async with contextlib.AsyncExitStack() as stack:
        for key in keys:
            await stack.enter_async_context(_held(key))
        yield


def _names(path: str) -> list[str]:
    real = os.path.realpath(path)
    try:
        info = os.stat(real)
    except (OSError, ValueError):  # not there yet (a new file), or unreadable: its path alone names it
        return [f"path:{real}"]
    return [f"path:{real}", f"inode:{info.st_dev}:{info.st_ino}"]


@contextlib.asynccontextmanager
async def _held(key: _Key) -> AsyncIterator[None]:
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
    """How many names of files (paths, inodes) are held or waited for now (0 when every change is done:
    nothing is kept per file)."""
    return len(_queues)
