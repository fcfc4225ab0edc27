"""Reading a session as a tree and cutting branches out of it: entries since a cursor, the tree with labels,
the user messages to fork from, and the entry paths a fork or a clone copies into a new session.

Shapes follow the RPC commands of seed 000 (`get_entries`, `get_tree`, `get_fork_messages`, `fork`, `clone`).
Everything here reads a `SessionStore` and never writes.
"""

from __future__ import annotations

from typing import Any, TypedDict, TypeGuard, cast

from ..paths import path_text
from .entries import LabelEntry, MessageEntry, SessionEntry
from .listing import message_text
from .store import SessionStore

INVALID_FORK_ENTRY = "Invalid entry ID for forking"


class TreeNode(TypedDict, total=False):
    """`{entry, children, label?, labelTimestamp?}`: `label` is the entry's current label (latest `label`
    entry targeting it, unless that one cleared it) and `labelTimestamp` that label entry's timestamp."""

    entry: SessionEntry
    children: list[TreeNode]
    label: str
    labelTimestamp: str


class FlatTreeNode(TypedDict, total=False):
    """One node of `get_tree` with `flat: true`: `{entry, parentId, childIds, label?, labelTimestamp?}`.
    `parentId` is the node's parent in the tree (None for a root, an orphan's included); `childIds` are its
    children's entry ids in append order."""

    entry: SessionEntry
    parentId: str | None
    childIds: list[str]
    label: str
    labelTimestamp: str


class ForkMessage(TypedDict):
    entryId: str
    text: str


def entries_since(store: SessionStore, since: str | None = None) -> dict[str, Any]:
    """`{entries, leafId}` for `get_entries`: every entry in append order (header excluded), or only those
    appended strictly after `since`, which costs O(entries returned). Raises KeyError(`Entry not found: <id>`)
    for an unknown `since`."""
    if since is None:
        return {"entries": store.entries, "leafId": store.leaf_id}
    try:
        entries = store.entries_since(since)
    except ValueError:
        raise KeyError(f"Entry not found: {path_text(since)}") from None
    return {"entries": entries, "leafId": store.leaf_id}


def build_tree(entries: list[SessionEntry]) -> list[TreeNode]:
    """The entries as a forest, children in append order. Roots are entries with no parent, orphans (their
    parent is missing) and, to keep every entry, one entry of each parent cycle a hand-edited file may hold.
    Built without recursion: a linear session of any length is one deep chain."""
    labels = _labels(entries)
    nodes = {entry["id"]: _node(entry, labels.get(entry["id"])) for entry in entries}
    roots: list[TreeNode] = []
    for entry in entries:
        parent_id = entry.get("parentId")
        parent = nodes.get(parent_id) if isinstance(parent_id, str) and parent_id != entry["id"] else None
        (parent["children"] if parent is not None else roots).append(nodes[entry["id"]])
    _cut_cycles(entries, nodes, roots)
    return roots


def get_tree(store: SessionStore) -> dict[str, Any]:
    """`{tree, leafId}` for `get_tree` (see `build_tree`)."""
    return {"tree": build_tree(store.entries), "leafId": store.leaf_id}


def get_flat_tree(store: SessionStore) -> dict[str, Any]:
    """`{nodes, leafId}` for `get_tree` with `flat: true`: every node of `build_tree` as a `FlatTreeNode`, in
    tree order (depth first, roots and children in append order), so any JSON parser reads it whatever the
    depth of the tree."""
    return {"nodes": flatten_tree(build_tree(store.entries)), "leafId": store.leaf_id}


def flatten_tree(roots: list[TreeNode]) -> list[FlatTreeNode]:
    """The forest in depth-first pre-order, without recursion."""
    out: list[FlatTreeNode] = []
    stack: list[tuple[TreeNode, str | None]] = [(root, None) for root in reversed(roots)]
    while stack:
        node, parent_id = stack.pop()
        children = node["children"]
        flat: FlatTreeNode = {"entry": node["entry"], "parentId": parent_id,
                              "childIds": [child["entry"]["id"] for child in children]}
        for key in ("label", "labelTimestamp"):
            if key in node:
                flat[key] = node[key]  # type: ignore[literal-required]
        out.append(flat)
        stack.extend((child, node["entry"]["id"]) for child in reversed(children))
    return out


def fork_messages(store: SessionStore) -> list[ForkMessage]:
    """`[{entryId, text}]` for `get_fork_messages`: the user messages of the active branch, root first."""
    return [{"entryId": entry["id"], "text": message_text(entry["message"])}
            for entry in store.branch() if _is_user_message(entry)]


