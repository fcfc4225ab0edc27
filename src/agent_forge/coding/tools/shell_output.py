"""Collecting a command's output: incremental decoding, a bounded tail in memory, the full output in a file."""

from __future__ import annotations

import codecs
import os
from typing import TYPE_CHECKING, BinaryIO, Callable

from ..paths import path_text
from .sanitize import OutputSanitizer
from .truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncationResult, truncate_tail, utf8_len

if TYPE_CHECKING:
    from .output_files import OutputDir


class TailBuffer:
    """The end of a text stream, enough for its `truncate_tail` at any moment, plus the stream's totals.

    A `\\r` in appended text discards the unfinished last line (an `OutputSanitizer` line restart), so a
    progress bar redrawn a million times takes the room of one line. Memory stays O(`max_bytes`): the tail
    that fits the limits always lies within the last `max_bytes` characters, so older text is dropped (in
    batches, to keep appends cheap).
    """

    def __init__(self, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES):
        self.max_lines, self.max_bytes = max_lines, max_bytes
        self.total_bytes = 0
        self._newlines = 0
        self._line_bytes = 0  # bytes of the unfinished last line, some of which may be dropped already
        self._text = ""
        self._dropped = False  # older text was dropped from `_text`
        self._starts_mid_line = False  # `_text` begins with the end of a line whose start was dropped

    def append(self, text: str) -> None:
        first, *restarts = text.split("\r")
        self._append(first)
        for piece in restarts:
            self._restart_line()
            self._append(piece)

    @property
    def total_lines(self) -> int:
        return self._newlines + (1 if self._line_bytes else 0)

    @property
    def retained_chars(self) -> int:
        """Characters held in memory (for tests of the bound)."""
        return len(self._text)

    def exceeds_limits(self) -> bool:
        return self.total_lines > self.max_lines or self.total_bytes > self.max_bytes

    def result(self) -> TruncationResult:
        """`truncate_tail` of everything appended so far, with totals of the whole stream."""
        result = truncate_tail(self._text, self.max_lines, self.max_bytes)
        if self._dropped and not result["truncated"]:
            # A line restart shrank the text below the limits: what precedes it here is no longer whole.
            kept = self._text[self._text.find("\n") + 1:] if self._starts_mid_line else self._text
            result = {**truncate_tail(kept, self.max_lines, self.max_bytes), "truncated": True,
                      "truncatedBy": "bytes"}
        if result["truncated"]:
            result = {**result, "totalLines": self.total_lines, "totalBytes": self.total_bytes}
        return result

    def _append(self, text: str) -> None:
        if not text:
            return
        self._text += text
        size = utf8_len(text)
        self.total_bytes += size
        newlines = text.count("\n")
        self._newlines += newlines
        self._line_bytes = utf8_len(text[text.rfind("\n") + 1:]) if newlines else self._line_bytes + size
        if len(self._text) > 2 * self.max_bytes + 2:
            cut = len(self._text) - (self.max_bytes + 1)
            self._starts_mid_line = self._text[cut - 1] != "\n"
            self._text = self._text[cut:]
            self._dropped = True

    def _restart_line(self) -> None:
        line_start = self._text.rfind("\n") + 1
        if line_start == 0:  # the whole retained text belongs to the discarded line
            self._starts_mid_line = False
        self._text = self._text[:line_start]
        self.total_bytes -= self._line_bytes
        self._line_bytes = 0


class OutputCollector:
    """Receives a command's raw output bytes.

    Decodes them as UTF-8 (a character split across reads is held back until complete; invalid bytes become
    U+FFFD), cleans the text with an `OutputSanitizer` (no escape sequences or control characters; a `\\r`
    left in a piece means the current line restarts), passes each cleaned piece to `on_chunk`, keeps a
    `TailBuffer` of it, and once the raw output or the cleaned text exceeds the limits writes all of the
    output (raw bytes, from the start) to a new `bash-<random>.log` in `output_dir` (the session's directory,
    see `output_files.py`; default: this process's), whose path is then `full_output_path`. When that file
    cannot be made or written (a missing or full temp dir), a partial file is removed, `full_output_path` is
    None and `full_output_error` says why (`os_error_text`); the tail is kept either way.
    """

    def __init__(self, on_chunk: Callable[[str], None] | None = None, tail: TailBuffer | None = None,
                 output_dir: OutputDir | None = None):
        self.on_chunk = on_chunk
        self.output_dir = output_dir
        self.tail = tail or TailBuffer()
        self.full_output_path: str | None = None
        self.full_output_error: str | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._sanitizer = OutputSanitizer()
        self._unspilled: list[bytes] | None = []
        self._unspilled_bytes = 0
        self._spill: BinaryIO | None = None

    def feed(self, data: bytes) -> None:
        self._store(data)
        self._emit(self._sanitizer.feed(self._decoder.decode(data)))

    def finish(self) -> None:
        """End of output: flush a dangling partial character (as U+FFFD) and held-back text, close the file."""
        self._emit(self._sanitizer.feed(self._decoder.decode(b"", final=True)) + self._sanitizer.flush())
        self.close()

    def cleaning_note(self) -> str | None:
        """`OutputSanitizer.note` of the whole output so far (what cleaning removed or overwrote)."""
        return self._sanitizer.note()

    def close(self) -> None:
        if self._spill is not None:
            try:
                self._spill.close()  # flushes the buffered end, which may not fit
            except OSError as exc:
                self._drop_spill(exc)
            self._spill = None

    def _store(self, data: bytes) -> None:
        if self._unspilled is not None:
            self._unspilled.append(data)
            self._unspilled_bytes += len(data)
            if self._unspilled_bytes > self.tail.max_bytes:  # held in memory otherwise, though cleaned away
                self._start_spill()
        elif self._spill is not None:
            self._write_spill(data)

    def _emit(self, text: str) -> None:
        if not text:
            return
        self.tail.append(text)
        if self._unspilled is not None and self.tail.exceeds_limits():
            self._start_spill()
        if self.on_chunk is not None:
            self.on_chunk(text)

    def _start_spill(self) -> None:
        from .output_files import process_output_dir  # only long outputs need it

        pending, self._unspilled = self._unspilled or [], None
        try:
            fd, self.full_output_path = (self.output_dir or process_output_dir()).create_file()
            self._spill = os.fdopen(fd, "wb")
        except OSError as exc:  # no writable temp dir: the tail is still shown, with the reason for no file
            self.full_output_error = os_error_text(exc)
            return
        for data in pending:
            self._write_spill(data)

    def _write_spill(self, data: bytes) -> None:
        if self._spill is None:
            return
        try:
            self._spill.write(data)
        except OSError as exc:
            self._drop_spill(exc)

    def _drop_spill(self, exc: OSError) -> None:
        """A full output that cannot be completed is no full output: remove it (freeing the full disk)."""
        spill, self._spill = self._spill, None
        try:
            spill.close()
        except OSError:
            pass  # the buffered rest fails again: the file goes anyway
        try:
            os.unlink(self.full_output_path)
        except OSError:
            pass
        self.full_output_path, self.full_output_error = None, os_error_text(exc)


def os_error_text(exc: OSError) -> str:
    """An `OSError` for messages: the OS's reason, then the file it named (`No such file or directory:
    /nonexistent/agent-forge-0`), else the exception's text."""
    reason = exc.strerror or str(exc)
    return f"{reason}: {path_text(exc.filename)}" if exc.filename else reason
