"""Cleaning command output for a model: terminal escape sequences, control characters and carriage returns go.

What `sanitize_output` does, in this order:
1. Removes escape sequences (ECMA-48): CSI (`ESC [ ... final`, e.g. colours, cursor moves, "erase line"),
   OSC (`ESC ] ... BEL` or `... ESC \\`, e.g. window titles, hyperlinks), DCS/SOS/PM/APC strings ending in
   `ESC \\`, and the short `ESC <intermediates> <final>` forms; the 8-bit CSI (U+009B) and OSC (U+009D) too.
2. Drops every other control character except `\\n`, `\\t` and `\\r`: NUL and the rest of C0, DEL, C1
   (U+0080-U+009F), and so any `ESC` left from a malformed sequence.
3. Carriage returns: `\\r\\n` (and `\\r\\r\\n`, ...) becomes `\\n`; `\\r` at the end of the text is dropped;
   any other `\\r` restarts its line, so a line keeps only what follows its last `\\r` (a progress bar
   `10%\\r20%\\r30%` shows as `30%`).
Everything else (including U+FFFD from undecodable bytes) is kept.

`OutputSanitizer` does steps 1-3 incrementally for output arriving in pieces; instead of rewriting text it
has already returned, it leaves one `\\r` where a line restarts (see `apply_carriage_returns`). It counts what
cleaning hid, and its `note()` says so (`[Output cleaned: 3,000,000 characters of escape sequences or control
characters removed]`): a command's output that cleaning changed is never passed off as what it printed.

`terminal_text` makes text safe for a user's terminal instead (print mode's answer, error lines on stderr, the
interactive mode): nothing is removed, so nothing is hidden from the person reading it. Every control character
but `\\n` and `\\t` (ESC included, so every escape sequence) is shown as its escape (`\\x1b]0;title\\x07`),
as are the invisible characters that reorder or hide text (bidi overrides and isolates, zero-width characters:
`\\u202e`), and every `\\r` becomes a line break, so no text is overwritten. A command or file name shown so
reads as what runs or is written (an OSC string removed from `echo ok \\x1b]0; touch x; \\x07` would hide a
command bash still runs).
"""

from __future__ import annotations

import re

from ...ai.visible_text import escape_invisible
from ...words import counted

_ESCAPE = re.compile(  # one leading character per branch: the regex engine then skips plain text quickly
    r"\x1b(?:"
    r"\[[0-?]*[ -/]*[@-~]"  # CSI: parameters, intermediates, final byte
    r"|\][^\x07\x1b\n]*(?:\x07|\x1b\\)"  # OSC, ended by BEL or ST
    r"|[PX^_][^\x1b\n]*\x1b\\"  # DCS, SOS, PM, APC, ended by ST
    r"|[ -/]*[0-~])"  # nF, Fp, Fe and Fs forms: charset selection, keypad mode, index, ...
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
    r"|\x9d[^\x07\x1b\n]*(?:\x07|\x1b\\)"  # 8-bit OSC
)
_UNFINISHED_ESCAPE = re.compile(
    r"(?:(?:\x1b\[|\x9b)[0-?]*[ -/]*|(?:\x1b\]|\x9d)[^\x07\x1b\n]*\x1b?|\x1b[PX^_][^\x1b\n]*\x1b?|\x1b[ -/]*)\Z")
_CONTROLS = dict.fromkeys([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0x7F, 0xA0)])
"""`str.translate` table deleting C0 controls except tab, LF and CR, DEL, and C1 controls."""
_LINE_END = re.compile(r"\r+\n")
_CARRIAGE_RETURNS = re.compile(r"\r+")

MAX_HELD_CHARS = 4096
"""An unfinished escape sequence at the end of a piece is held back for the next piece up to this length
(long enough for an OSC hyperlink); a longer one is not an escape sequence anyone will finish."""


def sanitize_output(text: str) -> str:
    """`text` cleaned as the module docstring describes; the result has no control characters but `\\n`, `\\t`."""
    sanitizer = OutputSanitizer()
    return apply_carriage_returns(sanitizer.feed(text) + sanitizer.flush())


def terminal_text(text: str) -> str:
    """`text` safe to show on a terminal, hiding nothing (module docstring): control characters but `\\n` and
    `\\t`, and invisible reordering characters, as visible escapes; `\\r\\n` becomes `\\n` and any other
    `\\r` a `\\n` (a lone carriage return would let what follows overwrite what the line showed)."""
    text = _LINE_END.sub("\n", text).replace("\r", "\n")
    return escape_invisible(text)  # the escapes of `ai/visible_text.py`, shared with the providers' errors


