"""The prompt editor's buffer: multi-line text, prompt history kept in a file across runs, and large pastes
collapsed into a marker that is expanded back when the prompt is sent."""

from __future__ import annotations

import re
from pathlib import Path

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import Completer
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory, InMemoryHistory

from .completion import attachment_token
from .graphemes import cluster_end, cluster_start, snapped
from .paste import pasted_text
from ...coding.safe_read import is_file
from ...words import counted

PASTE_COLLAPSE_LINES = 10
PASTE_COLLAPSE_CHARS = 2000
"""A paste with more lines or characters than these shows as `[paste #N: L lines, C chars]`."""
HISTORY_MAX_CHARS = 100_000
"""Longer prompts (a 5 MB paste) are sent but not kept in the history file."""


def line_count(text: str) -> int:
    """Lines as `wc -l` counts them, plus an unfinished last one: `a\\nb\\n` and `a\\nb` are 2 lines."""
    return text.count("\n") + (not text.endswith("\n"))


class PromptEditor:
    """The editor's `buffer` plus its collapsed pastes; `history_path` None keeps history in memory."""

    def __init__(self, history_path: Path | None, completer: Completer | None = None):
        self.history = _history(history_path)
        self.buffer = ClusterBuffer(multiline=True, history=self.history, name="editor", completer=completer,
                             complete_while_typing=completer is not None)
        self._pastes: dict[str, str] = {}
        self._restored: list[tuple[int, str]] = []  # (order, text) put back, while the editor starts with them
        self._length = 0
        self.buffer.on_text_changed += _drop_control_characters
        if completer is not None:
            self.buffer.on_text_changed += self._reopen_menu

    def _reopen_menu(self, buffer: Buffer) -> None:
        """Backspace in a `/command` (`/dlg` → `/dl`): the menu comes back, as typing opens it (prompt_toolkit
        completes while typing on insertions only)."""
        shorter, self._length = len(buffer.text) < self._length, len(buffer.text)
        text = buffer.text
        if shorter and buffer.complete_state is None and text.startswith("/") and not any(c in text for c in " \n"):
            buffer.start_completion(select_first=False)

    def paste(self, data: str, *, one_line: bool = False) -> None:
        """Insert pasted `data` at the cursor: as is when small, else as a marker (sent whole later). A pasted
        path of an image file (a file dragged onto the terminal) becomes `@path`, attached when sent. Control
        characters but newline and tab are inserted as visible escapes (`paste.pasted_text`). `one_line` (a
        masked field): a paste with a line break is always a marker, one row of `*`s that do not show how many
        lines the secret has; the value still holds the break (a key check refuses it)."""
        data = pasted_text(data)
        if one_line:
            self._insert(data, collapse="\n" in data)
            return
        image = _image_path(data)
        if image is not None:
            self.buffer.insert_text(f"{attachment_token(str(image))} ")  # quoted when it has spaces
            return
        self._insert(data)

    def _insert(self, data: str, *, collapse: bool = False) -> None:
        """`data` at the cursor, as a `[paste #N: ...]` marker when it is large (or `collapse`)."""
        lines = line_count(data)
        if not collapse and lines <= PASTE_COLLAPSE_LINES and len(data) <= PASTE_COLLAPSE_CHARS:
            self.buffer.insert_text(data)
            return
        marker = f"[paste #{len(self._pastes) + 1}: {counted(lines, 'line')}, {len(data):,} chars]"
        self._pastes[marker] = data
        self.buffer.insert_text(marker)

    def text(self) -> str:
        """The prompt as it would be sent: markers replaced by their pastes."""
        return expand_pastes(self.buffer.text, self._pastes)

    def take(self) -> str:
        """The prompt to send; the editor is emptied and the prompt added to the history."""
        text = self.text()
        if text.strip() and len(text) <= HISTORY_MAX_CHARS:
            self.history.append_string(text)
        self._pastes.clear()
        self._restored = []
        self.buffer.reset()
        return text

    def snapshot(self) -> tuple[str, dict[str, str]]:
        """What the editor holds (its text and collapsed pastes), for `restore`."""
        return self.buffer.text, dict(self._pastes)

    def restore(self, draft: tuple[str, dict[str, str]], order: int = 0) -> None:
        """Put a `snapshot` back. What was typed since stays, after it; drafts put back one after another (a
        burst of refused prompts, refused in any order) stand in `order` (their sending order) above it."""
        text, pastes = draft
        if not text:
            return
        clashing = {marker: data for marker, data in pastes.items() if self._pastes.get(marker, data) != data}
        text = expand_pastes(text, clashing)  # numbering began again since: the draft's go inline
        self._pastes.update({marker: data for marker, data in pastes.items() if marker not in clashing})
        typed = self.buffer.text
        above = "\n".join(part for _, part in self._restored)
        if not (above and typed.startswith(above)):
            self._restored, above = [], ""
        self._restored = sorted([*self._restored, (order, text)], key=lambda pair: pair[0])
        rest = typed[len(above):].lstrip("\n")
        self.set_text("\n".join(part for part in [*(part for _, part in self._restored), rest] if part))

    def set_text(self, text: str) -> None:
        """Replace the editor's text (queued messages given back, `/fork`'s message, a plugin's
        `set_editor_text`, the external editor's result); a large text collapses into a marker as a paste
        does (`text()` gives it back whole). Markers of earlier pastes in `text` keep their pastes."""
        self.buffer.reset()
        self._insert(text)

    def clear(self) -> None:
        self._pastes.clear()
        self._restored = []
        self.buffer.reset()


