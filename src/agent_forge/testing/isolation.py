"""One in-process agent run's share of the process: its cwd, environment and stderr, swapped in for the run
and restored after it, with the per-process state that would otherwise leak from one run to the next (the
temp dir, the process output dir and its pruning, a stdout failure, the tool paths found on PATH, the session
locks a process gives up when it exits). Used by `testing.rpc` and `testing.cli`."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from typing import Any, Iterator, Mapping


@contextlib.contextmanager
def isolated(cwd: str | None, env: Mapping[str, str] | None, stderr: Any) -> Iterator[None]:
    """Run the body with `cwd` (None: the current one), the environment `env` (None: the current one) and
    `sys.stderr` = `stderr`; everything is restored on exit, whatever the body raised."""
    from ..coding.session.lock import held_locks

    saved_env, saved_cwd, saved_stderr = dict(os.environ), os.getcwd(), sys.stderr
    locks = held_locks()
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
            os.environ["PWD"] = os.getcwd()
        fresh_process_state()
        sys.stderr = stderr
        yield
    finally:
        sys.stderr = saved_stderr
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for lock in held_locks() - locks:  # left by the run: dropped as its process's exit would drop them
            lock.abandon()
        fresh_process_state()


def fresh_process_state() -> None:
    """What a new process starts without: a cached temp dir, the process output dir, the pruning of old
    outputs that runs once per process (waited for: it reads TMPDIR), a stdout failure, the `bash`, `rg`
    and `fd` found on an earlier PATH."""
    from ..coding.tools import external_search, output_files, shell
    from ..modes import stdout_guard

    output_files.wait_for_pruning()
    output_files._pruner = None
    tempfile.tempdir = None  # read TMPDIR again
    output_files._process_dir = None
    stdout_guard.failure = None
    stdout_guard.stdout_closed = False
    for cached in (shell.shell_path, external_search.ripgrep, external_search.fd):
        cached.cache_clear()
