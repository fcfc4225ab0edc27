"""The whole page: head with inline CSS, a Content-Security-Policy that forbids every fetch, the session's
facts, the entry tree, and the inline script."""

from __future__ import annotations

import base64
import hashlib
from typing import Sequence

from .assets import CSS, SCRIPT
from .context import Record, RenderContext
from .entries import render_entry
from .highlight import stylesheet
from .text import esc, snippet
from .tree import EntryTree, layout
from ...words import counted

_SCRIPT_HASH = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
       f"script-src 'sha256-{_SCRIPT_HASH}'; base-uri 'none'; form-action 'none'")
"""Second line of defence behind escaping: only our own script runs, and nothing is loaded but `data:` images."""


def render_page(header: Record, entries: Sequence[Record], *, leaf_id: str | None = None,
                source: str | None = None, exported_at: str | None = None) -> str:
    """The HTML document of a session: `header` is the session header line, `entries` its entries in file
    order, `leaf_id` the current leaf (its branch is the main line), `source` the session file shown in the
    facts, `exported_at` an ISO timestamp shown likewise."""
    tree = EntryTree(entries, leaf_id)
    context = RenderContext.of_entries(entries, leaf_id)
    body = "\n".join(layout(tree, lambda entry: render_entry(entry, context)))
    title = _title(header, tree)
    return "".join([
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n',
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
        '<meta name="generator" content="agent-forge">\n',
        f"<title>{esc(title)}</title>\n<style>{CSS}\n{stylesheet()}\n</style>\n</head>\n<body>\n<main>\n",
        _session_head(title, header, tree, source, exported_at),
        f'<div class="entries">\n{body}\n</div>\n</main>\n<script>{SCRIPT}</script>\n</body>\n</html>\n',
    ])


def _title(header: Record, tree: EntryTree) -> str:
    name = _session_name(tree)
    if name:
        return name
    for entry in tree.entries:
        message = entry.get("message")
        if isinstance(message, dict) and message.get("role") == "user":
            text = _plain(message.get("content"))
            if text.strip():
                return snippet(text, 100)
    return f"Session {header.get('id', '')}".strip()


def _session_name(tree: EntryTree) -> str | None:
    """The latest `session_info` name on the active branch, else in the whole file."""
    infos = [e for e in tree.entries if e.get("type") == "session_info"]
    active = [e for e in infos if e["id"] in tree.active]
    chosen = active or infos
    name = chosen[-1].get("name") if chosen else None
    return name.strip() if isinstance(name, str) and name.strip() else None


def _plain(content: object) -> str:
    if isinstance(content, str):
        return content
    items = content if isinstance(content, list) else []
    return " ".join(str(b.get("text", "")) for b in items if isinstance(b, dict) and b.get("type") == "text")


def _session_head(title: str, header: Record, tree: EntryTree, source: str | None,
                  exported_at: str | None) -> str:
    facts = [("Session", header.get("id")), ("Working directory", header.get("cwd")),
             ("Started", header.get("timestamp")), ("Session file", source),
             ("Parent session", header.get("parentSession")), ("Exported", exported_at),
             ("Entries", _entry_counts(tree)), ("Models", ", ".join(_models(tree.entries)) or None),
             ("Usage (all branches)", _usage_total(tree.entries))]
    rows = "".join(f"<dt>{esc(name)}</dt><dd>{esc(value)}</dd>" for name, value in facts if value)
    return (f'<header class="session-head">\n<h1>{esc(title)}</h1>\n<dl class="facts">{rows}</dl>\n'
            '<div class="toolbar"><button type="button" id="expand-all">Expand all</button>'
            '<button type="button" id="collapse-all">Collapse all</button></div>\n</header>\n')


def _entry_counts(tree: EntryTree) -> str:
    messages = sum(1 for e in tree.entries if e.get("type") == "message")
    branches = tree.branch_count()
    text = f"{counted(len(tree.entries), 'entry', 'entries')}, {counted(messages, 'message')}"
    return text + (f", {counted(branches, 'other branch', 'other branches')}" if branches else "")


def _assistant_messages(entries: Sequence[Record]) -> list[Record]:
    messages = [e.get("message") for e in entries if e.get("type") == "message"]
    return [m for m in messages if isinstance(m, dict) and m.get("role") == "assistant"]


def _models(entries: Sequence[Record]) -> list[str]:
    names = [f"{m.get('provider', '?')}/{m['model']}" for m in _assistant_messages(entries) if m.get("model")]
    return list(dict.fromkeys(names))


def _usage_total(entries: Sequence[Record]) -> str | None:
    totals = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    cost = 0.0
    for message in _assistant_messages(entries):
        usage = message.get("usage") if isinstance(message.get("usage"), dict) else {}
        for key in totals:
            totals[key] += usage[key] if isinstance(usage.get(key), int) else 0
        price = usage.get("cost")
        cost += price["total"] if isinstance(price, dict) and isinstance(price.get("total"), (int, float)) else 0
    if not any(totals.values()):
        return None
    text = f"{totals['input']:,} in, {totals['output']:,} out"
    if totals["cacheRead"] or totals["cacheWrite"]:
        text += f", {totals['cacheRead']:,} cache read, {totals['cacheWrite']:,} cache write"
    return text + (f", ${cost:.4f}" if cost else "")