def expand_pastes(text: str, pastes: dict[str, str]) -> str:
    """`text` with each `[paste #N: ...]` marker of `pastes` replaced by what was pasted."""
    for marker, data in pastes.items():
        text = text.replace(marker, data)
    return text


class ClusterBuffer(Buffer):
    """A prompt_toolkit `Buffer` whose cursor is never inside a grapheme cluster (👩\u200d👩\u200d👧 is 5 code
    points, one character on screen) and whose deletions take whole clusters: Left/Right, Backspace/Delete,
    word moves and kills, Ctrl+U/Ctrl+K step over a cluster as over one character, and a cursor put inside
    one by any other means (Home+count, Up/Down, a history entry) moves to its edge: to its end when it moved
    forward, else to its start. The text itself is never changed."""

    def _set_cursor_position(self, value: int) -> bool:
        # every cursor move, the `cursor_position` setter's and a new `document`'s, comes through here
        return super()._set_cursor_position(snapped(self.text, value, forward=value > self.cursor_position))

    def delete_before_cursor(self, count: int = 1) -> str:
        """Delete `count` code points before the cursor, and the rest of the cluster the first one is in."""
        position = self.cursor_position
        return super().delete_before_cursor(position - cluster_start(self.text, max(position - count, 0)))

    def delete(self, count: int = 1) -> str:
        """Delete `count` code points after the cursor, and the rest of the cluster the last one is in."""
        position, text = self.cursor_position, self.text
        if count <= 0 or position >= len(text):
            return super().delete(count)
        end = cluster_end(text, cluster_start(text, min(position + count, len(text)) - 1))
        return super().delete(end - position)


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Characters that never stay in the editor: all control characters but tab and newline."""


def _drop_control_characters(buffer: Buffer) -> None:
    """A key with no binding of its own (Ctrl+Z once, Ctrl+Q's quoted insert, Ctrl+\\) inserts its raw byte,
    which would reach the model and, echoed, the terminal: whatever put them in, they are taken out again
    (a paste already shows them as visible escapes: `paste.pasted_text`)."""
    text = buffer.text
    if _CONTROL.search(text):
        before = _CONTROL.sub("", text[:buffer.cursor_position])
        buffer.document = Document(before + _CONTROL.sub("", text[buffer.cursor_position:]), len(before))


def _image_path(data: str) -> str | None:
    """The path in `data` when it is a single existing image file's path (quotes and `\\ ` escapes of
    drag-and-drop removed), else None (a path with spaces is then written `@"..."`)."""
    from ..print_mode import IMAGE_TYPES

    text = data.strip().strip("'\"").replace("\\ ", " ")
    if not text or "\n" in text or Path(text).suffix.lower() not in IMAGE_TYPES:
        return None
    return text if is_file(Path(text).expanduser()) else None


def _history(path: Path | None) -> FileHistory | InMemoryHistory:
    """A file history at `path` (its directory created), or in memory when it cannot be written."""
    if path is None:
        return InMemoryHistory()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(exist_ok=True)
    except OSError:
        return InMemoryHistory()
    return FileHistory(str(path))
