"""Recognising what kind of file a path is (regular or not, image or binary by first bytes) and opening only
regular files."""

from __future__ import annotations

import binascii
import os
import stat

from ...agent.types import ToolError
from .truncate import format_size
from ..paths import path_text

SNIFF_BYTES = 8192

MAX_IMAGE_BYTES = 20 * 1024 * 1024
"""Larger images are refused: providers reject them and base64 would bloat the session file."""

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
"""The image media types every supported provider API accepts."""

_IMAGE_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)

_KIND_NAMES = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def image_mime_type(head: bytes) -> str | None:
    """MIME type of a PNG, JPEG, GIF or WebP file from its first bytes (magic numbers), else None."""
    for signature, mime in _IMAGE_SIGNATURES:
        if head.startswith(signature):
            return mime
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_data_problem(data: object, mime: object) -> str | None:
    """Why base64 `data` said to be an image of type `mime` must not reach a provider, or None: the type is not
    one of `IMAGE_TYPES`, the data is not strict base64, it decodes to more than `MAX_IMAGE_BYTES`, or its
    magic bytes are not those of `mime` (the check `read` makes on files). Once in the conversation a bad
    image would make every later request fail."""
    if not isinstance(mime, str) or mime not in IMAGE_TYPES:
        return f"image type {str(mime)[:100]!r} is not one of {', '.join(IMAGE_TYPES)}"
    if not isinstance(data, str) or not data:
        return "the image data is empty"
    if len(data) * 3 // 4 > MAX_IMAGE_BYTES + 3:
        return f"the image is about {format_size(len(data) * 3 // 4)}, over the {format_size(MAX_IMAGE_BYTES)} limit"
    try:
        raw = binascii.a2b_base64(data.encode("ascii"), strict_mode=True)
    except (ValueError, UnicodeEncodeError):
        return "the image data is not valid base64"
    found = image_mime_type(raw[:16])
    if found != mime:
        return f"the data is not of type {mime}" + (f" (it is {found})" if found else "")
    return None


def looks_binary(head: bytes) -> bool:
    """True when the first bytes contain a NUL byte: text in UTF-8 and its legacy cousins never does.

    UTF-16/32 text (which does contain NULs) is reported as binary too; its BOM makes it recognisable, but
    reading it as lines of UTF-8 would be garbage anyway.
    """
    return b"\x00" in head


def kind_name(mode: int) -> str:
    """What a non-regular `st_mode` is, for messages: "a FIFO (named pipe)", "a character device", ..."""
    for test, name in _KIND_NAMES:
        if test(mode):
            return name
    return "a special file"


def check_regular_mode(mode: int, path: str) -> None:
    """Raise `ToolError` unless `mode` (an `st_mode` of `path`) is a regular file's."""
    if stat.S_ISDIR(mode):
        raise ToolError(f"{path_text(path)} is a directory, not a file.")
    if not stat.S_ISREG(mode):
        raise ToolError(f"{path_text(path)} is {kind_name(mode)}, not a regular file.")


def open_regular(path: str, flags: int, mode: int = 0o666) -> int:
    """A blocking file descriptor for the regular file `path`, opened with `os.open(path, flags, mode)`.

    The file is checked before opening (so a device is never opened: opening some has side effects) and again
    on the open descriptor (the path may have been replaced in between); the open itself is non-blocking, so a
    FIFO swapped in fails instead of waiting for a peer. A file opened for writing must not be this process's
    standard input, output or error (in RPC mode a redirected stdout is the protocol channel). A missing path
    is created when `flags` has `O_CREAT`. Raises `ToolError` for a refused file, `OSError` from the OS.
    """
    writing = bool(flags & (os.O_WRONLY | os.O_RDWR))
    try:
        check_target(os.stat(path), path, writing)
    except FileNotFoundError:
        if not flags & os.O_CREAT:
            raise
    fd = os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    try:
        check_target(os.fstat(fd), path, writing)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def check_target(info: os.stat_result, path: str, writing: bool) -> None:
    """Raise `ToolError` unless `info` (an `os.stat` of `path`) is a regular file's, and, when `writing`, one
    that is not this process's standard input, output or error (in RPC mode stdout is the protocol channel)."""
    check_regular_mode(info.st_mode, path)
    if not writing:
        return
    for fd, name in ((0, "standard input"), (1, "standard output"), (2, "standard error")):
        try:
            own = os.fstat(fd)
        except OSError:  # closed
            continue
        if (own.st_dev, own.st_ino) == (info.st_dev, info.st_ino):
            raise ToolError(f"{path_text(path)} is this process's {name}; writing to it is refused.")
