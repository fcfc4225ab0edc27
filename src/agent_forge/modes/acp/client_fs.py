"""The editor's files for read, write and edit (`coding/tools/file_access.py`), when the client advertised
`fs.readTextFile` / `fs.writeTextFile`: text is read with `fs/read_text_file` (unsaved buffers included) and
written with `fs/write_text_file` (the edit lands in the editor, which saves it).

Images and binary files are read from the disk as always (the protocol carries text only); so is a file the
client cannot read (its error is then the disk's: not found, permission denied). A write the client refuses
fails the tool call with the client's reason; an answer of the wrong shape (`answers.py`) fails a read or a
write naming the method and the problem.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Awaitable, Callable, ContextManager

from ...agent.types import ToolError
from ...coding.paths import path_text
from ...coding.tools.file_kinds import SNIFF_BYTES, image_mime_type, looks_binary, open_regular
from .answers import BadAnswer
from .protocol import AcpError

Request = Callable[[str, dict[str, Any]], Awaitable[Any]]


class ClientFiles:
    """`FileAccess` over the client's `fs/*` methods for session `session_id`."""

    def __init__(self, request: Request, session_id: str, *, read: bool, write: bool):
        self.request, self.session_id, self.read, self.write = request, session_id, read, write

    async def read_text(self, path: str) -> str | None:
        if not self.read or not _text_file(path):
            return None
        try:
            result = await self.request("fs/read_text_file", {"sessionId": self.session_id, "path": path})
        except BadAnswer as exc:
            raise ToolError(f"Cannot read {path_text(path)}: {exc.message}") from None
        except AcpError:
            return None  # the disk says why (not found, a directory, permission denied)
        return str(result["content"])  # a string: `answers.py` checked it

    async def write_text(self, path: str, text: str) -> bool:
        if not self.write:
            return False
        if os.path.isdir(path):
            raise ToolError(f"Cannot write {path_text(path)}: it is a directory")
        try:
            await self.request("fs/write_text_file", {"sessionId": self.session_id, "path": path, "content": text})
        except BadAnswer as exc:  # the file may or may not have been written: say what came back
            raise ToolError(f"Writing {path_text(path)} through the editor failed: {exc.message}") from None
        except AcpError as exc:
            raise ToolError(f"The editor could not write {path_text(path)}: {exc.message}") from None
        return True

    def changing(self, call_id: str, path: str) -> ContextManager[None]:
        return contextlib.nullcontext()  # the editor has the file: the disk is no witness of the change


def _text_file(path: str) -> bool:
    """Whether the client should be asked: a regular file that looks like text, or no file yet (an editor may
    hold an unsaved new buffer). Special files and unreadable ones are left to the disk's checks."""
    try:
        with open(open_regular(path, os.O_RDONLY), "rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except FileNotFoundError:
        return True
    except (OSError, ToolError):
        return False
    return image_mime_type(head) is None and not looks_binary(head)


def file_access(capabilities: dict[str, Any], request: Request, session_id: str) -> ClientFiles | None:
    """A `ClientFiles` when the client's `initialize` capabilities offer `fs` reads or writes, else None."""
    fs = capabilities.get("fs") if isinstance(capabilities.get("fs"), dict) else {}
    read, write = fs.get("readTextFile") is True, fs.get("writeTextFile") is True
    return ClientFiles(request, session_id, read=read, write=write) if read or write else None
