"""The session tree as numbered text rows, one per message, summary and compaction (the interactive `/tree`
picker and ACP's `/tree` list them the same way)."""

from __future__ import annotations

from typing import Any


def tree_rows(nodes: list[dict[str, Any]], leaf_id: str | None) -> dict[str, str]:
    """`"12. ·· user: text [label]"` → entry id for each message (user, assistant, `shell: $ command`), branch
    summary and compaction node, in tree order; the indent grows at each branch point and the current leaf's
    row (or, when the leaf is not shown — a label, a model change — the nearest shown entry above it) is marked
    `(here)`."""
    depth: dict[str | None, int] = {None: 0}
    children = {node["entry"]["id"]: len(node["childIds"]) for node in nodes}
    parents = {node["entry"]["id"]: node["parentId"] for node in nodes}
    shown = {node["entry"]["id"]: text for node in nodes if (text := _row_text(node["entry"])) is not None}
    here = _nearest_shown(leaf_id, parents, shown)
    rows: dict[str, str] = {}
    for node in nodes:
        entry_id, parent = node["entry"]["id"], node["parentId"]
        depth[entry_id] = depth.get(parent, 0) + (1 if parent and children.get(parent, 0) > 1 else 0)
        if entry_id not in shown:
            continue
        mark = f" [{' '.join(str(node['label']).split())}]" if node.get("label") else ""
        rows[f"{len(rows) + 1}. {'· ' * depth[entry_id]}{shown[entry_id]}{mark}"
             f"{' (here)' if entry_id == here else ''}"] = entry_id
    return rows


def _row_text(entry: dict[str, Any]) -> str | None:
    kind = entry.get("type")
    if kind == "branch_summary":
        return f"branch summary: {_one_line(str(entry.get('summary') or ''))}"
    if kind == "compaction":
        return f"compaction: {_one_line(str(entry.get('summary') or ''))}"
    message = entry.get("message") if kind == "message" else None
    role = message.get("role") if isinstance(message, dict) else None
    if role == "bashExecution":  # a `!` command (or RPC `bash`) kept in the context
        return f"shell: $ {_one_line(str(message.get('command', '')))}"  # type: ignore[union-attr]
    if role not in ("user", "assistant"):
        return None
    text = user_text(message) if role == "user" else _answer_text(message)  # type: ignore[arg-type]
    return f"{role}: {_one_line(text)}"


def _nearest_shown(entry_id: str | None, parents: dict[str, str | None], shown: dict[str, str]) -> str | None:
    seen: set[str] = set()
    while entry_id is not None and entry_id not in shown and entry_id not in seen:
        seen.add(entry_id)
        entry_id = parents.get(entry_id)
    return entry_id


def _answer_text(message: dict[str, Any]) -> str:
    parts = [str(b.get("text", "")) for b in message.get("content") or [] if isinstance(b, dict)
             and b.get("type") == "text"]
    calls = [str(b.get("name")) for b in message.get("content") or [] if isinstance(b, dict)
             and b.get("type") == "toolCall"]
    return " ".join(parts).strip() or ("calls " + ", ".join(calls) if calls else "(no text)")


def _one_line(text: str, width: int = 60) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def user_text(message: dict[str, Any]) -> str:
    """The text of a user-side message (string content or text blocks); images count as `[image]`."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(str(b.get("text", "")) if b.get("type") == "text" else "[image]"
                   for b in content or [] if isinstance(b, dict))
