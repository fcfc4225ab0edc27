"""A real terminal for end-to-end tests of the interactive mode: the CLI runs in a private tmux server
(its own socket, no user config) and tests read the screen with `capture-pane`.

`wait_for` polls the screen until a text appears or a deadline passes: it synchronises on the screen's
state, never on elapsed time. After the CLI exits the pane stays, showing `__EXIT=<code>`."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Callable

DEADLINE_S = 30.0
POLL_S = 0.05


def tmux_available() -> bool:
    return shutil.which("tmux") is not None


class TmuxTerminal:
    """`agent-forge *args` in a `columns` x `rows` tmux pane, with `env` and `cwd`."""

    def __init__(self, env: dict[str, str], cwd: Path, *args: str, columns: int = 100, rows: int = 30):
        self.socket = f"af-test-{uuid.uuid4().hex[:12]}"
        script = Path(env["TMPDIR"]) / f"{self.socket}.sh"
        exports = "".join(f"export {name}={shlex.quote(value)}\n" for name, value in env.items()
                          if name.isidentifier())
        command = " ".join(shlex.quote(part) for part in [sys.executable, "-m", "agent_forge", *args])
        script.write_text(f"{exports}export TERM=xterm-256color\ncd {shlex.quote(str(cwd))}\n{command}\n"
                          f"echo __EXIT=$?\nexec sleep 3600\n")
        self._tmux("new-session", "-d", "-s", "t", "-x", str(columns), "-y", str(rows), f"bash {script}")

    def _tmux(self, *args: str) -> str:
        result = subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", *args], capture_output=True,
                                text=True, timeout=10)
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
            shown = read()
            if text in shown:
                return shown
            if time.monotonic() > end:
                raise AssertionError(f"{text!r} did not appear within {deadline_s} s; the screen:\n{shown}")
            time.sleep(POLL_S)

    def wait_for_line(self, line: str, *, deadline_s: float = DEADLINE_S) -> str:
        """The screen once one of its lines is `line` (surrounding spaces aside): a dialog's title, where
        `wait_for` would also match the same words in a message still on the screen (`saved the API key for
        fake` holds `API key for fake`: a key typed then went to the editor before the dialog opened)."""
        self.wait_until(lambda: line in (row.strip() for row in self.screen().splitlines()), f"the line {line!r}",
                        deadline_s)
        return self.screen()

    def wait_until(self, condition: Callable[[], bool], what: str, deadline_s: float = DEADLINE_S) -> None:
        end = time.monotonic() + deadline_s
        while not condition():
            if time.monotonic() > end:
                raise AssertionError(f"{what} did not happen within {deadline_s} s; the screen:\n{self.screen()}")
            time.sleep(POLL_S)

    def exit_code(self) -> int:
        """Wait for the CLI to exit; its exit code."""
        shown = self.wait_for("__EXIT=")
        return int(shown.split("__EXIT=")[1].split()[0])

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=10)
        try:
            os.remove(Path(f"/tmp/tmux-{os.getuid()}") / self.socket)
        except OSError:
            pass
