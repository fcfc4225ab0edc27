"""What each `write` and `edit` call changed on the disk, for the whole-file diff of its finished ACP update:
the file read when the call's turn came and again when its change was done (`FileAccess.changing`), so calls
that change one file in one turn each show their own step, not the file as it was when the turn began.

Used when the tools write to the disk; when they write to the editor's buffers (`client_fs.py`) the editor
has the change itself.
"""

from __future__ import annotations

import contextlib
import os
from typing import Iterator, NamedTuple

from ...coding.tools.file_access import LocalFiles
from .tool_calls import read_text


class FileChange(NamedTuple):
    """One call's change of the file at the absolute `path`: `before` its text (None: there was no file; False:
    it could not be shown: too large, unreadable, not UTF-8), `after` its text once changed (None when unknown)."""

    path: str
    before: str | None | bool
    after: str | None


class DiskWitness(LocalFiles):
    """The disk, as `LocalFiles`, noting each call's `FileChange` until `take` collects it."""

    def __init__(self) -> None:
        self._changes: dict[str, FileChange] = {}

    @contextlib.contextmanager
    def changing(self, call_id: str, path: str) -> Iterator[None]:
        before = text_of(path)
        yield  # a call that fails (raises) records nothing: its update shows the error, not a diff
        self._changes[call_id] = FileChange(path, before, read_text(path) if before is not False else None)

    def take(self, call_id: str) -> FileChange | None:
        """The change call `call_id` made (once), or None when it failed or changed no file through a tool that
        reports."""
        return self._changes.pop(call_id, None)


def text_of(path: str) -> str | None | bool:
    """The file at the absolute `path`: its text, None when it does not exist, False when it cannot be shown."""
    if not os.path.lexists(path):
        return None
    text = read_text(path)
    return text if isinstance(text, str) else False
