"""Where `read`, `write` and `edit` get and put the text of files: the local disk, or a front end's own
(an editor's buffers over ACP `fs/read_text_file` / `fs/write_text_file`, so unsaved changes are seen and
edits land in the editor).

The one switch: each of the three tools has a `files` attribute (`LOCAL` by default); `use_file_access(tools,
access)` points every tool that has one at `access`. An access answers None / False for a file it does not
serve, and the tool then uses the disk as always; so images, binary files and the tools' checks (sizes,
special files, encodings) stay where they are.
"""

from __future__ import annotations

from typing import Iterable, Protocol


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


def use_file_access(tools: Iterable[object], access: FileAccess) -> None:
    """Make every tool of `tools` with a `files` attribute (read, write, edit) use `access`."""
    for tool in tools:
        if hasattr(tool, "files"):
            tool.files = access  # type: ignore[attr-defined]