def fork_path(store: SessionStore, entry_id: str) -> tuple[list[SessionEntry], str]:
    """What a fork at user message `entry_id` keeps: (the entries root → just before it, the message's text).
    The message itself is never kept, also when it sits on a parent cycle (see `SessionStore.branch`).
    Raises ValueError(INVALID_FORK_ENTRY) when the id is unknown or not a user message."""
    entry = store.get_entry(entry_id)
    if entry is None or not _is_user_message(entry):
        raise ValueError(INVALID_FORK_ENTRY)
    return copy_path(store, store.branch(entry_id)[:-1]), message_text(entry["message"])


def clone_path(store: SessionStore) -> list[SessionEntry]:
    """What a clone keeps: the active branch root → leaf, and its entries' labels (see `copy_path`)."""
    return copy_path(store, store.branch())


def copy_path(store: SessionStore, path: list[SessionEntry]) -> list[SessionEntry]:
    """The entries a copy of `path` (root first, from `store`) starts with: `path`, then each of its entries'
    current label that `path` itself does not give. A label is usually set from /tree, so its `label` entry
    lies on whatever branch was the leaf's then (often one left since): the latest label entry of each target
    held (a clearing one included: a removed label stays removed) is copied once, id and timestamp kept,
    chained after `path`. Every copy (`fork`, `clone`, `--fork`, ACP /fork and /clone) goes through here."""
    latest, own = _latest_labels(store.entries), _latest_labels(path)
    tail: list[SessionEntry] = []
    parent_id = path[-1]["id"] if path else None
    for entry in path:
        label, given = latest.get(entry["id"]), own.get(entry["id"])
        if label is None or label is given or (_text(label) is None and _text(given) is None):
            continue  # `path` already gives the label it has now, or neither labels it
        copy = cast(SessionEntry, {**label, "parentId": parent_id})
        tail.append(copy)
        parent_id = copy["id"]
    return path + tail


def _is_user_message(entry: SessionEntry) -> TypeGuard[MessageEntry]:
    message = entry.get("message") if entry["type"] == "message" else None
    return isinstance(message, dict) and message.get("role") == "user"


def _node(entry: SessionEntry, label: LabelEntry | None) -> TreeNode:
    node: TreeNode = {"entry": entry, "children": []}
    if label is not None:
        node["label"] = label["label"]
        if isinstance(label.get("timestamp"), str):  # a hand-edited label may lack it: the field is optional
            node["labelTimestamp"] = label["timestamp"]
    return node


def _labels(entries: list[SessionEntry]) -> dict[str, LabelEntry]:
    """Target id → the `label` entry that currently labels it (the latest one, unless it cleared the label)."""
    return {target: entry for target, entry in _latest_labels(entries).items() if _text(entry) is not None}


def _latest_labels(entries: list[SessionEntry]) -> dict[str, LabelEntry]:
    """Target id → the latest `label` entry targeting it, a clearing one included."""
    labels: dict[str, LabelEntry] = {}
    for entry in entries:
        if entry["type"] == "label" and isinstance(target := entry.get("targetId"), str):
            labels[target] = cast(LabelEntry, entry)
    return labels


def _text(label: LabelEntry | None) -> str | None:
    """The label a `label` entry sets; None when it clears it (no text, or only blanks)."""
    text = label.get("label") if label is not None else None
    return text if isinstance(text, str) and text.strip() else None


def _cut_cycles(entries: list[SessionEntry], nodes: dict[str, TreeNode], roots: list[TreeNode]) -> None:
    """Entries no root reaches sit on a parent cycle or below one: walk up from each to its cycle and cut that
    cycle at its earliest entry (append order), which becomes a root; the rest of the cycle and every entry
    below it hang under that root as they are."""
    reached = _reachable(roots)
    order = {entry["id"]: index for index, entry in enumerate(entries)}
    for entry in entries:
        if entry["id"] in reached:
            continue
        cut = min(_cycle_above(entry, nodes), key=order.__getitem__)
        node = nodes[cut]
        nodes[node["entry"]["parentId"]]["children"].remove(node)  # type: ignore[index]
        roots.append(node)
        reached |= _reachable([node])


def _cycle_above(entry: SessionEntry, nodes: dict[str, TreeNode]) -> list[str]:
    """The ids of the parent cycle reached by walking up from `entry` (which no root reaches, so there is one)."""
    walk: dict[str, int] = {}
    current = entry["id"]
    while current not in walk:
        walk[current] = len(walk)
        current = nodes[current]["entry"]["parentId"]  # type: ignore[assignment]
    return list(walk)[walk[current]:]


def _reachable(roots: list[TreeNode]) -> set[str]:
    seen: set[str] = set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        if node["entry"]["id"] not in seen:
            seen.add(node["entry"]["id"])
            stack.extend(node["children"])
    return seen
