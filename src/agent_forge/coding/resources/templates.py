"""Prompt templates: `.md` files whose name becomes a `/<name>` command and whose body, with the arguments
substituted, replaces the command in the prompt (the reference agent's `prompt-templates.md`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Iterable

from ..paths import path_text
from ..errors import FrontmatterError
from .frontmatter import split_frontmatter
from ..safe_read import read_text_file
from .sources import MAX_WALK_ENTRIES, ResourceRoot, SourceInfo, root_kind

MAX_DESCRIPTION_CHARS = 120
"""A description taken from the first body line is cut to this length (an ellipsis marks the cut)."""


@dataclass(frozen=True)
class PromptTemplate:
    """A loaded template: `name` (file name without `.md`), `description` (frontmatter `description`, else
    the first non-empty body line), optional `argument_hint`, and the `body` after the frontmatter, without
    leading and trailing whitespace."""

    name: str
    description: str
    body: str
    file_path: Path
    source_info: SourceInfo
    location: str
    argument_hint: str | None = None


def discover_templates(roots: Iterable[ResourceRoot], warnings: list[str]) -> list[PromptTemplate]:
    """Templates from every root in order: a directory contributes its direct `.md` children (sorted), a
    file itself. The first template of a name wins; later ones and unreadable files go to `warnings`."""
    templates: dict[str, PromptTemplate] = {}
    for root in roots:
        for path, base in _template_files(root, warnings):
            template = load_template(path, root, base, warnings)
            if template is None:
                continue
            if template.name in templates:
                warnings.append(f"{path_text(path)}: prompt template /{template.name} is already defined by "
                                f"{templates[template.name].file_path}; this one is skipped")
                continue
            templates[template.name] = template
    return list(templates.values())


def _template_files(root: ResourceRoot, warnings: list[str]) -> list[tuple[Path, Path]]:
    path, kind = root.path, root_kind(root, "prompt template path", warnings)
    if kind != "dir":
        return [(path, path.parent)] if kind == "file" else []
    try:
        with os.scandir(path) as listing:  # a link to a huge directory must not stall start-up
            entries = sorted(islice(listing, MAX_WALK_ENTRIES + 1), key=lambda e: e.name)
    except OSError as exc:
        warnings.append(f"{path_text(path)}: cannot list prompt templates: {exc.strerror or exc}")
        return []
    if len(entries) > MAX_WALK_ENTRIES:
        warnings.append(f"{path_text(path)}: more than {MAX_WALK_ENTRIES} entries; only the first {MAX_WALK_ENTRIES} "
                        "listed are looked at for prompt templates")
        entries = entries[:MAX_WALK_ENTRIES]
    # Not only regular files: a `.md` link to a device or a FIFO is reported by `load_template`, not hidden.
    return [(Path(e.path), path) for e in entries
            if e.name.endswith(".md") and not e.name.startswith(".") and not _is_dir(e)]


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:  # a link loop or an entry that vanished: `load_template` reports it
        return False


def load_template(path: Path, root: ResourceRoot, base: Path, warnings: list[str]) -> PromptTemplate | None:
    """Read one template file; None (with a warning) when it cannot be read or its frontmatter is broken."""
    try:
        meta, body = split_frontmatter(read_text_file(path))
    except (OSError, FrontmatterError) as exc:
        warnings.append(f"{path_text(path)}: prompt template not loaded: {getattr(exc, 'strerror', None) or exc}")
        return None
    name = path.stem
    if not name or any(c.isspace() for c in name):
        warnings.append(f"{path_text(path)}: prompt template not loaded: its file name cannot be a command (no spaces)")
        return None
    body = body.strip()  # the file's final newline is not part of the prompt (reference: frontmatter body trim)
    description = meta.get("description")
    hint = meta.get("argument-hint")
    return PromptTemplate(name=name, description=description.strip() if isinstance(description, str) and
                          description.strip() else _first_line(body), body=body, file_path=path,
                          source_info=root.source_info(path, base), location=root.location,
                          argument_hint=hint if isinstance(hint, str) else None)


def _first_line(body: str) -> str:
    for line in body.splitlines():
        if line.strip():
            text = line.strip()
            return text if len(text) <= MAX_DESCRIPTION_CHARS else text[:MAX_DESCRIPTION_CHARS - 1] + "…"
    return ""
