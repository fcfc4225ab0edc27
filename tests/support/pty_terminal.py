"""A bare pseudo-terminal for end-to-end tests of what tmux cannot give: a terminal that reports no size
(winsize 0x0) or a `TERM` such as `dumb`. The CLI runs on the pty's slave side; the test reads what it
wrote (escape sequences stripped) and types into the master side.

`wait_for` polls the output until a text appears or a deadline passes: it synchronises on what the program
wrote, never on elapsed time."""

from __future__ import annotations

import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

DEADLINE_S = 30.0
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]")


class PtyTerminal:
    """`agent-forge *args` on a pty of `rows` x `columns` (0 x 0: no size), with `env` and `cwd`."""

    def __init__(self, env: dict[str, str], cwd: Path, *args: str, rows: int = 0, columns: int = 0):
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self.process = subprocess.Popen([sys.executable, "-m", "agent_forge", *args], stdin=slave, stdout=slave,
                                        stderr=slave, cwd=cwd, env=env, start_new_session=True)
        os.close(slave)
        self.raw = b""

    def _read(self, timeout: float) -> None:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if ready:
            try:
                self.raw += os.read(self.master, 65536)
            except OSError:  # the program exited and closed its side
                time.sleep(timeout)

    def text(self) -> str:
        """Everything written so far, escape sequences removed, carriage returns as line breaks."""
        return _ESCAPES.sub("", self.raw.decode("utf-8", "replace")).replace("\r", "\n")

    def wait_for(self, text: str, deadline_s: float = DEADLINE_S) -> str:
        end = time.monotonic() + deadline_s
        while text not in self.text():
            if time.monotonic() > end:
                raise AssertionError(f"{text!r} was not written within {deadline_s} s; the output:\n{self.text()}")
            self._read(0.05)
        return self.text()

    def type(self, text: str) -> None:
        os.write(self.master, text.encode("utf-8"))

    def exit_code(self, deadline_s: float = DEADLINE_S) -> int:
        end = time.monotonic() + deadline_s
        while self.process.poll() is None:
            if time.monotonic() > end:
                raise AssertionError(f"the program did not exit within {deadline_s} s; the output:\n{self.text()}")
            self._read(0.05)
        return self.process.returncode

    def close(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)  # its own session: the agent and what it started
            self.process.wait(timeout=10)
        os.close(self.master)
