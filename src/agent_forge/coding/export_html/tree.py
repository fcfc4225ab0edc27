"""The session tree laid out for reading, every entry exactly once.

The active branch is the main line; every other branch is a nested collapsible section at the entry where it
forked; entries no root reaches (only a hand-edited file has them: a cycle of parents) come last.
"""

from __future__ import annotations

from typing import Callable, Sequence, Union

from .context import Record
from .text import esc, snippet

Entry = Record
_Work = list[tuple[str, Union[str, Entry]]]
"""Pending layout steps, popped last first: ("html", markup) or ("line", first entry of a line)."""
_SNIPPET_STEPS = 50  # how far down a branch to look for a message to quote in its summary line


class EntryTree:
    """Children by parent id over `entries` (append order kept); an entry whose parent is missing is a root.
    `active` is the set of ids on the path root → `leaf_id`."""

    def __init__(self, entries: Sequence[Entry], leaf_id: str | None) -> None:
        self.entries = entries
        self.by_id: dict[str, Entry] = {e["id"]: e for e in entries}
        self.children: dict[str | None, list[Entry]] = {}
        for entry in entries:
            parent = entry.get("parentId")
            key = parent if isinstance(parent, str) and parent in self.by_id and parent != entry["id"] else None
            self.children.setdefault(key, []).append(entry)
        self.active = self._path_ids(leaf_id)

    def _path_ids(self, leaf_id: str | None) -> set[str]:
        ids: set[str] = set()
        current = leaf_id
        while isinstance(current, str) and current in self.by_id and current not in ids:
            ids.add(current)
            current = self.by_id[current].get("parentId")
        return ids

    def kids(self, entry_id: str | None) -> list[Entry]:
        return self.children.get(entry_id, [])

    def main_child(self, entry_id: str | None) -> Entry | None:
        """The child continuing the line: the one on the active path, else the newest."""
        kids = self.kids(entry_id)
        return next((kid for kid in kids if kid["id"] in self.active), kids[-1] if kids else None)

    def subtree_sizes(self) -> dict[str, int]:
        """Number of entries in each reachable entry's subtree (itself included), computed without recursion."""
        order: list[Entry] = []
        stack = list(self.kids(None))
        while stack:
            entry = stack.pop()
            order.append(entry)
            stack.extend(self.kids(entry["id"]))
        sizes: dict[str, int] = {}
        for entry in reversed(order):  # children come after their parent in `order`
            sizes[entry["id"]] = 1 + sum(sizes[kid["id"]] for kid in self.kids(entry["id"]))
        return sizes

    def branch_count(self) -> int:
        """Number of forks: children beyond the first of every parent (roots included)."""
        return sum(len(kids) - 1 for kids in self.children.values() if kids)


def layout(tree: EntryTree, render: Callable[[Entry], str]) -> list[str]:
    """HTML pieces of the whole tree in reading order (see the module docstring). Iterative, so a long session
    or deeply nested branches cannot exhaust the interpreter's recursion limit."""
    sizes = tree.subtree_sizes()
    out: list[str] = []
    seen: set[str] = set()
    work: _Work = []
    first = _queue_line(tree, None, work, sizes)
    if first is not None:
        work.append(("line", first))
    while work:
        kind, value = work.pop()
        if kind == "html":
            out.append(value)
            continue
        entry: Entry | None = value
        while entry is not None:
            seen.add(entry["id"])
            out.append(render(entry))
            entry = _queue_line(tree, entry["id"], work, sizes)
    out.extend(_unreachable(tree, seen, render))
    return out


def _queue_line(tree: EntryTree, parent_id: str | None, work: _Work,
                sizes: dict[str, int]) -> Entry | None:
    """The entry that continues the line after `parent_id`. When `parent_id` has other children, their
    branches are queued (to come first) and so is the continuation, and None is returned."""
    main = tree.main_child(parent_id)
    others = [kid for kid in tree.kids(parent_id) if kid is not main]
    if not others:
        return main
    if main is not None:
        work.append(("line", main))
    for kid in reversed(others):
        work.append(("html", "</div></details>"))
        work.append(("line", kid))
        work.append(("html", _branch_open(tree, kid, sizes.get(kid["id"], 1))))
    return None


def _branch_open(tree: EntryTree, first: Entry, size: int) -> str:
    quote = _first_text(tree, first)
    words = f"Other branch: {size} {'entry' if size == 1 else 'entries'}" + (f" · “{quote}”" if quote else "")
    return f'<details class="branch"><summary>{esc(words)}</summary><div class="branch-body">'


def _first_text(tree: EntryTree, entry: Entry | None) -> str:
    for _ in range(_SNIPPET_STEPS):
        if entry is None:
            return ""
        message = entry.get("message")
        if isinstance(message, dict) and message.get("role") in ("user", "assistant"):
            text = _message_text(message.get("content"))
            if text.strip():
                return snippet(text)
        entry = tree.main_child(entry["id"])
    return ""


def _message_text(content: object) -> str:
    if isinstance(content, str):
        return content
    items = content if isinstance(content, list) else []
    return " ".join(str(b.get("text", "")) for b in items if isinstance(b, dict) and b.get("type") == "text")


def _unreachable(tree: EntryTree, seen: set[str], render: Callable[[Entry], str]) -> list[str]:
    rest = [entry for entry in tree.entries if entry["id"] not in seen]
    if not rest:
        return []
    return ['<details class="branch unreachable" open><summary>Entries outside the tree (their parents form a '
            'cycle)</summary><div class="branch-body">', *map(render, rest), "</div></details>"]
