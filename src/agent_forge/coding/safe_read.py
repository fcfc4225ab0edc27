"""Reading small configuration and prompt files that may come from a checkout nobody vetted: regular files
only, opened without blocking, read up to a size limit, JSON parsed without unbounded nesting.

Why: a repository the user merely opened can make `settings.json` a link to `/dev/zero` (a read that never
ends), to `/dev/stdin` (in RPC mode, the client's commands), to a FIFO (an open that waits forever), or hold
JSON nested 100,000 levels deep (`RecursionError`). Every start-up loader reads through here instead.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections import namedtuple
from typing import TYPE_CHECKING

from ..ai import json_wire
from .errors import ConfigFileError, UnsafeFileError
from .paths import path_text

if TYPE_CHECKING:
    from ..ai.types import JsonValue
    from .json_locate import DuplicateKey

MAX_CONFIG_BYTES = 1024 * 1024
"""Limit of a JSON configuration file (settings, models, auth, trust): far above any real one."""

MAX_TEXT_FILE_BYTES = 256 * 1024
"""Limit of a prompt text file (skill, prompt template, SYSTEM.md): it goes to the model on every request."""

MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays and objects accepted in a configuration file (real ones use 4 or 5 levels);
deeper data would exhaust the stack of whatever walks it later (merging, copying, encoding)."""

MAX_REPORTED_PROBLEMS = 100
"""Problems of one configuration file reported one by one (more than a settings file with a bad value for every
documented setting has); the rest are counted in one line, so that a file with 100,000 bad values (a project's
settings.json comes from an unvetted checkout) neither floods stderr nor takes long to report."""

MAX_REPORTED_DUPLICATES = 10
"""Repeated keys reported one by one per file; more are counted in one line (a generated file may repeat
thousands)."""

TEXT_ABSENT = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ENAMETOOLONG, errno.EINVAL})
"""`examine(..., absent=TEXT_ABSENT)` for a "text or a file" value (`--system-prompt`): it names no file when
nothing is there or it cannot be a file name (too long, a NUL byte), and is then the text itself."""

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
_BOM = "\ufeff"
_MAX_INT_DIGITS = 40  # far beyond any number a configuration holds; bounds the cost of int()
_TOO_DEEP = f"invalid JSON: arrays and objects nested more than {MAX_JSON_DEPTH} levels deep"
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def read_prefix(path: str | os.PathLike[str], limit: int) -> bytes:
    """At most `limit + 1` bytes from the start of the regular file `path` (one more than `limit` tells the
    caller the file is longer). The target is checked with `stat` before it is opened, so a device is never
    opened, and again on the open descriptor; the open does not block. Raises `FileNotFoundError`,
    `UnsafeFileError` (not a regular file) or another `OSError`."""
    _check_regular(os.stat(path).st_mode)
    fd = os.open(path, _OPEN_FLAGS)
    try:
        _check_regular(os.fstat(fd).st_mode)
        chunks: list[bytes] = []
        remaining = limit + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text_file(path: str | os.PathLike[str], limit: int = MAX_TEXT_FILE_BYTES, *,
                   what: str = "prompt files", errors: str = "replace") -> str:
    """The whole text of a regular file of at most `limit` bytes, decoded as UTF-8 (`errors` as for
    `bytes.decode`). Raises what `read_prefix` raises, `UnsafeFileError` for a longer file (its message
    names the limit and `what` it is the limit for), and `UnicodeDecodeError` with `errors="strict"`."""
    data = read_prefix(path, limit)
    if len(data) > limit:
        raise UnsafeFileError(f"larger than {format_size(limit)} (the limit for {what})")
    return data.decode("utf-8", errors)


def read_json_file(path: str | os.PathLike[str], limit: int = MAX_CONFIG_BYTES, *, if_blank: object = None) -> object:
    """The parsed JSON of a small regular file, or `if_blank` when the file is empty or only whitespace; a
    leading UTF-8 byte order mark (Windows Notepad writes one) is ignored. A repeated key keeps its last value
    without a word: files people edit are read with `read_json_document`, which reports repeats.

    Raises `FileNotFoundError` when nothing is at `path` (a broken link included), and `ConfigFileError`
    for every other problem: unreadable, not a regular file, larger than `limit`, not UTF-8, invalid JSON,
    or nested deeper than `MAX_JSON_DEPTH`."""
    return read_json_document(path, limit, if_blank=if_blank)[0]


