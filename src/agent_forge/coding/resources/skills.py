"""Skills: directories holding a `SKILL.md` (Agent Skills specification), discovered under resource roots,
validated, listed to the model, and expanded by `/skill:<name> [args]`."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Iterable

from ..paths import path_text
from ..errors import FrontmatterError
from .frontmatter import split_frontmatter
from ..safe_read import read_text_file
from .sources import MAX_WALK_DEPTH, MAX_WALK_ENTRIES, ResourceRoot, SourceInfo, root_kind

SKILL_FILE = "SKILL.md"
MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
"""Limits of the Agent Skills specification (the reference agent's `skills.md`)."""

_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_SKIPPED_DIRS = frozenset({"node_modules", "__pycache__"})


@dataclass(frozen=True)
class Skill:
    """A loaded skill. `file_path` is its SKILL.md (or standalone .md file), `base_dir` the directory its
    relative paths start from; `model_invocable` is False with `disable-model-invocation: true` (then it is
    only used through `/skill:<name>`)."""

    name: str
    description: str
    file_path: Path
    base_dir: Path
    body: str
    source_info: SourceInfo
    location: str
    model_invocable: bool = True


def discover_skills(roots: Iterable[ResourceRoot], warnings: list[str]) -> list[Skill]:
    """Skills under every root, in root order. A root is a skill directory, a directory searched
    recursively (a directory with SKILL.md is one skill and is not searched further; `.md` files directly in
    the root are standalone skills), or a single `.md` file. The first skill of a name wins; later ones are
    reported in `warnings` like every invalid file."""
    skills: dict[str, Skill] = {}
    for root in roots:
        for path, base in _skill_files(root, warnings):
            skill = load_skill(path, root, base, warnings)
            if skill is None:
                continue
            if skill.name in skills:
                warnings.append(f"{path_text(path)}: skill name {skill.name!r} is already used by "
                                f"{skills[skill.name].file_path}; this one is skipped")
                continue
            skills[skill.name] = skill
    return list(skills.values())


def _skill_files(root: ResourceRoot, warnings: list[str]) -> list[tuple[Path, Path]]:
    """(skill file, base dir for sourceInfo) pairs under `root`, sorted for a stable order."""
    path, kind = root.path, root_kind(root, "skill path", warnings)
    if kind != "dir":
        return [(path, path.parent)] if kind == "file" else []
    walk = _SkillWalk(path)
    walk.directory(path, 0)
    warnings.extend(walk.report())
    return walk.found


@dataclass
class _SkillWalk:
    """A search below one root that follows symbolic links but visits each real directory once, stays within
    `MAX_WALK_DEPTH` and `MAX_WALK_ENTRIES`, and skips entries it cannot read (a checkout may hold link loops,
    links to `/usr` or unreadable directories); what it skipped is summed up by `report`."""

    base: Path
    found: list[tuple[Path, Path]] = field(default_factory=list)
    visited: set[tuple[int, int]] = field(default_factory=set)
    entries: int = 0
    skipped: dict[str, list[str]] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)  # the OS's reason per unreadable directory

    def directory(self, directory: Path, depth: int) -> None:
        if "count" in self.skipped:
            return
        key = self._identity(directory)
        if key is None:
            return
        if key in self.visited:
            return self._skip("loop", str(directory))
        self.visited.add(key)
        if _has_skill_file(directory):
            self.found.append((directory / SKILL_FILE, self.base))
            return
        if depth >= MAX_WALK_DEPTH:
            return self._skip("depth", str(directory))
        for entry in self._entries(directory):
            if self._over_budget(directory):
                return
            if entry.name.startswith(".") or entry.name in _SKIPPED_DIRS:
                continue
            kind = _dir_or_refusal(entry)
            if kind is True:
                self.directory(Path(entry.path), depth + 1)
            elif depth == 0 and entry.name.endswith(".md"):  # `load_skill` reports one that is not a file
                self.found.append((Path(entry.path), self.base))
            elif isinstance(kind, OSError):  # a link loop may stand for a skill directory: say why it is not
                self._unreadable(Path(entry.path), f"cannot be examined: {kind.strerror or kind}")

    def report(self) -> list[str]:
        """One warning per kind of skipped directory, naming the first and counting the rest."""
        reasons = {
            "loop": "not searched again: it leads back to a directory already searched (a symbolic link loop?)",
            "depth": f"not searched: skills are looked for at most {MAX_WALK_DEPTH} directories below "
                     f"{path_text(self.base)}",
            "count": f"skill search under {path_text(self.base)} stopped after {MAX_WALK_ENTRIES} entries; move skills "
                     "to a smaller directory",
        }
        messages = []
        for kind, paths in self.skipped.items():
            more = f" ({len(paths) - 1} more like it)" if len(paths) > 1 else ""
            reason = f"{self.reasons[paths[0]]}; skipped" if kind == "unreadable" else reasons[kind]
            messages.append(f"{path_text(paths[0])}: {reason}{more}")
        return messages

    def _over_budget(self, directory: Path) -> bool:
        """Count one entry; True once `MAX_WALK_ENTRIES` were looked at (the search then stops everywhere)."""
        self.entries += 1
        if self.entries > MAX_WALK_ENTRIES and "count" not in self.skipped:
            self._skip("count", str(directory))
        return "count" in self.skipped

    def _skip(self, kind: str, path: str) -> None:
        self.skipped.setdefault(kind, []).append(path)

    def _identity(self, directory: Path) -> tuple[int, int] | None:
        try:
            info = directory.stat()
        except OSError as exc:
            self._unreadable(directory, f"cannot be examined: {exc.strerror or exc}")
            return None
        return info.st_dev, info.st_ino

    def _entries(self, directory: Path) -> list[os.DirEntry[str]]:
        try:
            with os.scandir(directory) as listing:  # never more than the budget has left, then sorted
                return sorted(islice(listing, MAX_WALK_ENTRIES - self.entries + 1), key=lambda e: e.name)
        except OSError as exc:
            self._unreadable(directory, f"cannot be listed: {exc.strerror or exc}")
            return []

    def _unreadable(self, directory: Path, reason: str) -> None:
        self._skip("unreadable", str(directory))
        self.reasons.setdefault(str(directory), reason)


