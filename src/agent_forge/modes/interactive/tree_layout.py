"""The session tree laid out as drawn rows for `/tree` (`tree_view.py` draws them): each entry's one-line text,
then, for a filter, a search and the folded entries, the rows in tree order with their branch lines.

Shape: a linear run stays in one column; where an entry has several (shown) children, each child gets `├─ ` or
`└─ ` (the last) and its descendants continue under its text behind `│  ` (more siblings follow) or `   `. A
filter or search hides entries without breaking the shape: a shown entry hangs under its nearest shown ancestor
(the projection of the tree on the shown entries), so siblings stay siblings. Everything here is linear in the
number of entries and iterative (a 5,000-entry chain is one deep path)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...coding.paths import path_text
from .render import clean

FILTERS = ("default", "user", "labelled", "all")
FILTER_NAMES = {"default": "messages", "user": "your messages only", "labelled": "labelled only",
                "all": "all entries"}
"""The filters Tab cycles through, and the title's word for each."""

DEFAULT_KINDS = frozenset({"user", "assistant", "tools", "shell", "summary", "compaction", "custom"})
"""What the default filter shows: the conversation (tool results, model changes, labels... only with `all`)."""

SHOWN_CHARS = 300
"""Characters of an entry's text kept for its row (a row is one screen line; a 5 MB paste is cut first)."""
SEARCH_CHARS = 2000
"""Characters of an entry's text a search looks at."""
MAX_GUTTER = 300
"""A gutter (the branch lines before a row's text) keeps at most its last this many columns."""


@dataclass(slots=True)
class Item:
    """One entry: `id`, the tree `parent` id, `kind` (see `DEFAULT_KINDS`, `result`, `other`), the row's lead
    word(s) `role` (`"user"`; empty for a tool-call row), its one-line cleaned `text`, its `label`, and
    `haystack`, the lower-cased text a search matches."""

    id: str
    parent: str | None
    kind: str
    role: str
    text: str
    label: str | None
    haystack: str


@dataclass(slots=True)
class Row:
    """A drawn row: the `item`, the `gutter` (branch lines), `hidden` (entries folded under it; 0 when it is not
    folded), `here` (the current leaf, or the nearest shown entry above it), `on_path` (on the root → leaf
    path), `starts` (a branch segment starts here: a root, or a child drawn with `├─`/`└─`), `parent` (the
    id of the shown entry it hangs under)."""

    item: Item
    gutter: str
    hidden: int
    here: bool
    on_path: bool
    starts: bool
    parent: str | None


class TreeModel:
    """The entries of `get_flat_tree`'s `nodes` (tree pre-order) as `items`, with `by_id`, the leaf id and the
    ids on the active path (root → leaf)."""

    def __init__(self, nodes: list[dict[str, Any]], leaf_id: str | None):
        self.items = [_item(node) for node in nodes]
        self.by_id = {item.id: item for item in self.items}
        self.leaf_id = leaf_id
        self.path: set[str] = set()
        at = leaf_id
        while at is not None and at not in self.path and at in self.by_id:
            self.path.add(at)
            at = self.by_id[at].parent

    def nearest(self, entry_id: str | None, shown: set[str] | dict[str, Any]) -> str | None:
        """`entry_id` or its nearest ancestor in `shown`; None when none is."""
        seen: set[str] = set()
        while entry_id is not None and entry_id not in shown and entry_id not in seen:
            seen.add(entry_id)
            item = self.by_id.get(entry_id)
            entry_id = item.parent if item else None
        return entry_id if entry_id in shown else None


def keeps(item: Item, filter_: str) -> bool:
    """Whether `filter_` (one of `FILTERS`) shows `item`."""
    if filter_ == "all":
        return True
    if filter_ == "user":
        return item.kind == "user"
    if filter_ == "labelled":
        return item.label is not None
    return item.kind in DEFAULT_KINDS


def layout(model: TreeModel, *, filter_: str = "default", needle: str = "",
           folded: set[str] | frozenset[str] = frozenset()) -> list[Row]:
    """The rows `filter_` and the search `needle` (every word, case-insensitive, in the role, text or label)
    show, in tree order, with branch lines; the shown descendants of a `folded` entry are left out and counted
    in its `hidden`."""
    words = needle.lower().split()
    shown = [item for item in model.items if keeps(item, filter_) and all(w in item.haystack for w in words)]
    near: dict[str | None, str | None] = {None: None}  # id → itself when shown, else its nearest shown ancestor
    shown_ids = {item.id for item in shown}
    parent_of: dict[str, str | None] = {}
    for item in model.items:
        above = near.get(item.parent)
        near[item.id] = item.id if item.id in shown_ids else above
        if item.id in shown_ids:
            parent_of[item.id] = above
    last_child: dict[str | None, str] = {}
    children: dict[str | None, int] = {}
    for item in shown:
        parent = parent_of[item.id]
        last_child[parent] = item.id
        children[parent] = children.get(parent, 0) + 1
    return _rows(model, shown, parent_of, children, last_child, folded, near.get(model.leaf_id))


