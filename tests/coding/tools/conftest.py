"""Fixtures for the tool tests: gates that hold a shell command until the test releases it, and a process
group census that does not rely on the code under test."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest


class Gate:
    """A FIFO a command blocks on (`read _ < PATH`) until the test calls `open()`.

    The test holds the FIFO open read-write, so writing never blocks and the data waits in the FIFO until the
    command reads it.
    """

    def __init__(self, path: Path):
        self.path = path
        os.mkfifo(path)
        self._fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)

    @property
    def wait_command(self) -> str:
        return f"read _ < '{self.path}'"

    def open(self) -> None:
        os.write(self._fd, b"go\n")

    def close(self) -> None:
        os.close(self._fd)


@pytest.fixture
def make_gate(tmp_path):
    gates = []

    def make(name: str = "gate") -> Gate:
        gates.append(Gate(tmp_path / f"{name}-{len(gates)}.fifo"))
        return gates[-1]

    yield make
    for gate in gates:
        gate.close()


def running_group_members(pgid: int) -> list[str]:
    """`ps` lines of processes in group `pgid` that are not zombies (init reaps those in its own time)."""
    out = subprocess.run(["ps", "-e", "-o", "pgid=,stat=,pid=,args="], capture_output=True, text=True).stdout
    members = []
    for line in out.splitlines():
        fields = line.split(None, 3)
        if len(fields) >= 3 and int(fields[0]) == pgid and not fields[1].startswith("Z"):
            members.append(line.strip())
    return members


@pytest.fixture
def group_members():
    return running_group_members
