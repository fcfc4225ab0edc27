"""Descriptor-level writing shared by the file tools, the session store and export: `write_all`."""

from __future__ import annotations

import os


def write_all(fd: int, data: bytes | memoryview) -> None:
    """Write every byte of `data` to descriptor `fd`, looping over short writes (`os.write` may write fewer
    bytes than given: pipes, signals, nearly full disks). Raises the `OSError` of the write that failed."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
