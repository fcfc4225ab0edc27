"""Where `read`, `write` and `edit` get and put the text of files: the local disk, or a front end's own
(an editor's buffers over ACP `fs/read_text_file` / `fs/write_text_file`, so unsaved changes are seen and
edits land in the editor).

Each of the three tools has a `files` attribute (`LOCAL` by default), set by the session's tool environment
(`environment.py`, the one switch, which reaches tools added later too). An access answers None / False for a
file it does not serve, and the tool then uses the disk as always; so images, binary files and the tools'
checks (sizes, special files, encodings) stay where they are.
"""

from __future__ import annotations

import contextlib
from typing import ContextManager, Protocol


class FileAccess(Protocol):
    async def read_text(self, path: str) -> str | None:
        """The text of the file at the absolute `path`, or None to read it from the disk. Raises `ToolError`."""
        ...

    async def write_text(self, path: str, text: str) -> bool:
        """Write `text` to the absolute `path`; False to write it to the disk instead. Raises `ToolError`."""
        ...

    def changing(self, call_id: str, path: str) -> ContextManager[None]:
        """Held by `write` and `edit` call `call_id` around its change of the file at the absolute `path`, once
        its turn has come (`file_queue.py`: the file's earlier changes are done, later ones wait): a front end
        that shows what each call changed reads the file on entering and on leaving."""
        ...


class LocalFiles:
    """The disk only."""

    def changing(self, call_id: str, path: str) -> ContextManager[None]:
        return contextlib.nullcontext()

    async def read_text(self, path: str) -> str | None:
        return None

    async def write_text(self, path: str, text: str) -> bool:
        return False


LOCAL = LocalFiles()

