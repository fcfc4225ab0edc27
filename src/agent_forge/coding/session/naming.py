"""How session files are named: `<sessions dir>/--<encoded cwd>--/<timestamp>_<session id>.jsonl` (reference docs,
`session-format.md`), and the id read back from such a name."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..paths import sessions_dir

if TYPE_CHECKING:
    from .entries import SessionHeader

_CWD_SEPARATORS = str.maketrans({"/": "-", "\\": "-", ":": "-"})


_NAME_MAX = 255


def encode_cwd(cwd: str) -> str:
    """`/home/u/proj` → `--home-u-proj--`: one leading separator dropped, `/`, `\\` and `:` become `-`."""
    trimmed = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    encoded = f"--{trimmed.translate(_CWD_SEPARATORS)}--"
    if len(os.fsencode(encoded)) <= _NAME_MAX:
        return encoded
    # A deep cwd would exceed the file system's 255-byte name limit: keep its tail, made unique by a hash.
    import hashlib  # rare: start-up does not load it for every cwd

    digest = hashlib.sha256(os.fsencode(cwd)).hexdigest()[:16]
    tail = os.fsencode(encoded[2:-2])[-(_NAME_MAX - 40):].decode("utf-8", "ignore")
    return f"--{digest}-{tail}--"


def session_cwd_dir(cwd: str | os.PathLike[str], session_dir: str | os.PathLike[str] | None = None) -> Path:
    """Directory holding the sessions of `cwd`: `<sessions dir>/--<encoded cwd>--`.

    `session_dir` is the sessions root (`--session-dir`); None means `paths.sessions_dir()`.
    """
    root = sessions_dir(os.fspath(session_dir) if session_dir is not None else None)
    return root / encode_cwd(os.path.abspath(os.fspath(cwd)))


def session_file_name(header: SessionHeader) -> str:
    """`<timestamp with ':' and '.' as '-'>_<session id>.jsonl`, e.g. `2026-11-30T14-29-15-123Z_<uuid>.jsonl`."""
    stamp = header["timestamp"].replace(":", "-").replace(".", "-")
    return f"{stamp}_{header['id']}.jsonl"


def id_in_name(path: Path) -> str:
    """The session id in a file name `<timestamp>_<id>.jsonl` (`session_file_name`), lower case; "" for another
    name."""
    stem = path.name.removesuffix(".jsonl")
    return stem.rpartition("_")[2].lower() if "_" in stem else ""
