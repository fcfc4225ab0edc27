"""Recognising what kind of file a path is: regular or not, image or binary (by first bytes, not by name)."""

from __future__ import annotations

import os
import stat

from ...agent.types import ToolError

SNIFF_BYTES = 8192

_IMAGE_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_mime_type(head: bytes) -> str | None:
    """MIME type of a PNG, JPEG, GIF or WebP file from its first bytes (magic numbers), else None."""
    for signature, mime in _IMAGE_SIGNATURES:
        if head.startswith(signature):
            return mime
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def looks_binary(head: bytes) -> bool:
    """True when the first bytes contain a NUL byte: text in UTF-8 and its legacy cousins never does.

    UTF-16/32 text (which does contain NULs) is reported as binary too; its BOM makes it recognisable, but
    reading it as lines of UTF-8 would be garbage anyway.
    """
    return b"\x00" in head


def check_regular_file(path: str) -> None:
    """Raise `ToolError` unless `path` is a regular file (directories, pipes and devices are refused, since
    reading a pipe or `/dev/zero` would never end); `OSError` from `stat` propagates."""
    mode = os.stat(path).st_mode
    if stat.S_ISDIR(mode):
        raise ToolError(f"{path} is a directory, not a file. List it with bash (`ls`).")
    if not stat.S_ISREG(mode):
        raise ToolError(f"{path} is not a regular file but a device, socket or pipe.")