# Not a `typing.NamedTuple`: see `ai.hosts.Host`.
class JsonDocument(namedtuple("JsonDocument", ("data", "text", "duplicates"))):
    """A configuration file read by `read_json_document`. `data`: the parsed JSON (the last value of a
    repeated key, as JSON has it); `text`: the file's text, for locating values (`json_locate.locate`);
    `duplicates`: every repeated key, with its lines (`json_locate.DuplicateKey`), which the reader reports
    as `<path>:<line>: <duplicate.message()>` through the file's usual warnings."""

    __slots__ = ()
    data: object
    text: str
    duplicates: list[DuplicateKey]

    def duplicate_notes(self) -> list[tuple[int | None, str]]:
        """`(line of the second occurrence, "<where>: duplicate key ...")` for the first
        `MAX_REPORTED_DUPLICATES` repeated keys, then `(None, "... more duplicate keys ...")` for the rest."""
        notes: list[tuple[int | None, str]] = [(d.line, d.message()) for d in
                                               self.duplicates[:MAX_REPORTED_DUPLICATES]]
        more = len(self.duplicates) - MAX_REPORTED_DUPLICATES
        if more > 0:
            notes.append((None, f"{more} more duplicate keys not listed (the last value of each is used)"))
        return notes

    def duplicate_warnings(self, path: str | os.PathLike[str]) -> list[str]:
        """`duplicate_notes` as `<path>:<line>: <note>` (`<path>: <note>` for the summary)."""
        shown = path_text(path)
        return [f"{shown}{'' if line is None else f':{line}'}: {note}" for line, note in self.duplicate_notes()]


def read_json_document(path: str | os.PathLike[str], limit: int = MAX_CONFIG_BYTES, *,
                       if_blank: object = None) -> JsonDocument:
    """A small regular JSON file as a `JsonDocument`: `read_json_file`, with the text and repeated keys kept
    so that the reader can report them with their lines. A leading UTF-8 byte order mark is dropped (from the
    text too). Raises as `read_json_file` does."""
    try:
        text = read_text_file(path, limit, what="configuration files", errors="strict")
    except FileNotFoundError:
        raise
    except UnicodeDecodeError as exc:
        raise ConfigFileError(f"cannot read: not UTF-8 text (byte {exc.start})") from None
    except UnsafeFileError as exc:
        raise ConfigFileError(str(exc)) from None
    except OSError as exc:
        raise ConfigFileError(f"cannot read: {exc.strerror or exc}") from None
    text = text.removeprefix(_BOM)  # Windows Notepad starts UTF-8 files with one; it is not part of the JSON
    if not text.strip():
        return JsonDocument(if_blank, text, [])
    return JsonDocument(*parse_json_document(text))


def parse_json(text: str) -> JsonValue:
    """`json.loads(text)`, with every failure a `ConfigFileError` (see `read_json_file`); with a repeated key
    the last value counts (`parse_json_document` finds the repeats)."""
    return parse_json_document(text)[0]


def parse_json_document(text: str) -> tuple[JsonValue, str, list[DuplicateKey]]:
    """`(data, text, repeated keys)` of JSON `text`, raising as `parse_json`. Repeats are detected while
    parsing and located only when there are some, so a sound file costs one parse."""
    repeated = False

    def build(pairs: list[tuple[str, JsonValue]]) -> dict[str, JsonValue]:
        nonlocal repeated
        members = dict(pairs)
        repeated = repeated or len(members) != len(pairs)
        return members

    try:
        data = json.loads(text, parse_int=_parse_int, object_pairs_hook=build)
    except json.JSONDecodeError as exc:
        raise ConfigFileError(_syntax_message(exc)) from None
    except ValueError as exc:  # no other is known; a config file must never stop the start-up
        raise ConfigFileError(f"invalid JSON: {exc}") from None
    except RecursionError:  # the parser's own stack gave out: far deeper than the limit
        raise ConfigFileError(_TOO_DEEP) from None
    if _depth_exceeds(data, MAX_JSON_DEPTH):
        raise ConfigFileError(_TOO_DEEP)
    if not repeated:
        return data, text, []
    from .json_locate import duplicate_keys  # only when there is something to report

    return data, text, duplicate_keys(text)


