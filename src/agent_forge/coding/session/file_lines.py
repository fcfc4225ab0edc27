"""A session file's bytes as lines, and opening it for reading: `open_for_reading` never blocks nor opens a
non-regular file, and `FileLines` splits what it reads a chunk at a time, a line over `MAX_LINE_BYTES` never held.
Parsing the lines is `reading.py`'s.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..paths import path_text
from ...ai import json_wire
from ..errors import SessionFileError

# Opens never wait: a FIFO (or a device) put where a session file is expected would block `open` forever.
_READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
               | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0))


Line = tuple[int, "bytes | memoryview | None", bool, bool]
"""(1-based number, the line's bytes without its LF (None for a line over `MAX_LINE_BYTES`, never read whole),
whether it is the text after the last LF, whether it was screened: no `json_wire.has_long_number` in it) of a
file."""

MAX_LINE_BYTES = 64 << 20
"""64 MiB: a session line longer than this is skipped unread and reported as damage (a real entry is far smaller;
a line of this size costs about four times its size in memory to parse). No entry written here is longer: the
writer shrinks one that would be (`fit.py`)."""


def line_limit() -> str:
    """`MAX_LINE_BYTES` as messages name it: `64 MiB` (`N bytes` when not whole MiB: a lowered test limit)."""
    whole = MAX_LINE_BYTES % (1 << 20) == 0
    return f"{MAX_LINE_BYTES >> 20} MiB" if whole else f"{MAX_LINE_BYTES:,} bytes"


_READ_CHUNK = 1 << 16  # 64 KiB: what a chunk and its long-number screen add to the peak memory stays small
# (and a line inside one chunk is never over `MAX_LINE_BYTES`: only a line carried across chunks is checked)

_CARRY_HELD = 1 << 20
"""1 MiB: how much of a line carried across chunks is kept in memory; a longer one is read again from the file
when its end is found, and only if it fits in `MAX_LINE_BYTES`."""


class _Carry:
    """The start of a line that goes on in the next chunk: its bytes while they fit in `_CARRY_HELD`, past that
    only where it starts (`start`, a file offset) and its size, so a line over the cap is never held at all.
    `read_at(offset, size)` reads the file's bytes there (the file only grows while it is read: it is locked or
    appended to)."""

    def __init__(self, read_at: Callable[[int, int], bytes]) -> None:
        self._read_at = read_at
        self.parts: list[bytes] = []
        self.start = self.size = 0

    def add(self, part: bytes, offset: int) -> None:
        """Carry `part`, the file's bytes at `offset`, to the next chunk."""
        if not self.size:
            self.start = offset
        self.size += len(part)
        if self.size > _CARRY_HELD:
            self.parts = []  # dropped: read again by `join` if the line turns out to fit
        elif part:
            self.parts.append(part)

    def join(self, end: bytes) -> bytes | None:
        """The whole line (`end` is its rest), or None when it is over the cap; the carry starts anew."""
        size, self.size = self.size, 0
        parts, self.parts = self.parts, []
        if size + len(end) > MAX_LINE_BYTES:
            return None
        if size > _CARRY_HELD:
            parts = [self._read_at(self.start, size)]
        return b"".join([*parts, end]) if parts else end


class FileLines:
    """The lines of a session file, read `_READ_CHUNK` bytes at a time: the whole file is never in memory at once (the
    entries are), and each line is a view of its chunk (orjson parses a view as is). Split on LF only (U+2028
    and friends are ordinary characters in JSON strings); LF never occurs inside a UTF-8 sequence, so a line
    decoded alone reads as it would in the decoded file. The last line is the text after the last LF: empty,
    or a torn line. A line longer than `MAX_LINE_BYTES` is never held: its number is yielded with None, and
    listed in `too_long`. Once iterated: `size` (bytes), `whole` (bytes up to and including the last LF), `tail`
    (the last line, None when over the cap), `blank` (the file holds only whitespace). Raises SessionFileError
    when a read fails."""

    def __init__(self, handle: Any, path: Path) -> None:
        self._handle, self._path, self._lines = handle, path, self._read()
        self.size = self.whole = 0
        self.tail: bytes | None = b""
        self.tail_number = 1
        self.blank = True
        self.too_long: list[int] = []

    def __iter__(self) -> Iterator[Line]:
        return self._lines

    def _read(self) -> Iterator[Line]:
        number, carry = 1, _Carry(self._read_at)  # the start of a line that goes on in the next chunk
        while chunk := self._chunk():
            view, find, start = memoryview(chunk), chunk.find, 0
            screened = not json_wire.has_long_number(chunk)  # one translate a chunk, not one a line
            while (stop := find(b"\n", start)) >= 0:
                line = view[start:stop] if start else self._joined(carry, chunk[:stop], number)
                yield number, line, False, screened and bool(start)  # a joined line is screened when parsed
                start, number = stop + 1, number + 1
            self.whole = self.whole if not start else self.size - len(chunk) + start
            carry.add(chunk[start:] if start else chunk, self.size - len(chunk) + start)
        self.tail, self.tail_number = self._joined(carry, b"", number), number
        yield number, self.tail, True, False

    def _joined(self, carry: _Carry, end: bytes, number: int) -> bytes | None:
        line = carry.join(end)
        if line is None:
            self.too_long.append(number)
        return line

    def _read_at(self, offset: int, size: int) -> bytes:
        try:
            return os.pread(self._handle.fileno(), size, offset)
        except OSError as exc:
            raise read_error(self._path, exc) from None

    def _chunk(self) -> bytes:
        chunk = read_chunk(self._handle, self._path)
        self.size += len(chunk)
        self.blank = self.blank and chunk.isspace() if chunk else self.blank
        return chunk


