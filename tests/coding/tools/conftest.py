"""Fixtures for the tool tests: a process group census that does not rely on the code under test (the gates
that hold a shell command, `make_gate`, are shared: tests/conftest.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


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
