"""A slow link between a terminal and a program, for end-to-end tests in tmux: runs the program on a pty of
its own and relays bytes both ways, but holds the terminal's first cursor position report (`ESC [ r ; c R`)
until the program has written `release` (as a slow SSH link or a loaded machine delivers it late).

Usage: python slow_link.py RELEASE_TEXT PROGRAM [ARGS...]; exits with the program's exit code."""

from __future__ import annotations

import fcntl
import os
import re
import select
import subprocess
import sys
import termios
import tty

REPORT = re.compile(rb"\x1b\[\d+;\d+R")


def main(release: bytes, command: list[str]) -> int:
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, fcntl.ioctl(0, termios.TIOCGWINSZ, b"\0" * 8))
    child = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    saved = termios.tcgetattr(0)
    tty.setraw(0)
    try:
        relay(master, release)
    finally:
        termios.tcsetattr(0, termios.TCSADRAIN, saved)
    return child.wait()


def relay(master: int, release: bytes) -> None:
    written, held, holding = b"", b"", True
    while True:
        ready, _, _ = select.select([0, master], [], [])
        if master in ready:
            try:
                out = os.read(master, 65536)
            except OSError:  # the program exited
                return
            if not out:
                return
            os.write(1, out)
            written = (written + out)[-65536:]
            if held and release in written:
                os.write(master, held)
                held = b""
        if 0 in ready:
            data = os.read(0, 65536)
            report = REPORT.search(data) if holding else None
            if report is not None:  # this report and what follows it wait for the release text
                holding, held, data = False, data[report.start():], data[:report.start()]
                if release in written:
                    data, held = data + held, b""
            elif held:
                held, data = held + data, b""
            if data:
                os.write(master, data)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1].encode(), sys.argv[2:]))