def _parse_int(digits: str) -> int | float:
    """An integer literal; one of more than `_MAX_INT_DIGITS` digits becomes an infinity (which the readers report
    as out of range, `config_values`) instead of Python's digit-limit `ValueError` (over 4300 digits)."""
    if len(digits) > _MAX_INT_DIGITS:
        return float("-inf") if digits.startswith("-") else float("inf")
    return int(digits)


def _syntax_message(exc: json.JSONDecodeError) -> str:
    """`invalid JSON at line L column C: <reason>` (`json_wire.syntax_error`: a trailing comma named as such)."""
    words, line, column = json_wire.syntax_error(exc)
    return f"invalid JSON at line {line} column {column}: {words}"


def format_size(size: int) -> str:
    """`1048576` -> `"1 MB"`, `262144` -> `"256 KB"`, other sizes in bytes."""
    for unit, scale in (("MB", 1024 * 1024), ("KB", 1024)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} bytes"


def describe_kind(mode: int) -> str:
    """What a non-regular `st_mode` is, for messages: "a directory", "a character device", ..."""
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def path_mode(path: str | os.PathLike[str]) -> int | None:
    """The `st_mode` of a user-given `path` (links followed), or None when it cannot be examined: missing, or
    refused by the OS (a name over 255 bytes, no permission, a link loop, an I/O error, a NUL byte). Unlike
    `Path.exists()` / `is_file()` / `is_dir()`, which raise for all but ENOENT/ENOTDIR/EBADF/ELOOP, it never
    raises; `found_text(examine(path))` says why such a path was not used."""
    try:
        return os.stat(path).st_mode
    except (OSError, ValueError):
        return None


def examine(path: str | os.PathLike[str], *,
            absent: frozenset[int] = frozenset({errno.ENOENT, errno.ENOTDIR})) -> os.stat_result | OSError | None:
    """The status of a user-given `path` (links followed); None when nothing is there: the `errno` is one of
    `absent` (by default ENOENT, and ENOTDIR: a regular file used as a directory along the way); else the
    `OSError` of a path the OS will not say anything about (a link loop, no permission, a name over 255
    bytes, an I/O error; a NUL byte is an `OSError(EINVAL)`), for callers that must name that reason instead
    of calling the path missing."""
    try:
        return os.stat(path)
    except OSError as exc:
        return None if exc.errno in absent else exc
    except ValueError:  # a NUL byte: no file can have that name
        return None if errno.EINVAL in absent else OSError(errno.EINVAL, "embedded null byte")


def is_file(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is a regular file (links followed); False when it cannot be examined (`path_mode`)."""
    mode = path_mode(path)
    return mode is not None and stat.S_ISREG(mode)


def is_dir(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is a directory (links followed); False when it cannot be examined (`path_mode`)."""
    mode = path_mode(path)
    return mode is not None and stat.S_ISDIR(mode)


def exists(path: str | os.PathLike[str]) -> bool:
    """Whether `path` names something (links followed); False when it cannot be examined (`path_mode`)."""
    return path_mode(path) is not None


def found_text(found: os.stat_result | OSError | None, expected: str = "") -> str:
    """What `examine` found, for a message about a path that was not what was needed: `"does not exist"`
    (None), `"cannot be examined: <the OS's reason>"` (an `OSError`), or `"is <what it is><expected>"` (a
    status: `is a FIFO (named pipe)`, `is a regular file`; `expected` such as `", not a directory"`)."""
    if found is None:
        return "does not exist"
    if isinstance(found, OSError):
        return f"cannot be examined: {found.strerror or found}"
    kind = "a regular file" if stat.S_ISREG(found.st_mode) else describe_kind(found.st_mode)
    return f"is {kind}{expected}"


def _check_regular(mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise UnsafeFileError(f"not a regular file but {describe_kind(mode)}; only regular files are read")


def _depth_exceeds(data: object, limit: int) -> bool:
    """Whether arrays/objects nest deeper than `limit`; iterative, so it cannot overflow the stack itself."""
    stack: list[tuple[object, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
        if children is None:
            continue
        if depth + 1 > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False

