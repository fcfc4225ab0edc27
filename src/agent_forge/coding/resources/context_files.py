"""Context files (`AGENTS.md`, `CLAUDE.md`) from the agent dir and from every directory between the
filesystem root and the working directory, and their section of the system prompt."""

from __future__ import annotations

import os

from dataclasses import dataclass
from pathlib import Path

from ..paths import path_text
from ..safe_read import read_prefix

CONTEXT_FILE_NAMES = ("AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")
"""Tried in this order in each directory; the first that exists is that directory's context file
(the reference agent's `configuration.md`: an override replaces AGENTS.md/CLAUDE.md of its own directory)."""

MAX_CONTEXT_FILE_BYTES = 256 * 1024
"""A larger file is cut to this size, with a note: it would crowd out the conversation on every request."""


@dataclass(frozen=True)
class ContextFile:
    """One loaded file: absolute `path` and its text (decoded as UTF-8, undecodable bytes replaced)."""

    path: Path
    content: str


def load_context_files(cwd: str | Path, agent_dir: str | Path, warnings: list[str]) -> list[ContextFile]:
    """The agent dir's file first, then one per directory from the root down to `cwd` (outermost first), so
    more specific instructions come later. A file reached twice (the agent dir is an ancestor) counts once;
    a file that cannot be read or is not a regular file (a link to a device or a FIFO in a checkout) is
    reported in `warnings` and the directory's next name is tried."""
    directories = [Path(agent_dir)] + list(reversed(Path(cwd).resolve().parents)) + [Path(cwd).resolve()]
    found: list[ContextFile] = []
    seen: set[Path] = set()  # real paths of the files tried: each is read, and reported, once
    for directory in directories:
        loaded = _context_file_in(directory, warnings, seen)
        if loaded is not None:
            found.append(loaded)
    return found


def _context_file_in(directory: Path, warnings: list[str], seen: set[Path]) -> ContextFile | None:
    """The directory's context file; None when it has none or its first name is a file tried already (the
    agent dir is also the cwd or one of its parents, or a link leads to a file met before)."""
    try:
        names = set(os.listdir(directory))  # names only: a home or monorepo root may hold thousands
    except OSError:
        return None
    for name in CONTEXT_FILE_NAMES:  # listing the directory matches names exactly, even on case-folding disks
        if name in names:
            real = _real(directory / name)
            if real in seen:
                return None
            seen.add(real)
            content = _read(directory / name, warnings)
            if content is not None:
                return ContextFile(directory / name, content)
    return None


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symbolic link loop (Python 3.11's resolve)
        return path


def _read(path: Path, warnings: list[str]) -> str | None:
    try:
        data = read_prefix(path, MAX_CONTEXT_FILE_BYTES)
    except FileNotFoundError:
        return None  # a dangling link, or removed since the listing
    except OSError as exc:
        warnings.append(f"{path_text(path)}: context file not loaded: {exc.strerror or exc}")
        return None
    text = data[:MAX_CONTEXT_FILE_BYTES].decode("utf-8", "replace")
    if len(data) > MAX_CONTEXT_FILE_BYTES:
        warnings.append(f"{path_text(path)}: context file is larger than {MAX_CONTEXT_FILE_BYTES // 1024} KB; "
                        "only its start is used")
        text += "\n[... context file cut here: it is too long ...]"
    return text


def format_context_section(files: list[ContextFile]) -> str | None:
    """The system-prompt section quoting every context file under its path, or None when there are none."""
    if not files:
        return None
    parts = ["# Project instructions",
             "The user keeps these instructions in context files (AGENTS.md and the like). Follow them; when two "
             "disagree, the later file (closer to the working directory) wins."]
    for file in files:
        parts.append(f"## {file.path}\n\n{file.content.strip()}")
    return "\n\n".join(parts)
