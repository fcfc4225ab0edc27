"""Killing the processes of running shell commands when the agent dies without cleaning up (kill -9, a crash).

SIGTERM, SIGHUP, SIGINT and `abort` stop running commands in-process (`procgroup.terminate_group`); a SIGKILLed
agent runs no code, so on Linux a watchdog process does it instead. The agent starts one watchdog (lazily, at
the first command) and keeps the write end of a pipe to its stdin; no other process holds that end (it is
close-on-exec), so the watchdog reads EOF exactly when the agent is gone, however it ended.

Each command gets a random token: the agent sends `+<token>\\n` before starting the shell and `-<token>\\n`
after the command has ended (or been stopped). The shell runs with `AGENT_FORGE_COMMAND=<token>` in its
environment, which every descendant inherits. On EOF the watchdog scans `/proc/*/environ` for the tokens
still registered and SIGKILLs each matching process and its process group, repeating until none is left (a
process forking meanwhile is caught by the next round). Registering before the spawn leaves no window in
which a command runs unwatched; matching by token, not by process-group id, can never hit an unrelated
process that reused an id. Background jobs of a command that already finished are left alone, as on SIGTERM.
A process that clears its environment and leaves the command's process group escapes; nothing else does.

Elsewhere (no `/proc`) there is no watchdog and `token()` returns None.

A process that left its command's process group (`setsid`) is out of reach of a signal to the group, so a
command that is stopped (abort, its timeout, `abort_bash`, a terminating agent) has the same scan, run in the
agent (`signal_carriers`), signal every process carrying its token alongside the group, with the group's grace:
SIGTERM, then SIGKILL (`procgroup.terminate_group`). A stopped command is no finished one: what its token
marks goes. A terminating agent (`modes/termination.py`) also takes the tokens still registered when the
signal came (`live_tokens`) and, once the commands are stopped, sweeps them (`sweep`) for a stop that did not
complete: a SIGTERM leaves no more behind than a kill -9.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import threading
from typing import Any

ENV_VAR = "AGENT_FORGE_COMMAND"
"""The environment variable naming a command's token in its processes."""

_SCAN = r"""
import os, signal
def carriers(needles):
    me, found = os.getpid(), []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open("/proc/" + name + "/environ", "rb") as f:
                env = b"\0" + f.read()
        except OSError:
            continue
        if any(needle in env for needle in needles):
            found.append(int(name))
    return found
def send(pids, signum, signalled=()):
    own, done = os.getpgrp(), set(signalled)
    for pid in pids:
        try:
            group = os.getpgid(pid)
        except OSError:
            continue
        if group in done:
            continue
        try:
            if group == own:
                os.kill(pid, signum)
            else:
                os.killpg(group, signum)
                done.add(group)
        except OSError:
            pass
"""
"""The scan the watchdog runs and the agent runs in-process (`carriers_of`, `signal_pids`): `carriers(needles)`
lists the pids (this process's aside) whose environment holds one of `needles` (`b"\\0VAR=token\\0"`; a
zombie's is empty); `send(pids, signum, signalled)` signals the process group of each, once per group and
none of `signalled` (groups signalled already, whose members got it), and a pid of the caller's own group
alone: each process gets the signal once."""

_WATCHDOG = _SCAN + r"""
import sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
live = set()
for line in sys.stdin.buffer:
    token = line[1:].strip()
    if line[:1] == b"+":
        live.add(token)
    else:
        live.discard(token)
needles = [b"\0" + __VAR__ + b"=" + token + b"\0" for token in live]
for _ in range(50 if needles else 0):
    found = carriers(needles)
    send(found, signal.SIGKILL)
    if not found:
        break
""".replace("__VAR__", repr(ENV_VAR.encode()))


