"""Where `read`, `write` and `edit` get and put the text of files: the local disk, or a front end's own
(an editor's buffers over ACP `fs/read_text_file` / `fs/write_text_file`, so unsaved changes are seen and
edits land in the editor).

Each of the three tools has a `files` attribute (`LOCAL` by default), set by the session's tool environment
(`environment.py`, the one switch, which reaches tools added later too). An access answers None / False for a
file it does not serve, and the tool then uses the disk as always; so images, binary files and the tools'
checks (sizes, special files, encodings) stay where they are.
"""

from __future__ import annotations

from typing import Protocol


class FileAccess(Protocol):
    async def read_text(self, path: str) -> str | None:
        """The text of the file at the absolute `path`, or None to read it from the disk. Raises `ToolError`."""
        ...

    async def write_text(self, path: str, text: str) -> bool:
        """Write `text` to the absolute `path`; False to write it to the disk instead. Raises `ToolError`."""
        ...


class LocalFiles:
    """The disk only."""

    async def read_text(self, path: str) -> str | None:
        return None

    async def write_text(self, path: str, text: str) -> bool:
        return False


LOCAL = LocalFiles()

