"""Walking a directory tree as git sees it: `.gitignore`, `.ignore` and `.git/info/exclude` rules applied,
`.git` itself skipped, hidden files kept, symbolic links not followed.

This is the pure-Python fallback used when `rg`/`fd` are not on PATH, written to agree with
`rg --hidden --no-require-git`: ignore files count even outside a git repository, and those of the parent
directories count too (up to the repository root, or the filesystem root outside a repository). A deeper
ignore file overrides a shallower one; inside one file the last matching pattern wins (`!` re-includes).
`pathspec` (gitignore semantics) is imported on first use only.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from ...agent.types import ToolError
from .file_kinds import open_regular

IGNORE_FILE_NAMES = (".gitignore", ".ignore")


@dataclass(frozen=True)
class _Level:
    base: str  # absolute directory the patterns are relative to
    spec: Any  # pathspec.GitIgnoreSpec


class IgnoreRules:
    """The ignore patterns in force for one directory, outermost first."""

    def __init__(self, levels: tuple[_Level, ...] = ()):
        self._levels = levels

    def with_directory(self, directory: str) -> IgnoreRules:
        """These rules plus the ignore files of `directory` (unchanged when it has none)."""
        level = _load_level(directory, [os.path.join(directory, name) for name in IGNORE_FILE_NAMES])
        return IgnoreRules(self._levels + (level,)) if level else self

    def sparing(self, directory: str) -> IgnoreRules:
        """These rules without the patterns that ignore `directory` itself: a directory searched explicitly is
        searched even when ignored (as `rg` and `fd` do), while its entries still meet the other patterns."""
        levels = []
        for level in self._levels:
            rel = os.path.relpath(directory, level.base).replace(os.sep, "/") + "/"
            kept = [p for p in level.spec.patterns if not (p.include and p.match_file(rel) is not None)]
            if kept:
                levels.append(_Level(level.base, type(level.spec)(kept)))
        return IgnoreRules(tuple(levels))

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Whether absolute `path` is ignored; the deepest level with a matching pattern decides."""
        for level in reversed(self._levels):
            rel = os.path.relpath(path, level.base)
            if rel.startswith(".."):
                continue
            result = level.spec.check_file(rel.replace(os.sep, "/") + ("/" if is_dir else ""))
            if result.include is not None:
                return bool(result.include)
        return False


def git_root(start: str) -> str | None:
    """The nearest directory at or above `start` holding `.git` (a directory, or a file for worktrees)."""
    current = os.path.abspath(start)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def listing_refusal(directory: str) -> OSError | None:
    """The OS's error for a directory that can be examined but not listed (no read permission), else None; a
    search checks its top directory so, with any engine, before it reports that nothing matched."""
    try:
        os.scandir(directory).close()  # opens the directory only: the permission check is at the open
    except OSError as exc:
        return exc
    return None


def rules_for(directory: str) -> IgnoreRules:
    """The rules in force for entries of `directory`: ignore files of it and its ancestors (to the git root,
    else to the filesystem root) plus the repository's `.git/info/exclude`."""
    return _ancestor_rules(os.path.abspath(directory)).with_directory(os.path.abspath(directory))


def _ancestor_rules(directory: str) -> IgnoreRules:
    """Rules from the ancestors of `directory` only (its own ignore files not included)."""
    root = git_root(directory)
    chain = [directory]
    while chain[-1] != root:
        parent = os.path.dirname(chain[-1])
        if parent == chain[-1]:
            break
        chain.append(parent)
    rules = IgnoreRules()
    if root is not None:
        exclude = _load_level(root, [os.path.join(root, ".git", "info", "exclude")])
        rules = IgnoreRules((exclude,)) if exclude else rules
    for path in reversed(chain[1:]):
        rules = rules.with_directory(path)
    return rules


Unlistable = Callable[[str, OSError], None]
"""Told of each directory of a walk that cannot be listed: `(its relative posix path, the OS's error)`."""


def walk(top: str, *, stop: threading.Event | None = None, breadth_first: bool = False,
         on_unlistable: Unlistable | None = None) -> Iterator[tuple[str, bool]]:
    """`(relative posix path, is_dir)` for every entry under `top` that is not ignored, depth-first with the
    entries of each directory sorted by name (the order of `rg --sort path`), or with `breadth_first` level by
    level (every entry of a directory before those of its subdirectories: a walk cut short keeps the shallow
    paths). Symbolic links are yielded as files and never followed; a directory that cannot be listed (`top`
    included, as `"."`) is skipped and passed to `on_unlistable`. Stops early once `stop` is set."""
    top = os.path.abspath(top)
    rules = _ancestor_rules(top)
    if rules.ignored(top, True):
        rules = rules.sparing(top)
    scan = _Scan(top, stop, on_unlistable)
    yield from (_levels if breadth_first else _descend)(top, rules, scan)


@dataclass(frozen=True)
class _Scan:
    """What every level of one walk shares."""

    top: str
    stop: threading.Event | None
    on_unlistable: Unlistable | None

    def stopped(self) -> bool:
        return self.stop is not None and self.stop.is_set()

    def entries(self, directory: str) -> list[os.DirEntry[str]]:
        """The entries of `directory` sorted by name; none (reported) when it cannot be listed."""
        try:
            with os.scandir(directory) as iterator:
                return sorted(iterator, key=lambda e: e.name)
        except OSError as exc:
            if self.on_unlistable is not None:
                self.on_unlistable(os.path.relpath(directory, self.top).replace(os.sep, "/"), exc)
            return []


def _levels(directory: str, parent_rules: IgnoreRules, scan: _Scan) -> Iterator[tuple[str, bool]]:
    """`walk`'s breadth-first order."""
    from collections import deque

    pending = deque([(directory, parent_rules)])
    while pending and not scan.stopped():
        directory, parent_rules = pending.popleft()
        rules = parent_rules.with_directory(directory)
        for entry, path, is_dir in _visible(directory, rules, scan):
            yield path, is_dir
            if is_dir:
                pending.append((entry.path, rules))


def _descend(directory: str, parent_rules: IgnoreRules, scan: _Scan) -> Iterator[tuple[str, bool]]:
    rules = parent_rules.with_directory(directory)
    for entry, path, is_dir in _visible(directory, rules, scan):
        yield path, is_dir
        if is_dir:
            yield from _descend(entry.path, rules, scan)


def _visible(directory: str, rules: IgnoreRules, scan: _Scan) -> Iterator[tuple[os.DirEntry[str], str, bool]]:
    """The entries of `directory` that `rules` keep, sorted, with their relative posix path and whether each is a
    directory; none once the walk is stopped."""
    for entry in scan.entries(directory):
        if scan.stopped():
            return
        is_dir = entry.is_dir(follow_symlinks=False)
        if entry.name == ".git" or rules.ignored(entry.path, is_dir):
            continue
        yield entry, os.path.relpath(entry.path, scan.top).replace(os.sep, "/"), is_dir


def _load_level(base: str, files: list[str]) -> _Level | None:
    lines: list[str] = []
    for file in files:
        try:
            with os.fdopen(open_regular(file, os.O_RDONLY), encoding="utf-8", errors="replace") as handle:
                lines.extend(handle.read().splitlines())
        except (OSError, ToolError):  # a `.gitignore` that is a FIFO or a device is no ignore file
            continue
    if not any(line.strip() and not line.startswith("#") for line in lines):
        return None
    import pathspec  # deferred: only the fallback search needs it

    return _Level(base, pathspec.GitIgnoreSpec.from_lines(lines))
