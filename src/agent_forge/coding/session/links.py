"""Broken parent links among a session file's entries (a hand-edited or damaged file): an entry naming itself as
its parent, naming an entry the file does not hold, or a parent cycle. Found once, where the file is read
(`reading.read_session`), and reported by `damage.load_warnings`; the file itself is never rewritten for them.

What each means for the tree, the active branch and the model's context (they all agree, being read from the
same links): a self-parented entry continues from the entry before it in file order (the link is read as lost,
as a parent on a damaged line is); an entry whose parent is missing starts a branch of its own (a root, as in
the reference's `get_tree`); a cycle is cut at its earliest entry in file order, which becomes a root
(`tree.build_tree`, `SessionStore.branch`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...records import Record, factory


class BrokenLinks(Record):
    """Entries with a broken `parentId`, by index in the file's entries (append order). `self_parented`: each
    named itself (read as a child of the entry before it); `missing`: each names an id no entry has; `cycles`:
    the members of each parent cycle, in append order (the first is where the cycle is cut)."""

    self_parented: list[int] = factory(list)
    missing: list[int] = factory(list)
    cycles: list[list[int]] = factory(list)

    def __bool__(self) -> bool:
        return bool(self.self_parented or self.missing or self.cycles)


def find_broken_links(entries: Sequence[Mapping[str, Any]], positions: Mapping[str, int], ahead: Sequence[int],
                      self_parented: list[int]) -> BrokenLinks:
    """The broken links of `entries` (`positions`: id → index). `ahead`: the indexes of the entries whose parent
    was not read before them (missing, or later in the file); only such a link can close a cycle (along the
    links of a cycle, file positions cannot all decrease), so the walk costs nothing for an ordinary file."""
    missing = [index for index in ahead if entries[index]["parentId"] not in positions]
    later = [index for index in ahead if entries[index]["parentId"] in positions]
    return BrokenLinks(self_parented, missing, _cycles(entries, positions, later))


def _cycles(entries: Sequence[Mapping[str, Any]], positions: Mapping[str, int],
            starts: Sequence[int]) -> list[list[int]]:
    """The parent cycles reached by walking up from each of `starts`; each entry is walked once in all."""
    done: set[int] = set()
    cycles: list[list[int]] = []
    for start in starts:
        walk: dict[int, int] = {}  # index -> its step in this walk
        current: int | None = start
        while current is not None and current not in done and current not in walk:
            walk[current] = len(walk)
            parent = entries[current]["parentId"]
            current = None if parent is None else positions.get(parent)
        if current is not None and current in walk:
            cycles.append(sorted(list(walk)[walk[current]:]))
        done.update(walk)
    return cycles