def apply_carriage_returns(text: str) -> str:
    """Each line of `text` (split on `\\n`) reduced to what follows its last `\\r`."""
    if "\r" not in text:
        return text
    return "\n".join(line.rpartition("\r")[2] for line in text.split("\n"))


class OutputSanitizer:
    """Steps 1-3 of `sanitize_output` for a stream: `feed` each piece, `flush` at the end.

    The concatenated returns, passed through `apply_carriage_returns`, equal `sanitize_output` of the
    concatenated input, however the input is cut. A returned `\\r` is always followed by a character other
    than `\\n` and means "the current line restarts here". An unfinished escape sequence or trailing `\\r` at
    the end of a piece is held back (a `\\r` may turn out to end a `\\r\\n`); `flush` drops both.
    """

    def __init__(self) -> None:
        self._held = ""
        self.removed = 0
        """Characters removed so far: escape sequences and control characters (`\\r`s not counted)."""
        self.overwritten = 0
        """Line restarts returned so far that hide text (a `\\r` after some text of its line)."""
        self._line_open = False  # the text returned so far ends inside a line (not after `\\n` or at the start)

    def feed(self, text: str) -> str:
        text = self._held + text
        unfinished = _UNFINISHED_ESCAPE.search(text, max(0, len(text) - MAX_HELD_CHARS))
        cut = unfinished.start() if unfinished else len(text)
        body = self._clean(text[:cut])
        kept = body.rstrip("\r")
        self._held = body[len(kept):] + text[cut:]
        return self._counted(_restarts(kept))

    def flush(self) -> str:
        """The end of the stream: held-back text, without an unfinished escape sequence or trailing `\\r`."""
        text, self._held = self._held, ""
        unfinished = _UNFINISHED_ESCAPE.search(text)
        if unfinished:
            self.removed += len(text) - unfinished.start()
            text = text[:unfinished.start()]
        return self._counted(_restarts(self._clean(text).rstrip("\r")))

    def note(self) -> str | None:
        """What cleaning changed, for the reader of the cleaned text, or None when it changed nothing visible:
        `[Cleaned for display: 12 characters of escape sequences or control characters removed; 1 line
        overwritten by a carriage return (only its last text is kept)]`."""
        parts = []
        if self.removed:
            parts.append(f"{counted(self.removed, 'character', grouped=True)} of escape sequences "
                         "or control characters removed")
        if self.overwritten:
            one = self.overwritten == 1
            parts.append(f"{self.overwritten:,} line{' was' if one else 's were'} overwritten by a carriage "
                         f"return (only {'its' if one else 'their'} last text is kept)")
        return f"[Output cleaned: {'; '.join(parts)}]" if parts else None

    def _clean(self, text: str) -> str:
        cleaned = _clean(text)
        self.removed += len(text) - len(cleaned)
        return cleaned

    def _counted(self, text: str) -> str:
        """`text` as returned; counts its restarts that hide text of their line."""
        if "\r" in text:
            for at in _RESTART.finditer(text):
                start = at.start()
                if (text[start - 1] != "\n") if start else self._line_open:
                    self.overwritten += 1
        if text:
            self._line_open = text[-1] != "\n"
        return text


_RESTART = re.compile(r"\r")


def _clean(text: str) -> str:
    """Steps 1 and 2: escape sequences and control characters other than `\\n`, `\\t`, `\\r` removed."""
    if "\x1b" in text or "\x9b" in text or "\x9d" in text:  # `in` is far faster than a regex scan
        text = _ESCAPE.sub("", text)
    return text.translate(_CONTROLS)


def _restarts(text: str) -> str:
    """`\\r`s before a newline removed and runs of `\\r` merged: what is left marks a line restart."""
    if "\r" not in text:
        return text
    return _CARRIAGE_RETURNS.sub("\r", _LINE_END.sub("\n", text))


def print_warning(message: str) -> None:
    """`Warning: <message>` on stderr, cleaned by `terminal_text` (it may quote a file's or a path's text): how a
    running session reports what the start-up warnings would have said (`switching.py`, `ModelControl`)."""
    import sys

    print(f"Warning: {terminal_text(message)}", file=sys.stderr)
