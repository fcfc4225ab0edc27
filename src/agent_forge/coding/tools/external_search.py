"""`rg` and `fd` when they are on PATH: locating them and streaming their output line by line.

Nothing is ever downloaded (DESIGN.md): without these programs the tools use the pure-Python walk in
`ignore_walk.py`.
"""

from __future__ import annotations

import asyncio
import functools
import os
import re
import signal
import subprocess
from typing import Callable

from ..errors import ExternalSearchError

STREAM_LIMIT_BYTES = 64 * 1024 * 1024
"""Longest output line accepted (`rg --json` puts a whole matched line in one record; minified files have
multi-megabyte lines)."""

FD_NO_REQUIRE_GIT = (8, 7)
"""First fd version with `--no-require-git`; older ones ignore `.gitignore` outside a git repository."""


@functools.cache
def ripgrep() -> str | None:
    """Path of `rg`, or None."""
    import shutil

    return shutil.which("rg")


@functools.cache
def fd() -> tuple[str, bool] | None:
    """`(path, supports --no-require-git)` for `fd` (Debian names it `fdfind`), or None."""
    import shutil

    path = shutil.which("fd") or shutil.which("fdfind")
    if path is None:
        return None
    try:
        version = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"(\d+)\.(\d+)", version)
    if match is None:
        return None
    return path, (int(match.group(1)), int(match.group(2))) >= FD_NO_REQUIRE_GIT


async def stream_lines(argv: list[str], on_line: Callable[[bytes], bool], *, ok_codes: tuple[int, ...] = (0,),
                       cwd: str | None = None) -> str:
    """Run `argv` and call `on_line(line)` (without the newline) for each stdout line until it returns False,
    then stop the program; returns its standard error (decoded, stripped). Raises `ExternalSearchError` (whose
    message is that text) when it exits with a code outside `ok_codes` before being stopped. Cancellation
    kills the program and propagates."""
    proc = await asyncio.create_subprocess_exec(*argv, cwd=cwd, stdin=asyncio.subprocess.DEVNULL,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                limit=STREAM_LIMIT_BYTES)
    assert proc.stdout is not None and proc.stderr is not None
    stderr_task = asyncio.ensure_future(proc.stderr.read())  # drained alongside: a full pipe would block it
    stopped = finished = False
    try:
        while line := await proc.stdout.readline():
            if not on_line(line.rstrip(b"\n")):
                stopped = True
                break
        finished = not stopped
    finally:
        if not finished:  # stopped early, or cancelled / failed: the program may still be writing
            _kill(proc)
        code = await proc.wait()
        stderr = await stderr_task
    text = stderr.decode("utf-8", "replace").strip()
    if not stopped and code not in ok_codes:
        raise ExternalSearchError(text or f"exit status {code}")
    return text


_REFUSAL = re.compile(r"(?:rg: |\[fd error\]: )?(?P<path>.+): (?P<reason>[^:]+) \(os error (?P<errno>\d+)\)")
"""An error line of rg or fd about one path (`./a/b: Permission denied (os error 13)`; rg 14 prefixes `rg: `,
fd `[fd error]: `; rg says `./d: IO error for operation on ./d: ...` of a directory)."""

_IO_ERROR_ON = ": IO error for operation on "


def os_refusals(stderr: str) -> tuple[list[tuple[str, OSError]], str]:
    """Split the standard error of rg or fd into the paths the OS refused (`(relative path, the error)`, in
    order) and the other lines, joined (a real failure, or "" when there is none)."""
    refused: list[tuple[str, OSError]] = []
    rest = []
    for line in stderr.splitlines():
        found = _REFUSAL.fullmatch(line.strip())
        if found is None:
            rest.append(line)
            continue
        path = found["path"].rpartition(_IO_ERROR_ON)[2]
        refused.append((path.removeprefix("./"), OSError(int(found["errno"]), found["reason"])))
    return refused, "\n".join(rest).strip()


def _kill(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL by pid: `Process.kill()` first polls the child, and reaping it there races asyncio's child
    watcher, which then reports exit status 255 for a clean exit."""
    if proc.returncode is None:
        try:
            os.kill(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
