"""Terminal input that takes a huge bracketed paste in linear time.

prompt_toolkit's `Vt100Parser` appends each chunk of a paste to one string and searches all of it for the end
mark again (`ESC [ 201 ~`), and its input reads 1 KB at a time: a 5 MB paste costs some 5,000 copies and
scans of up to 5 MB, so it showed only after minutes. Here the chunks are kept in a list, only the new chunk
(with the few characters before it that could begin the mark) is searched, and the terminal is read 64 KB at a
time; the parser is otherwise prompt_toolkit's own."""

from __future__ import annotations

from typing import Any

from prompt_toolkit.input.vt100 import Vt100Input
from prompt_toolkit.input.vt100_parser import Vt100Parser
from prompt_toolkit.key_binding.key_processor import KeyPress
from prompt_toolkit.keys import Keys

PASTE_END = "\x1b[201~"
READ_CHUNK = 65536
"""Bytes read from the terminal at once (prompt_toolkit reads 1,024)."""


class PasteParser(Vt100Parser):
    """`Vt100Parser` with a bracketed paste collected in O(total size)."""

    def __init__(self, feed_key_callback: Any):
        super().__init__(feed_key_callback)
        self._chunks: list[str] = []
        self._size = 0  # characters in `_chunks`

    def feed(self, data: str) -> None:
        if not self._in_bracketed_paste:
            super().feed(data)  # on a paste start it calls `feed` (this one) with the rest
            return
        tail = self._tail(len(PASTE_END) - 1)  # the mark may begin in the chunks before
        found = (tail + data).find(PASTE_END)
        if found < 0:
            self._chunks.append(data)
            self._size += len(data)
            return
        whole = "".join(self._chunks) + data
        end = self._size - len(tail) + found
        self._chunks, self._size = [], 0
        self._in_bracketed_paste = False
        self.feed_key_callback(KeyPress(Keys.BracketedPaste, whole[:end]))
        self.feed(whole[end + len(PASTE_END):])


    def _tail(self, count: int) -> str:
        """The last `count` characters collected (fewer when fewer are)."""
        parts: list[str] = []
        for chunk in reversed(self._chunks):
            parts.append(chunk[-count:])
            count -= len(parts[-1])
            if count <= 0:
                break
        return "".join(reversed(parts))


class PasteInput(Vt100Input):
    """`Vt100Input` reading `READ_CHUNK` bytes at a time through a `PasteParser`."""

    def __init__(self, stdin: Any):
        super().__init__(stdin)
        self.vt100_parser = PasteParser(lambda key_press: self._buffer.append(key_press))

    def read_keys(self) -> list[KeyPress]:
        self.vt100_parser.feed(self.stdin_reader.read(READ_CHUNK))
        result, self._buffer = self._buffer, []
        return result
