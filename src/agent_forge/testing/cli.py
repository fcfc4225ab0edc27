"""The command line in this process, for tests: `run_cli(argv, ...)` runs `agent-forge <argv>` as
`subprocess.run([python, "-m", "agent_forge", *argv], input=..., capture_output=True)` would, and returns
a `subprocess.CompletedProcess` with the exit code and the captured stdout and stderr, without the ~0.2 s of
interpreter start-up and imports a process costs.

What the run sees of the process is its own: cwd, environment and stderr (`isolation.isolated`), stdin (the
`input` bytes, not a terminal), stdout, and the claimed protocol streams of `stdout_guard` (after
`claim_stdout`, `print()` lands in stderr as it does in a process: descriptor 1 points there). Everything is
restored when the run ends. It must be called from the main thread (the modes install signal handlers) with
no event loop running, and never while an in-process RPC agent runs (`testing.rpc.busy`).

What only a process has stays a process (start one): output written to descriptors 1 and 2 by child
processes or `os.write`, signals, closed or full standard streams, start-up imports, resource limits, kill -9,
and the exit of a process kept by worker threads stuck in the kernel (`cli_loop.leave_stuck_threads`).
"""

from __future__ import annotations

import contextlib
import io
import signal
import subprocess
from typing import Any, BinaryIO, Iterator, Mapping, Sequence

from . import rpc
from .isolation import isolated

_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGALRM)


def run_cli(argv: Sequence[str], *, cwd: str | None = None, env: Mapping[str, str] | None = None,
            input: bytes = b"", timeout: float | None = None) -> subprocess.CompletedProcess[bytes]:
    """`agent-forge <argv>` in this process: `CompletedProcess(args, returncode, stdout, stderr)` with bytes
    streams. `cwd` and `env` default to the current ones. Raises `subprocess.TimeoutExpired` after `timeout`
    seconds (a SIGALRM interrupts the run) and RuntimeError when called while another in-process agent runs."""
    from ..cli import run_command

    if rpc.busy():
        raise RuntimeError("an in-process agent is already running")
    streams = _Streams(input)
    with _signals_restored(), _deadline(argv, timeout), isolated(cwd, env, streams.stderr_text()), \
            streams.installed():
        code = run_command(list(argv))
    return subprocess.CompletedProcess(list(argv), code, streams.stdout.getvalue(), streams.stderr.getvalue())


class _Buffer(io.BytesIO):
    """A bytes buffer that outlives the text streams on it (a dropped `TextIOWrapper` closes its buffer)."""

    def close(self) -> None:
        pass


class _Streams:
    """The run's stdin, stdout and stderr, as bytes buffers."""

    def __init__(self, stdin: bytes) -> None:
        self.stdin = _Buffer(stdin)
        self.stdout = _Buffer()
        self.stderr = _Buffer()

    def stderr_text(self) -> io.TextIOWrapper:
        """A text stream onto stderr (a process's stderr: UTF-8, undecodable text backslash-escaped)."""
        return _text(self.stderr, "backslashreplace")

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """`sys.stdin`/`sys.stdout` and `stdout_guard`'s claim functions on these buffers for the body."""
        import sys

        from ..modes import stdout_guard

        saved = (sys.stdin, sys.stdout, stdout_guard.claim_stdout, stdout_guard.claim_stdin,
                 stdout_guard._claimed, stdout_guard._claimed_in, stdout_guard._on_failure, stdout_guard._pump)
        sys.stdin, sys.stdout = _text(self.stdin, "strict"), _text(self.stdout, "strict")
        stdout_guard.claim_stdout, stdout_guard.claim_stdin = self._claim_stdout, self._claim_stdin
        stdout_guard._claimed = stdout_guard._claimed_in = stdout_guard._pump = None
        try:
            yield
        finally:
            (sys.stdin, sys.stdout, stdout_guard.claim_stdout, stdout_guard.claim_stdin,
             stdout_guard._claimed, stdout_guard._claimed_in, stdout_guard._on_failure, stdout_guard._pump) = saved

    def _claim_stdout(self) -> BinaryIO:
        """As `stdout_guard.claim_stdout`: the protocol stream is stdout, `sys.stdout` now writes to stderr."""
        import sys

        from ..modes import stdout_guard

        if stdout_guard._claimed is None:
            sys.stdout.flush()
            stdout_guard._claimed = self.stdout
            sys.stdout = self.stderr_text()
        return stdout_guard._claimed

    def _claim_stdin(self) -> BinaryIO:
        """As `stdout_guard.claim_stdin`: the mode reads stdin, `sys.stdin` is at end of file."""
        import sys

        from ..modes import stdout_guard

        if stdout_guard._claimed_in is None:
            stdout_guard._claimed_in = self.stdin
            sys.stdin = _text(_Buffer(), "strict")
        return stdout_guard._claimed_in


def _text(buffer: BinaryIO, errors: str) -> io.TextIOWrapper:
    """A UTF-8 text stream writing straight through to `buffer` (two of them on stderr keep their order)."""
    return io.TextIOWrapper(buffer, encoding="utf-8", errors=errors, write_through=True)  # type: ignore[arg-type]


@contextlib.contextmanager
def _signals_restored() -> Iterator[None]:
    """The modes take SIGINT, SIGTERM and SIGHUP over (and the event loop the wake-up fd): give them back."""
    handlers = {signum: signal.getsignal(signum) for signum in _SIGNALS}
    wakeup = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(wakeup)
    try:
        yield
    finally:
        signal.set_wakeup_fd(wakeup)
        for signum, handler in handlers.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)


@contextlib.contextmanager
def _deadline(argv: Sequence[str], timeout: float | None) -> Iterator[None]:
    """`subprocess.TimeoutExpired` raised in the run after `timeout` seconds (None: no limit)."""
    if timeout is None:
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise subprocess.TimeoutExpired(list(argv), timeout)

    signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
