"""The entries of a branch that feed the model (reference `session-format.md`, buildSessionProjection): from the
latest compaction on, with the latest valid `context_edit` of each target applied. Imported by the context rules
only for a branch holding a compaction or a context edit (`context._built_by_rules`)."""

from __future__ import annotations

from typing import Any, cast

from .entries import CompactionEntry, ContextEditEntry, SessionEntry
from .shapes import is_blocks


def context_entries(path: list[SessionEntry]) -> list[SessionEntry]:
    """The entries of `path` that feed the model, honouring the latest compaction (which comes first) and the
    `context_edit` entries of the whole path (`apply_context_edits`)."""
    return apply_context_edits(_since_compaction(path), path)


def latest_compaction(path: list[SessionEntry]) -> int | None:
    """Index of the newest usable `compaction` entry on `path`, or None. One without a summary text (missing,
    empty, not a string: a hand-edited file; a compaction never writes one) is no compaction: cutting the
    context there would lose what it stood for."""
    return next((i for i in range(len(path) - 1, -1, -1)
                 if path[i]["type"] == "compaction" and has_summary(path[i])), None)


def has_summary(entry: SessionEntry) -> bool:
    """Whether a `compaction` entry holds a summary text that can stand for what it cut."""
    summary = entry.get("summary")
    return isinstance(summary, str) and bool(summary.strip())


def _since_compaction(path: list[SessionEntry]) -> list[SessionEntry]:
    last = latest_compaction(path)
    if last is None:
        return path
    compaction = cast(CompactionEntry, path[last])
    first_kept = compaction.get("firstKeptEntryId")
    start = next((i for i in range(last) if path[i]["id"] == first_kept), last)
    # An older compaction inside the kept range is already folded into this one's summary: skip it.
    kept = [entry for entry in path[start:last] if entry["type"] != "compaction"]
    return [compaction, *kept, *path[last + 1 :]]


def apply_context_edits(selected: list[SessionEntry], path: list[SessionEntry]) -> list[SessionEntry]:
    """`selected` with the latest valid `context_edit` of each target on `path` applied (reference
    `session-format.md`, buildSessionProjection): an omitted target is left out, a replaced one becomes a copy
    whose content is the replacement. Edits of other entry types, unknown ids or malformed replacements are
    ignored (hand-edited files): the original then counts. `selected` is returned as is without edits."""
    edits = context_edits(path)
    if not edits:
        return selected
    projected: list[SessionEntry] = []
    for entry in selected:
        edit = edits.get(entry["id"])
        if edit is None:
            projected.append(entry)
        elif edit["replacement"] is not None:
            projected.append(_replaced(entry, edit["replacement"]))
    return projected


def context_edits(path: list[SessionEntry]) -> dict[str, ContextEditEntry]:
    """Target id → the latest well-formed `context_edit` of that target on `path`; a target must be an earlier
    entry of `path` that contributes context messages (a `message` or `custom_message`)."""
    targets: set[str] = set()
    edits: dict[str, ContextEditEntry] = {}
    for entry in path:
        kind = entry["type"]
        if kind in _EDITABLE:
            targets.add(entry["id"])
        elif kind == "context_edit" and _is_edit(edit := cast(ContextEditEntry, entry), targets):
            edits[edit["targetId"]] = edit
    return edits


def _is_edit(entry: ContextEditEntry, targets: set[str]) -> bool:
    target = entry.get("targetId")
    replacement = entry.get("replacement", _MISSING)
    return (isinstance(target, str) and target in targets
            and (replacement is None or isinstance(replacement, str) or is_blocks(replacement)))


def _replaced(entry: SessionEntry, replacement: str | list[dict[str, Any]]) -> SessionEntry:
    """A copy of `entry` whose message content is `replacement`; text becomes one text block for the roles that
    need a block list (assistant, toolResult: session-format.md)."""
    copy: dict[str, Any] = dict(entry)
    if entry["type"] == "custom_message":
        copy["content"] = replacement
        return copy  # type: ignore[return-value]
    message = entry.get("message")
    if isinstance(message, dict):
        needs_blocks = isinstance(replacement, str) and message.get("role") in ("assistant", "toolResult")
        copy["message"] = {**message, "content": [{"type": "text", "text": replacement}] if needs_blocks
                           else replacement}
    return copy  # type: ignore[return-value]


_EDITABLE = frozenset(("message", "custom_message"))
_MISSING = object()