def _has_skill_file(directory: Path) -> bool:
    """A SKILL.md that is anything but a directory: one that is not a regular file is reported by `load_skill`
    rather than silently ignored."""
    path = directory / SKILL_FILE
    return os.path.lexists(path) and not os.path.isdir(path)


def _dir_or_refusal(entry: os.DirEntry[str]) -> bool | OSError:
    """`entry.is_dir()` following links (False for a dangling link); the OS's error for an entry that cannot be
    examined (a link loop, no permission on the way)."""
    try:
        return entry.is_dir()
    except OSError as exc:
        return exc


def load_skill(path: Path, root: ResourceRoot, base: Path, warnings: list[str]) -> Skill | None:
    """Read and validate one skill file; None (with a warning) when it cannot be used. A missing `name`
    defaults to the directory name (the file name for a standalone `.md`); a name outside the specification's
    rules or an over-long description is reported but the skill still loads."""
    try:
        meta, body = split_frontmatter(read_text_file(path))
    except (OSError, FrontmatterError) as exc:
        warnings.append(f"{path_text(path)}: skill not loaded: {getattr(exc, 'strerror', None) or exc}")
        return None
    if not meta and path.name != SKILL_FILE:
        return None  # a plain Markdown file (a README) next to the skills, not a standalone skill
    default_name = path.parent.name if path.name == SKILL_FILE else path.stem
    name = meta.get("name") if meta.get("name") is not None else default_name
    description = meta.get("description")
    if not isinstance(name, str) or not name.strip() or any(c.isspace() for c in name):
        warnings.append(f"{path_text(path)}: skill not loaded: name must be a word without spaces, got {name!r}")
        return None
    if not isinstance(description, str) or not description.strip():
        warnings.append(f"{path_text(path)}: skill not loaded: frontmatter needs a non-empty 'description'")
        return None
    _check_spec(path, name, description, warnings)
    skill_dir = path.parent
    return Skill(name=name, description=description.strip(), file_path=path, base_dir=skill_dir, body=body,
                 source_info=root.source_info(path, base), location=root.location,
                 model_invocable=meta.get("disable-model-invocation") is not True)


def _check_spec(path: Path, name: str, description: str, warnings: list[str]) -> None:
    if len(name) > MAX_NAME_LENGTH or not _NAME.match(name):
        warnings.append(f"{path_text(path)}: skill name {name!r} should be lowercase letters, digits and single "
                        f"hyphens, at most {MAX_NAME_LENGTH} characters")
    if len(description) > MAX_DESCRIPTION_LENGTH:
        warnings.append(f"{path_text(path)}: skill description is longer than {MAX_DESCRIPTION_LENGTH} characters")


def expand_skill(skill: Skill, args: str) -> str:
    """The text `/skill:<name> args` becomes: the skill's instructions in a `<skill>` element naming its
    file, then the user's arguments (if any) as their request."""
    text = (f'<skill name="{_attr(skill.name)}" path="{_attr(str(skill.file_path))}">\n'
            f"Paths in these instructions are relative to {skill.base_dir}.\n\n"
            f"{skill.body.strip()}\n</skill>")
    return f"{text}\n\n{args.strip()}" if args.strip() else text


def format_skills_section(skills: Iterable[Skill]) -> str | None:
    """The system-prompt section listing model-invocable skills with their paths, or None when there are none.
    Only the description is listed: the model reads the file when a task calls for it."""
    listed = [s for s in skills if s.model_invocable]
    if not listed:
        return None
    items = "\n".join(f'<skill name="{_attr(s.name)}" path="{_attr(str(s.file_path))}">{_text(s.description)}'
                      "</skill>" for s in listed)
    return ("# Skills\n\nA skill is a folder of instructions for one kind of task. When the task at hand "
            "matches a skill's description, read its file with the read tool before you start and follow it; "
            "paths inside a skill are relative to the skill's folder.\n\n"
            f"<skills>\n{items}\n</skills>")


def _text(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _attr(value: str) -> str:
    return _text(value).replace('"', "&quot;")
