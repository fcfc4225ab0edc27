"""Glob patterns of the `find` and `grep` tools, matched against paths relative to the searched directory."""

from __future__ import annotations

import re
from typing import Callable


def path_matcher(pattern: str) -> Callable[[str, bool], bool]:
    """`matches(rel_path, is_dir)` for a find pattern: without `/` it is matched against the entry's name,
    with `/` against its path relative to the search directory (a leading `./` or `/` is dropped). A
    trailing `/` matches directories only. `*` and `?` stay within one path segment (and match a leading
    dot), `**` spans segments, `[...]` is a character class (`[!...]` negated), `{a,b}` is either."""
    dirs_only = pattern.endswith("/")
    body = pattern.rstrip("/").removeprefix("./").lstrip("/")
    regex = re.compile(glob_to_regex(body), re.DOTALL)
    by_name = "/" not in body

    def matches(rel: str, is_dir: bool) -> bool:
        if dirs_only and not is_dir:
            return False
        return regex.fullmatch(rel.rsplit("/", 1)[-1] if by_name else rel) is not None

    return matches


def glob_to_regex(glob: str) -> str:
    """Regex source for the glob syntax of `path_matcher` (an unclosed `[` or `{` is literal)."""
    out, i = [], 0
    while i < len(glob):
        char = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        end = _closing(glob, i)
        if char == "[" and end is not None:
            inner = glob[i + 1:end]
            out.append("[" + ("^" + inner[1:] if inner.startswith("!") else inner).replace("\\", "\\\\") + "]")
            i = end + 1
            continue
        if char == "{" and end is not None:
            out.append("(?:" + "|".join(glob_to_regex(part) for part in glob[i + 1:end].split(",")) + ")")
            i = end + 1
            continue
        out.append({"*": "[^/]*", "?": "[^/]"}.get(char, re.escape(char)))
        i += 1
    return "".join(out)


def _closing(glob: str, start: int) -> int | None:
    pairs = {"[": "]", "{": "}"}
    if glob[start] not in pairs:
        return None
    end = glob.find(pairs[glob[start]], start + 2 if glob[start] == "[" else start + 1)
    return end if end > start else None