class LineBatches:
    """The lines of a session file in batches, for a reader of the usual file (`reading._usual_body`): each
    `(lines, screened)` is a list of whole lines without their LF, in file order, and whether no
    `json_wire.has_long_number` is in any of them. Iteration stops early, `usual` False, where `FileLines` would
    have more to do: a line carried past `_CARRY_HELD` or over `MAX_LINE_BYTES`, text after the last LF (the
    caller reads such a file with `FileLines`). `size`: the bytes read. Raises SessionFileError when a read
    fails."""

    def __init__(self, handle: Any, path: Path) -> None:
        self._handle, self._path = handle, path
        self.size = 0
        self.usual = True

    def __iter__(self) -> Iterator[tuple[list[bytes], bool]]:
        carry: list[bytes] = []  # the start of a line that goes on in the next chunk
        carried = 0
        while chunk := read_chunk(self._handle, self._path):
            self.size += len(chunk)
            lines = chunk.split(b"\n")
            rest = lines.pop()  # after the chunk's last LF: the start of the next line
            if lines and carried:
                line = b"".join([*carry, lines.pop(0)])
                if len(line) > MAX_LINE_BYTES:
                    break
                yield [line], not json_wire.has_long_number(line)  # screened alone: it spans chunks
                carry, carried = [], 0
            elif lines:
                if len(lines[0]) > MAX_LINE_BYTES:  # as `FileLines` checks a chunk's first line
                    break
                carry = []
            if lines:
                yield lines, not json_wire.has_long_number(chunk)
            carry.append(rest)
            carried += len(rest)
            if carried > _CARRY_HELD:
                break
        else:
            self.usual = not carried
            return
        self.usual = False


def read_chunk(handle: Any, path: Path) -> bytes:
    """The next `_READ_CHUNK` bytes of `handle` (the file at `path`), b"" at its end. Raises SessionFileError."""
    try:
        return handle.read(_READ_CHUNK)
    except OSError as exc:
        raise read_error(path, exc) from None


def open_for_reading(path: Path) -> Any:
    """A binary file object for reading the regular file `path`. The target is checked before the open (a
    device or FIFO is never opened) and again on the descriptor, and the open does not block. Raises
    SessionFileError: `session file not found: <path>`, or `cannot read session file <path>: <reason>` (the
    OS's words, e.g. `Too many levels of symbolic links`, or `not a regular file but a FIFO (named pipe)`)."""
    try:
        check_regular_mode(os.stat(path).st_mode)
        fd = os.open(path, _READ_FLAGS)
    except OSError as exc:
        raise read_error(path, exc) from None
    try:
        check_regular_mode(os.fstat(fd).st_mode)  # the path may have been replaced between the checks
        os.set_blocking(fd, True)
    except OSError as exc:
        os.close(fd)
        raise read_error(path, exc) from None
    return os.fdopen(fd, "rb")


def check_readable(path: Path) -> None:
    """Raise what `open_for_reading` raises when `path` is missing or not a regular file, without opening it:
    every way of naming a session file (`--session`, `--fork`, `switch_session`) reports a path the same way."""
    try:
        check_regular_mode(os.stat(path).st_mode)
    except OSError as exc:
        raise read_error(path, exc) from None


class _NotRegular(OSError):
    pass


def check_regular_mode(mode: int) -> None:
    """Raise OSError (`not a regular file but a FIFO (named pipe)`) unless `mode` is a regular file's."""
    if not stat.S_ISREG(mode):
        from ..safe_read import describe_kind

        raise _NotRegular(f"not a regular file but {describe_kind(mode)}")


def read_error(path: Path, exc: OSError) -> SessionFileError:
    """The one message for a session file the OS will not let us read."""
    if isinstance(exc, FileNotFoundError):
        return SessionFileError(f"session file not found: {path_text(path)}", detail="it does not exist")
    reason = exc.strerror or str(exc)
    return SessionFileError(f"cannot read session file {path_text(path)}: {reason}", detail=f"cannot be read: {reason}")
