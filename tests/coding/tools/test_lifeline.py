"""The lifeline watchdog: what it kills when its pipe closes (the agent died), and how it survives its own death."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from agent_forge.coding.tools.lifeline import ENV_VAR, _Watchdog

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="the watchdog needs /proc")


def fresh_token() -> str:
    """A token no other run shares: the watchdog scans every process on the machine, so a fixed token would let
    a suite running at the same time (another checkout, a stress run) kill this test's processes for it."""
    return os.urandom(8).hex()


def command_process(token: str) -> subprocess.Popen:
    """A process of a command with `token`, in its own session like the shells are."""
    return subprocess.Popen(["sleep", "300"], env={**os.environ, ENV_VAR: token}, start_new_session=True)


def agent_dies(watchdog: _Watchdog) -> None:
    """What the kernel does for a SIGKILLed agent: close the write end; then wait for the watchdog's scan."""
    watchdog._proc.stdin.close()
    assert watchdog._proc.wait(timeout=20) == 0


def test_registered_commands_die_and_released_ones_stay():
    watchdog = _Watchdog()
    live, released = fresh_token(), fresh_token()
    assert watchdog.add(live) and watchdog.add(released)
    running, finished = command_process(live), command_process(released)
    watchdog.discard(released)
    try:
        agent_dies(watchdog)
        assert running.wait(timeout=20) == -signal.SIGKILL
        assert finished.poll() is None
    finally:
        for proc in (running, finished):
            proc.kill()
            proc.wait()


def test_a_watchdog_that_died_is_replaced_and_told_every_live_token():
    watchdog = _Watchdog()
    older, newer = fresh_token(), fresh_token()
    assert watchdog.add(older)
    first = command_process(older)
    watchdog._proc.kill()
    watchdog._proc.wait()
    assert watchdog.add(newer)
    second = command_process(newer)
    try:
        agent_dies(watchdog)
        assert first.wait(timeout=20) == -signal.SIGKILL and second.wait(timeout=20) == -signal.SIGKILL
    finally:
        for proc in (first, second):
            proc.kill()
            proc.wait()


def test_the_watchdog_starts_fast_and_isolated():
    """It runs `python -I -S`: no site-packages, no environment variables, no current directory on sys.path."""
    watchdog = _Watchdog()
    assert watchdog.add(fresh_token())
    args = watchdog._proc.args
    assert args[:4] == [sys.executable, "-I", "-S", "-c"]
    assert os.getsid(watchdog._proc.pid) == watchdog._proc.pid  # out of reach of the agent's terminal signals
    agent_dies(watchdog)