class _Watchdog:
    """The agent's end of the watchdog: started on first use; if it died, a new one is started and told every
    token still live, so no running command is left unwatched."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # the SDK may run sessions on several event loops
        self._proc: subprocess.Popen[bytes] | None = None
        self._owner = 0
        self._live: set[str] = set()

    def add(self, token: str) -> bool:
        """Register `token`; False when no watchdog can run (it cannot be started or written to)."""
        with self._lock:
            self._live.add(token)
            if self._send(f"+{token}\n".encode()):
                return True
            self._live.discard(token)
            return False

    def discard(self, token: str) -> None:
        with self._lock:
            self._live.discard(token)
            self._send(f"-{token}\n".encode())

    def _send(self, line: bytes) -> bool:
        if self._alive():
            try:
                self._write(line)
                return True
            except (OSError, ValueError):  # it died since the last write
                pass
        if not self._live:
            return True
        try:  # (re)start: the new watchdog learns every live token, the one being added included, at once
            self._start()
            self._write(b"".join(f"+{token}\n".encode() for token in self._live))
            return True
        except (OSError, ValueError):
            self._proc = None
            return False

    def _write(self, data: bytes) -> None:
        self._proc.stdin.write(data)  # type: ignore[union-attr]
        self._proc.stdin.flush()  # type: ignore[union-attr]

    def _alive(self) -> bool:
        return self._proc is not None and self._owner == os.getpid() and self._proc.poll() is None

    def _start(self) -> None:
        # A fresh session: a Ctrl-C or a signal to the agent's process group must not stop the watchdog first.
        self._proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", _WATCHDOG], stdin=subprocess.PIPE,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      start_new_session=True, close_fds=True)
        self._owner = os.getpid()  # a forked copy of the agent must start its own watchdog


    def live(self) -> list[str]:
        with self._lock:
            return sorted(self._live)


_watchdog = _Watchdog()


def token() -> str | None:
    """Register a new command with the watchdog and return its token (for `ENV_VAR`), or None when there is
    no watchdog on this system."""
    if not os.path.isdir("/proc/self"):
        return None
    value = os.urandom(8).hex()
    return value if _watchdog.add(value) else None


def release(value: str | None) -> None:
    """Tell the watchdog that the command of `value` has ended; its leftover processes are no longer its."""
    if value is not None:
        _watchdog.discard(value)


def live_tokens() -> list[str]:
    """The tokens of the commands running now (registered and not yet released)."""
    return _watchdog.live()


def carriers_of(value: str) -> list[int]:
    """The pids of the processes carrying token `value` (a zombie does not), by a scan of `/proc` in this process
    (a few ms; tens with a thousand processes); [] without `/proc`."""
    if not os.path.isdir("/proc/self"):
        return []
    return _scanner()["carriers"]([b"\0" + ENV_VAR.encode() + b"=" + value.encode() + b"\0"])


def signal_pids(pids: list[int], signum: int, signalled: tuple[int, ...] = ()) -> None:
    """Send `signum` to `pids` as the watchdog does: to each one's process group, once per group, but for the
    groups in `signalled` (signalled already) and the caller's own (its pid alone)."""
    _scanner()["send"](pids, signum, signalled)


def signal_carriers(value: str, signum: int) -> bool:
    """`signum` to every process carrying token `value` (`carriers_of`, `signal_pids`); whether one was found."""
    pids = carriers_of(value)
    signal_pids(pids, signum)
    return bool(pids)


@functools.cache
def _scanner() -> dict[str, Any]:
    """`_SCAN`'s functions in this process: the watchdog's own text, so both find exactly the same processes."""
    namespace: dict[str, Any] = {}
    exec(_SCAN, namespace)
    return namespace


def sweep(tokens: list[str], timeout_s: float = 30) -> None:
    """SIGKILL every process still carrying one of `tokens` (and its process group), as the watchdog does when
    the agent dies: the watchdog program runs once, is told the tokens, and reads EOF at once. Blocking; no
    effect without `/proc` or with no tokens."""
    if not tokens or not os.path.isdir("/proc/self"):
        return
    lines = "".join(f"+{value}\n" for value in tokens).encode()
    try:
        subprocess.run([sys.executable, "-I", "-S", "-c", _WATCHDOG], input=lines, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=timeout_s, close_fds=True)
    except (OSError, subprocess.SubprocessError):
        pass  # no interpreter to run it: the SIGTERM to their groups was all that could be done
