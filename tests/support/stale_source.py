"""Edits a bytecode cache cannot see: the helpers of the tests that check plugins run their current source."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping


def rewrite_in_the_same_second(path: Path, text: str) -> None:
    """Write `text`, the same size as what `path` holds, and give the file its old mtime back: what a `.pyc`
    records of its source (size, mtime in whole seconds) then still matches, as after a quick edit."""
    before = path.stat()
    assert len(text.encode()) == before.st_size, "the rewrite must keep the size"
    path.write_text(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def with_bytecode_cache(env: Mapping[str, str]) -> dict[str, str]:
    """`env` for an agent process that reads and writes `.pyc` files, as users' Pythons do by default (this
    machine's environment sets PYTHONDONTWRITEBYTECODE)."""
    return {name: value for name, value in env.items() if name != "PYTHONDONTWRITEBYTECODE"}
