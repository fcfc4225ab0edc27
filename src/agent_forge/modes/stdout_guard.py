"""Keep the protocol channel clean: only the mode writes to the real stdout.

Plugins, libraries and child processes that print (`print()`, `os.write(1, ...)`, `subprocess.run(["echo"])`)
would inject non-JSON lines into RPC or JSON-mode output. `claim_stdout()` moves the real stdout to a private
descriptor for the mode's own writes and points descriptor 1 (and `sys.stdout`) at stderr, so stray output
lands in the log instead of the protocol.
"""

from __future__ import annotations

import io
import os
import sys
from typing import BinaryIO

_claimed: BinaryIO | None = None


def claim_stdout() -> BinaryIO:
    """The protocol stream (a binary file on the original stdout). Idempotent."""
    global _claimed
    if _claimed is None:
        sys.stdout.flush()
        fd = os.dup(1)
        os.dup2(2, 1)
        _claimed = open(fd, "wb", buffering=1 << 16, closefd=True)
        sys.stdout = io.TextIOWrapper(open(1, "wb", closefd=False), encoding="utf-8", errors="replace",
                                      line_buffering=True)
    return _claimed


def protocol_stdout() -> BinaryIO:
    """The claimed protocol stream, or the process's stdout when nothing claimed it (SDK use, tests)."""
    return _claimed if _claimed is not None else sys.stdout.buffer
