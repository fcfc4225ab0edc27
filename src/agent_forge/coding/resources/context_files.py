"""Context files (`AGENTS.md`, `CLAUDE.md`) from the agent dir and from every directory between the
filesystem root and the working directory, and their section of the system prompt."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

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
    an unreadable file is reported in `warnings` and skipped."""
    directories = [Path(agent_dir)] + list(reversed(Path(cwd).resolve().parents)) + [Path(cwd).resolve()]
    found: list[ContextFile] = []
    seen: set[Path] = set()
    for directory in directories:
        path = _context_file_in(directory)
        if path is None or path.resolve() in seen:
            continue
        seen.add(path.resolve())
        content = _read(path, warnings)
        if content is not None:
            found.append(ContextFile(path, content))
    return found


def _context_file_in(directory: Path) -> Path | None:
    try:
        names = set(p.name for p in directory.iterdir())
    except OSError:
        return None
    for name in CONTEXT_FILE_NAMES:  # listing the directory matches names exactly, even on case-folding disks
        if name in names and (directory / name).is_file():
            return directory / name
    return None


def _read(path: Path, warnings: list[str]) -> str | None:
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_CONTEXT_FILE_BYTES + 1)
    except OSError as exc:
        warnings.append(f"{path}: cannot read context file: {exc.strerror or exc}")
        return None
    text = data[:MAX_CONTEXT_FILE_BYTES].decode("utf-8", "replace")
    if len(data) > MAX_CONTEXT_FILE_BYTES:
        warnings.append(f"{path}: context file is larger than {MAX_CONTEXT_FILE_BYTES // 1024} KB; only its start "
                        "is used")
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
