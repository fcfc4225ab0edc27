"""A real terminal for end-to-end tests of the interactive mode: the CLI runs in a private tmux server
(its own socket, no user config) and tests read the screen with `capture-pane`.

`wait_for` reads the screen until a text appears or a deadline passes: it synchronises on the screen's
state, never on elapsed time. It reads again as soon as tmux says the pane changed (a control-mode client,
`tmux -C`, reports every output of the pane: `_Control`), and at the latest every `POLL_S` (conditions on
files or the fake model change no pane). The same client runs the commands tests send most (`capture-pane`,
`display-message`, `send-keys`; not `show-buffer`, whose output need not end in a line break): a `tmux`
process per command cost ~4 ms of CPU, and a test reads the screen about 30 times (issue 11). After the CLI exits the pane stays, showing `__EXIT=<code>`. With
`TEST_TIMING_DIR` set, `close` reports the CPU of the server and of what runs in its pane (`timing.add_cpu`)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Callable

from . import timing

DEADLINE_S = 30.0
POLL_S = 0.05


def tmux_available() -> bool:
    return shutil.which("tmux") is not None


CONTROLLED = frozenset({"capture-pane", "display-message", "send-keys"})
"""Commands `TmuxTerminal._tmux` sends through the control client, when every argument is printable and holds
no `'` (a control-mode command line is tmux's command language: each argument goes in single quotes); any
other goes through a process of its own."""


class _Control:
    """A control-mode client (`tmux -C attach`). Outside command output, every line it prints is a
    notification: `%output` for every write to the pane, `%window-renamed`, `%layout-change`, ... Each is a
    possible change of what the pane shows; `wait_past` wakes a waiter at the first one. `run` sends one command
    and returns its output, the block between `%begin` and `%end` (flag 1: sent by this client). The client does
    not resize the window (it has no size)."""

    def __init__(self, command: list[str]):
        self._count = 0
        self._condition = threading.Condition()
        self._lock = threading.Lock()  # one command at a time: answers come in the order commands were sent
        self._block: list[str] | None = None  # the lines of the answer being read
        self._begin: list[str] = []  # time and number of its `%begin`, which its `%end` repeats
        self._answers: list[tuple[bool, str]] = []  # (ok, output) of answers not yet taken
        self._ended = False
        self._client = subprocess.Popen([*command, "-C", "attach", "-t", "t"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        threading.Thread(target=self._read, name="tmux-control", daemon=True).start()

    def _read(self) -> None:
        assert self._client.stdout is not None
        while raw := self._client.stdout.readline():  # at the end (the server went away) waiters time out
            line = raw.decode("utf-8", "replace").rstrip("\n")
            with self._condition:
                self._take(line)
                self._condition.notify_all()
        with self._condition:
            self._ended = True
            self._condition.notify_all()

    def _take(self, line: str) -> None:
        """One line of the client's output (the condition held)."""
        if self._block is None:
            if line.startswith("%begin ") and line.endswith(" 1"):
                self._block, self._begin = [], line.split()[1:3]
            else:
                self._count += 1
        elif line.split()[:1] in (["%end"], ["%error"]) and line.split()[1:3] == self._begin:
            self._answers.append((line.startswith("%end"), "".join(row + "\n" for row in self._block)))
            self._block = None
        else:
            self._block.append(line)

    @property
    def count(self) -> int:
        with self._condition:
            return self._count

    def wait_past(self, seen: int, timeout_s: float) -> None:
        """Return once a notification arrived after `count` was `seen`, or after `timeout_s` seconds."""
        with self._condition:
            self._condition.wait_for(lambda: self._count != seen, timeout_s)

    def run(self, args: tuple[str, ...], timeout_s: float = 10.0) -> tuple[bool, str] | None:
        """(succeeded, output) of the command `args` (printable, no `'`: each is sent in single quotes); None
        when the client has ended or does not answer within `timeout_s` (the caller runs it as a process then)."""
        assert self._client.stdin is not None
        with self._lock:
            if self._ended:
                return None
            try:
                self._client.stdin.write(" ".join(f"'{arg}'" for arg in args).encode() + b"\n")
                self._client.stdin.flush()
            except OSError:
                return None
            with self._condition:
                if not self._condition.wait_for(lambda: self._answers or self._ended, timeout_s):
                    self._ended = True  # a late answer would be taken for the next command's
                    return None
                return self._answers.pop(0) if self._answers else None

    def close(self) -> None:
        assert self._client.stdin is not None
        try:
            self._client.stdin.close()  # a control client detaches at the end of its input
        except OSError:
            pass  # it has gone already (the server was killed)
        try:
            self._client.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._client.kill()
            self._client.wait()


class TmuxTerminal:
    """`agent-forge *args` in a `columns` x `rows` tmux pane, with `env` and `cwd`; `prefix` runs it through
    another program first (`slow_link.py`)."""

    def __init__(self, env: dict[str, str], cwd: Path, *args: str, columns: int = 100, rows: int = 30,
                 prefix: tuple[str, ...] = ()):
        self.socket = f"af-test-{uuid.uuid4().hex[:12]}"
        script = Path(env["TMPDIR"]) / f"{self.socket}.sh"
        exports = "".join(f"export {name}={shlex.quote(value)}\n" for name, value in env.items()
                          if name.isidentifier())
        command = " ".join(shlex.quote(part) for part in [*prefix, sys.executable, "-m", "agent_forge", *args])
        script.write_text(f"{exports}export TERM=xterm-256color\ncd {shlex.quote(str(cwd))}\n{command}\n"
                          f"echo __EXIT=$?\nexec sleep 3600\n")
        self._tmux("new-session", "-d", "-s", "t", "-x", str(columns), "-y", str(rows), f"bash {script}")

    def _command(self) -> list[str]:
        return ["tmux", "-L", self.socket, "-f", "/dev/null"]

    @property
    def _changes(self) -> _Control:
        """The control client: the pane's change notifications and the reads, from the first wait or read on
        (subclasses open the session themselves)."""
        if getattr(self, "_watch", None) is None:
            self._watch = _Control(self._command())
        return self._watch

    def _tmux(self, *args: str) -> str:
        if args[0] in CONTROLLED and all(arg.isprintable() and "'" not in arg for arg in args):
            answer = self._changes.run(args)
            if answer is not None:
                if not answer[0]:
                    raise RuntimeError(f"tmux {args[0]} failed: {answer[1]}")
                return answer[1]
        result = subprocess.run([*self._command(), *args], capture_output=True, text=True, timeout=10)
        if result.returncode != 0:
            raise RuntimeError(f"tmux {args[0]} failed: {result.stderr}")
        return result.stdout

    def screen(self) -> str:
        """The visible screen as text (no colours)."""
        return self._tmux("capture-pane", "-p", "-t", "t")

    def scrollback(self) -> str:
        """Everything the pane holds: its history and the screen."""
        return self._tmux("capture-pane", "-p", "-S", "-", "-t", "t")

    def title(self) -> str:
        return self._tmux("display-message", "-p", "-t", "t", "#{pane_title}").strip()

    def type(self, text: str) -> None:
        """Type `text` literally (no key names)."""
        self._tmux("send-keys", "-t", "t", "-l", text)

    def press(self, *keys: str) -> None:
        """Press tmux key names: `Enter`, `Escape`, `C-d`, `M-Enter`, ..."""
        self._tmux("send-keys", "-t", "t", *keys)

    def resize(self, columns: int, rows: int) -> None:
        self._tmux("resize-window", "-t", "t", "-x", str(columns), "-y", str(rows))

    def wait_for(self, text: str, *, deadline_s: float = DEADLINE_S, where: Callable[[], str] | None = None) -> str:
        """The screen once it shows `text`; AssertionError with the screen when the deadline passes."""
        read = where or self.screen
        end = time.monotonic() + deadline_s
        while True:
            seen = self._changes.count  # before reading: a change while we read wakes the next wait at once
            shown = read()
            if text in shown:
                return shown
            if time.monotonic() > end:
                raise AssertionError(f"{text!r} did not appear within {deadline_s} s; the screen:\n{shown}")
            self._changes.wait_past(seen, POLL_S)

    def wait_for_all(self, *texts: str, deadline_s: float = DEADLINE_S) -> str:
        """The screen once it shows every one of `texts`: a frame is drawn in several writes, so the screen read
        when the first text appears may not hold the others yet (a tool call box cut off above its last line)."""
        self.wait_until(lambda: all(text in self.screen() for text in texts), f"all of {texts!r}", deadline_s)
        return self.screen()

    def wait_for_line(self, line: str, *, deadline_s: float = DEADLINE_S) -> str:
        """The screen once one of its lines is `line` (surrounding spaces aside): a dialog's title, where
        `wait_for` would also match the same words in a message still on the screen (`saved the API key for
        fake` holds `API key for fake`: a key typed then went to the editor before the dialog opened)."""
        self.wait_until(lambda: line in (row.strip() for row in self.screen().splitlines()), f"the line {line!r}",
                        deadline_s)
        return self.screen()

    def wait_until(self, condition: Callable[[], bool], what: str, deadline_s: float = DEADLINE_S) -> None:
        end = time.monotonic() + deadline_s
        while True:
            seen = self._changes.count
            if condition():
                return
            if time.monotonic() > end:
                raise AssertionError(f"{what} did not happen within {deadline_s} s; the screen:\n{self.screen()}")
            self._changes.wait_past(seen, POLL_S)

    def exit_code(self) -> int:
        """Wait for the CLI to exit; its exit code."""
        shown = self.wait_for("__EXIT=")
        return int(shown.split("__EXIT=")[1].split()[0])

    def _report_cpu(self) -> None:
        """Count the CPU of the server and what its pane runs (no children of the test's process) for the
        test's timing; nothing when the server is gone already (a test killed its last pane)."""
        try:
            server = int(self._tmux("display-message", "-p", "#{pid}"))
        except (RuntimeError, ValueError, subprocess.TimeoutExpired):
            return
        timing.add_cpu(timing.tree_cpu(server))

    def close(self) -> None:
        if timing.on():
            self._report_cpu()
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=10)
        if getattr(self, "_watch", None) is not None:
            self._watch.close()
        try:
            os.remove(Path(f"/tmp/tmux-{os.getuid()}") / self.socket)
        except OSError:
            pass
