"""Where a resource came from: the roots resources are discovered in, and the `sourceInfo` wire shape."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypedDict

from ..paths import path_text
from ..safe_read import examine, found_text

MAX_WALK_DEPTH = 8
"""Directories below a resource root searched for skills (real layouts use one or two levels)."""

MAX_WALK_ENTRIES = 5000
"""Directory entries looked at under one resource root before the search stops: a root may be a link to a
huge tree (`/usr`) in a checkout nobody vetted, and start-up must stay fast."""

Scope = Literal["user", "project", "temporary"]
Location = Literal["user", "project", "path"]


class SourceInfo(TypedDict, total=False):
    """`get_commands` `sourceInfo` (seed 000): `path` of the file, `source` (`local` for files found on disk),
    `scope`, `origin` (`top-level`; `package` is for packaged resources, which agent-forge does not have yet),
    `baseDir` (the directory the resource was discovered in)."""

    path: str
    source: str
    scope: Scope
    origin: Literal["top-level", "package"]
    baseDir: str


@dataclass(frozen=True)
class ResourceRoot:
    """A directory (or single file) to discover resources in.

    `scope` is `user` (agent dir and its settings), `project` (`.agent-forge/agent/` and project settings) or
    `temporary` (a command-line path). `location` is the seed-003 field: `user`, `project`, or `path` for a
    path named on the command line or in settings.
    """

    path: Path
    scope: Scope
    location: Location

    def source_info(self, file: Path, base_dir: Path) -> SourceInfo:
        return SourceInfo(path=str(file), source="local", scope=self.scope, origin="top-level",
                          baseDir=str(base_dir))


def describe(path: Path) -> str:
    """A path for messages: absolute, `~` for the home directory."""
    text = str(path)
    home = str(Path.home())
    return "~" + text[len(home):] if home not in ("", "/") and text.startswith(home + "/") else text


def root_kind(root: ResourceRoot, what: str, warnings: list[str]) -> Literal["file", "dir"] | None:
    """What `root.path` is, examined once: "file" (a regular file), "dir", or None when it is neither, with a
    warning naming it as `what` ("skill path") and why (missing, what it is, the OS's reason) added to
    `warnings`, unless it is a default directory that is simply absent (it may be; a named path may not)."""
    found = examine(root.path)
    if isinstance(found, os.stat_result) and stat.S_ISREG(found.st_mode):
        return "file"
    if isinstance(found, os.stat_result) and stat.S_ISDIR(found.st_mode):
        return "dir"
    if root.location == "path" or found is not None:
        warnings.append(f"{path_text(root.path)}: {what} {found_text(found, ', not a file or a directory')}")
    return None
