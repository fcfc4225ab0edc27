"""Stopping a child's whole process group, and what left it but carries its command's lifeline token: SIGTERM,
a short grace period, then SIGKILL."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from typing import Any, Callable

from ..env_waits import wait_from_env


KILL_GRACE_S = wait_from_env("AGENT_FORGE_KILL_GRACE_MS", 2.0)
"""How long processes get to exit after SIGTERM before SIGKILL: 2 s, or `AGENT_FORGE_KILL_GRACE_MS`, read at
start-up."""
KILL_WAIT_S = 2.0
"""How long to wait, at most, for SIGKILLed processes to be gone (dying takes a moment on a loaded machine)."""

_POLL_S = 0.02


def group_alive(pgid: int) -> bool:
    """True while some process of group `pgid` is still running.

    On Linux, `/proc` is scanned so that zombies (already dead, waiting for a parent such as init to reap
    them) do not count; elsewhere `killpg(pgid, 0)` answers, zombies included.
    """
    if os.path.isdir("/proc/self"):
        return _running_in_proc(pgid)
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def terminate_group(pgid: int, grace_s: float | None = None, token: str | None = None) -> None:
    """SIGTERM every process of group `pgid`, then SIGKILL what still runs after `grace_s` seconds (default
    `KILL_GRACE_S`, looked up at the call), and return once the group is gone (or `KILL_WAIT_S` after the
    SIGKILL: a process stuck in the kernel).

    `token` (a `lifeline` token, or None): every process carrying it, and its group, is stopped alongside and
    waited for the same way: what left the group (`setsid`) goes with it; one forked meanwhile gets the SIGKILL.
    If this coroutine is itself cancelled while waiting, it sends SIGKILL at once and re-raises.
    """
    command = _Command(pgid, token)
    try:
        await asyncio.to_thread(command.send, signal.SIGTERM, signal.SIGCONT)  # SIGCONT: a stopped process
        # acts on SIGTERM only once continued; the scans run beside the loop (`_wait_until_gone`)
        if not await _wait_until_gone(command.alive, KILL_GRACE_S if grace_s is None else grace_s):
            await asyncio.to_thread(command.send, signal.SIGKILL)
            await _wait_until_gone(command.killed_or_gone, KILL_WAIT_S)
    except asyncio.CancelledError:
        command.send(signal.SIGKILL)
        raise


def kill_command(pgid: int, token: str | None = None) -> None:
    """SIGKILL group `pgid` and every process carrying `token` (None: the group alone), with its group, at once."""
    _Command(pgid, token).send(signal.SIGKILL)


class _Command:
    """A command being stopped: its process group, and the processes carrying its lifeline token (if any). Each
    method scans `/proc` (blocking: callers in the event loop run them in a thread, but for a last SIGKILL)."""

    def __init__(self, pgid: int, token: str | None):
        self.pgid, self.token = pgid, token

    def send(self, *signums: int) -> None:
        """Each of `signums` to the group while it has a live process (an emptied group's id may be reused), and
        to the carriers outside it (their groups): every process gets each signal once."""
        signalled: tuple[int, ...] = ()
        if group_alive(self.pgid):
            for signum in signums:
                send_group_signal(self.pgid, signum)
            signalled = (self.pgid,)
        pids = self._carriers()
        for signum in signums:
            self._lifeline().signal_pids(pids, signum, signalled)

    def alive(self) -> bool:
        """Whether a process of the group or a carrier still runs."""
        return group_alive(self.pgid) or bool(self._carriers())

    def killed_or_gone(self) -> bool:
        """`alive`, SIGKILLing the carriers found first (one forked just before its parent's SIGKILL)."""
        pids = self._carriers()
        self._lifeline().signal_pids(pids, signal.SIGKILL)
        return group_alive(self.pgid) or bool(pids)

    def _carriers(self) -> list[int]:
        return [] if self.token is None else self._lifeline().carriers_of(self.token)

    @staticmethod
    def _lifeline() -> Any:
        from . import lifeline  # imported on first use: start-up does not stop commands

        return lifeline


async def _wait_until_gone(alive: Callable[[], bool], timeout_s: float) -> bool:
    """Whether `alive()` turned False within `timeout_s` seconds, asked in a worker thread (it scans `/proc`:
    tens of ms with a thousand processes, which the event loop must not wait on) and polled no more often than
    twice the time one answer took."""
    deadline = time.monotonic() + timeout_s
    while True:
        asked = time.monotonic()
        if not await asyncio.to_thread(alive):
            return True
        now = time.monotonic()
        if now >= deadline:
            return False
        await asyncio.sleep(max(_POLL_S, 2 * (now - asked)))


def send_group_signal(pgid: int, signum: int) -> None:
    """`killpg`, ignoring a group that no longer exists."""
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _running_in_proc(pgid: int) -> bool:
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:  # the process ended while we looked
            continue
        fields = stat[stat.rfind(b")") + 2:].split()  # the command name in parentheses may contain spaces
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False