def _rows(model: TreeModel, shown: list[Item], parent_of: dict[str, str | None], children: dict[str | None, int],
          last_child: dict[str | None, str], folded: set[str] | frozenset[str], here: str | None) -> list[Row]:
    base: dict[str | None, str] = {None: ""}  # the gutter an entry's children continue behind
    under_fold: dict[str, str] = {}  # a hidden entry → the folded entry hiding it
    hidden: dict[str, int] = {}
    rows: list[Row] = []
    for item in shown:
        parent = parent_of[item.id]
        fold = under_fold.get(parent) if parent is not None else None
        if fold is None and parent is not None and parent in folded:
            fold = parent
        if fold is not None:
            under_fold[item.id] = fold
            hidden[fold] = hidden.get(fold, 0) + 1
            continue
        gutter, starts = base[parent], parent is None
        if children.get(parent, 0) > 1:
            starts = True
            last = last_child[parent] == item.id
            base[item.id] = (gutter + ("   " if last else "│  "))[-MAX_GUTTER:]
            gutter += "└─ " if last else "├─ "
        else:
            base[item.id] = gutter
        rows.append(Row(item, gutter[-MAX_GUTTER:], 0, item.id == here, item.id in model.path, starts,
                        parent))
    if hidden:
        for row in rows:
            row.hidden = hidden.get(row.item.id, 0)
    if here in under_fold:  # the leaf sits in a folded branch: its fold is where "here" is
        for row in rows:
            row.here = row.item.id == under_fold[here]  # type: ignore[index]
    return rows


# -- an entry's row text ------------------------------------------------------------------------------------
def _item(node: dict[str, Any]) -> Item:
    entry = node["entry"]
    kind, role, text = describe(entry)
    label = node.get("label")
    label = " ".join(clean(str(label)[:SHOWN_CHARS]).split()) if label else None
    shown = _one_line(text, SEARCH_CHARS)
    haystack = f"{role} {shown} {label or ''}".lower()
    return Item(str(entry["id"]), node.get("parentId"), kind, role, shown[:SHOWN_CHARS], label or None, haystack)


def describe(entry: dict[str, Any]) -> tuple[str, str, str]:
    """(kind, role, raw text) of a session entry."""
    kind = entry.get("type")
    if kind == "message" and isinstance(entry.get("message"), dict):
        return _message(entry["message"])
    if kind == "branch_summary":
        return "summary", "branch summary", str(entry.get("summary") or "")
    if kind == "compaction":
        return "compaction", "compaction", str(entry.get("summary") or "")
    if kind == "custom_message":
        content = entry.get("content")
        text = content if isinstance(content, str) else _text_of(content)
        return ("custom" if entry.get("display") else "other"), str(entry.get("customType") or "note"), text
    return "other", str(kind or "entry").replace("_", " "), _other_text(entry)


def _message(message: dict[str, Any]) -> tuple[str, str, str]:
    role = message.get("role")
    if role == "user":
        return "user", "user", _user_text(message.get("content"))
    if role == "assistant":
        return _assistant(message)
    if role == "bashExecution":  # a `!` command (or RPC `bash`) kept in the context
        return "shell", "shell", f"$ {message.get('command', '')}"
    if role == "toolResult":
        what = "error" if message.get("isError") else "result"
        return "result", "", f"[{what}: {message.get('toolName', '?')}] {_text_of(message.get('content'))}"
    return "other", str(role or "message"), _text_of(message.get("content"))


def _assistant(message: dict[str, Any]) -> tuple[str, str, str]:
    content = message.get("content") if isinstance(message.get("content"), list) else []
    text = " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    if text.strip():
        return "assistant", "assistant", text
    calls = [b for b in content if isinstance(b, dict) and b.get("type") == "toolCall"]
    if calls:
        return "tools", "", " ".join(f"[{_call(call)}]" for call in calls)
    reason = message.get("stopReason")
    if reason in ("aborted", "error"):
        return "assistant", "assistant", f"({reason}{': ' if message.get('errorMessage') else ''}"\
                                         f"{message.get('errorMessage') or ''})"
    return "assistant", "assistant", "(no text)"


def _call(call: dict[str, Any]) -> str:
    """`bash: git status`, `read: src/x.py`: a tool call as the reference's tree shows it."""
    name = str(call.get("name") or "?")
    args = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
    for key in ("command", "path", "file_path", "pattern", "query", "url"):
        if isinstance(args.get(key), str):
            return f"{name}: {args[key][:SHOWN_CHARS]}"
    return name


def _other_text(entry: dict[str, Any]) -> str:
    kind = entry.get("type")
    if kind in ("model_change", "context_window_change"):
        window = f" {entry.get('contextWindow')} tokens" if kind == "context_window_change" else ""
        return f"{entry.get('provider')}/{entry.get('modelId')}{window}"
    fields = {"thinking_level_change": "thinkingLevel", "session_info": "name", "custom": "customType",
              "label": "label", "usage": "model"}
    value = entry.get(fields.get(str(kind), ""), "")
    if kind == "label":
        return f"{entry.get('targetId')} → {value}" if value else f"{entry.get('targetId')} cleared"
    return str(value) if value is not None else ""


def _user_text(content: Any) -> str:
    """A user message's row: the text as typed, then `[+ notes.txt]` for each file its `@` references attached
    (not the file's text, which the message carries after the typed text) and `[image]` for each image."""
    from .completion import attached_files

    blocks = [content] if isinstance(content, str) else [b for b in content or [] if isinstance(b, dict)]
    texts = [b if isinstance(b, str) else str(b.get("text", "")) for b in blocks
             if isinstance(b, str) or b.get("type") == "text"]
    typed, files = attached_files("".join(texts))
    marks = [f"[+ {path_text(name)}]" for name, _ in files] + ["[image]"] * (len(blocks) - len(texts))
    return " ".join([typed.rstrip(), *marks]) if marks else typed


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict):
            parts.append(str(block.get("text", "")) if block.get("type") == "text" else "[image]")
    return " ".join(parts)


def _one_line(text: str, limit: int) -> str:
    """The start of `text` on one line, escapes and control characters shown as text (`render.clean`)."""
    return " ".join(clean(text[: limit * 2]).split())[:limit]
