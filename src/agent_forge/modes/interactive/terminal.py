"""The terminal the UI draws on: the real stdin and stdout the CLI claimed (`stdout_guard`), wrapped for
prompt_toolkit, and its size (80x24 when the terminal reports none)."""

from __future__ import annotations

import io
import os

from prompt_toolkit.input.vt100 import Vt100Input
from prompt_toolkit.output.vt100 import Vt100_Output

from ..stdout_guard import protocol_stdin, protocol_stdout

DEFAULT_SIZE = (24, 80)


class Terminal:
    """`input` and `output` for the Application; `write` puts raw text on the screen."""

    def __init__(self) -> None:
        # The wrappers must live as long as the process: a collected TextIOWrapper closes what it wraps.
        self._stdin = io.TextIOWrapper(protocol_stdin(), encoding="utf-8", errors="replace")
        self._stdout = io.TextIOWrapper(protocol_stdout(), encoding="utf-8", errors="replace", write_through=True)
        self.input = Vt100Input(self._stdin)
        self.output = Vt100_Output.from_pty(self._stdout, term=os.environ.get("TERM"))

    def columns(self) -> int:
        return self._size()[1]

    def rows(self) -> int:
        return self._size()[0]

    def _size(self) -> tuple[int, int]:
        try:
            size = self.output.get_size()
        except OSError:
            return DEFAULT_SIZE
        rows, columns = size.rows, size.columns
        return (rows if rows > 0 else DEFAULT_SIZE[0], columns if columns > 0 else DEFAULT_SIZE[1])

    def write(self, text: str) -> None:
        """Write `text` (ANSI, newline-separated) at the cursor and flush."""
        self.output.write_raw(text)
        self.output.flush()
