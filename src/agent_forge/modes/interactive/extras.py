"""Editor and clipboard helpers of the interactive mode: Ctrl+G edits the prompt in `$VISUAL` / `$EDITOR`,
`/copy` puts the last answer on the clipboard (OSC 52) and, since a terminal that ignores OSC 52 cannot be
detected, also into a file whose path is shown."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from typing import Any

from prompt_toolkit.application import run_in_terminal

from ...coding.errors import CommandError
from ...coding.paths import path_text
from ...coding.private_temp import write_private_file
from .terminal import RealTerminalFds, osc52_copy

LAST_ANSWER_FILE = "last-answer.md"  # in the private per-user temp dir, beside the full shell outputs


async def edit_externally(ui: Any) -> None:
    """Open the editor's text in `$VISUAL` (else `$EDITOR`) on the real terminal; its saved text replaces the
    editor's. Raises `CommandError` when neither is set or the program cannot run."""
    command = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not command:
        raise CommandError("set $VISUAL or $EDITOR to edit the prompt in an external editor")
    fd, path = tempfile.mkstemp(prefix="agent-forge-prompt-", suffix=".md")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(ui.editor.text())
        code = await run_in_terminal(lambda: _run(shlex.split(command) + [path]))
        if code != 0:
            raise CommandError(f"{command} {_ended(code)}; the prompt is unchanged")
        with open(path, encoding="utf-8", errors="replace") as handle:
            ui.editor.set_text(handle.read().rstrip("\n"))
    finally:
        os.remove(path)


SAVE_CURSOR, RESTORE_AND_CLEAR = "\x1b7", "\r\x1b8\x1b[J"
"""Around the external editor: where the live region was, and back there with everything below cleared, so
an editor that writes to the terminal itself (`EDITOR=cat`, a failing program's message) leaves nothing the
redrawn live region would be glued to. A full-screen editor restores the screen itself: this changes nothing."""


def _ended(code: int) -> str:
    """How a program that failed ended: `exited with code 3`, `was killed by SIGSEGV` (`subprocess` gives a
    signal as a negative code)."""
    if code >= 0:
        return f"exited with code {code}"
    import signal

    try:
        return f"was killed by {signal.Signals(-code).name}"
    except ValueError:
        return f"was killed by signal {-code}"


def _run(argv: list[str]) -> int:
    with RealTerminalFds():
        os.write(1, SAVE_CURSOR.encode())
        try:
            return subprocess.call(argv)
        except OSError as exc:
            raise CommandError(f"cannot run {argv[0]}: {exc.strerror or exc}") from None
        finally:
            os.write(1, RESTORE_AND_CLEAR.encode())


async def copy_last_answer(ui: Any) -> None:
    """`/copy`: the last answer's text to the clipboard (OSC 52) and to `<tmp>/agent-forge-<uid>/last-answer.md`
    (private: `private_temp.write_private_file`)."""
    text = ui.session.last_assistant_text()
    if not text:
        raise CommandError("no answer to copy yet")
    try:
        path = write_private_file(LAST_ANSWER_FILE, text)
    except OSError as exc:
        raise CommandError(f"cannot write the answer's file: {exc}") from None
    ui.terminal.write(osc52_copy(text))
    ui.say(f"copied the last answer to the clipboard (if the terminal allows OSC 52) and to {path_text(path)}",
           "success")
