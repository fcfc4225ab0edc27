"""Session entries (session-format.md, Entry Types) as HTML: messages as cards, settings changes as one-line
events, unknown types with their fields as JSON.

A renderer that fails on a malformed entry never loses it: the entry is shown as raw JSON instead.
"""

from __future__ import annotations

from typing import Callable

from ..session.entries import QUEUE_PENDING, QUEUE_SETTLED, USER_BASH_PENDING
from .blocks import collapsible, note, raw_json
from .context import Card, Record, RenderContext
from .markdown import render_markdown
from .messages import content, message_card
from .text import anchor_id, esc

_BASE_FIELDS = ("type", "id", "parentId", "timestamp")


def render_entry(entry: Record, context: RenderContext) -> str:
    """The HTML of one entry, with an anchor `id` (see `text.anchor_id`) and the entry id shown."""
    try:
        event = _EVENTS.get(entry.get("type"))
        if event is not None:
            return _event_line(entry, event(entry), context)
        return _card_html(entry, _card(entry, context), context)
    except Exception as exc:  # a malformed entry must still appear, and never stop the export
        card = Card("unknown", f"Entry that could not be rendered ({type(exc).__name__})", raw_json(entry))
        return _card_html(entry, card, context)


def _card(entry: Record, context: RenderContext) -> Card:
    kind = entry.get("type")
    if kind == "message":
        return message_card(entry.get("message"), context)
    render = _CARDS.get(kind) if isinstance(kind, str) else None
    if render is not None:
        return render(entry)
    extra = {key: value for key, value in entry.items() if key not in _BASE_FIELDS}
    return Card("unknown", f"Entry: {kind}", raw_json(extra))


def _card_html(entry: Record, card: Card, context: RenderContext) -> str:
    leaf = entry.get("id") == context.leaf_id
    classes = f"entry {card.kind}" + (" leaf" if leaf else "")
    badge = '<span class="badge">current leaf</span>' if leaf else ""
    return (f'<section class="{esc(classes)}" id="{anchor_id(entry.get("id"))}">'
            f'<header class="entry-head"><span class="entry-title">{esc(card.title)}</span>{card.meta}{badge}'
            f'{_labels(entry, context)}{_id_link(entry)}{_time(entry)}</header>'
            f'<div class="entry-body">{card.body}</div></section>')


def _event_line(entry: Record, text: str, context: RenderContext) -> str:
    leaf = " leaf" if entry.get("id") == context.leaf_id else ""
    return (f'<div class="entry event{leaf}" id="{anchor_id(entry.get("id"))}"><span>{esc(text)}</span>'
            f'{_labels(entry, context)}{_id_link(entry)}{_time(entry)}</div>')


def _labels(entry: Record, context: RenderContext) -> str:
    label = context.labels.get(entry.get("id"))  # type: ignore[arg-type]
    return f'<span class="label">{esc(label)}</span>' if label else ""


def _id_link(entry: Record) -> str:
    return f'<a class="entry-id" href="#{anchor_id(entry.get("id"))}">#{esc(entry.get("id"))}</a>'


def _time(entry: Record) -> str:
    stamp = entry.get("timestamp")
    return f'<time>{esc(stamp)}</time>' if isinstance(stamp, str) else ""


# --- entry types ----------------------------------------------------------------------------------------


def _model_change(entry: Record) -> str:
    return f"Model: {entry.get('provider', '?')}/{entry.get('modelId', '?')}"


def _thinking_level(entry: Record) -> str:
    return f"Thinking level: {entry.get('thinkingLevel', '?')}"


def _session_info(entry: Record) -> str:
    name = entry.get("name")
    return f"Session name: {name}" if isinstance(name, str) and name.strip() else "Session name cleared"


def _label(entry: Record) -> str:
    label = entry.get("label")
    target = entry.get("targetId", "?")
    return f"Label on #{target}: {label}" if isinstance(label, str) and label else f"Label on #{target} cleared"


def _context_window(entry: Record) -> str:
    return f"Context window: {entry.get('contextWindow', '?')} tokens"


_EVENTS: dict[object, Callable[[Record], str]] = {
    "model_change": _model_change,
    "thinking_level_change": _thinking_level,
    "session_info": _session_info,
    "label": _label,
    "context_window_change": _context_window,
}
"""Entry types shown as one line of text."""


_AGENT_STATE = {  # the agent's own custom entries (`coding/queue_journal.py`)
    QUEUE_PENDING: "Message queued (kept until it is delivered or dropped)",
    QUEUE_SETTLED: "Queued messages dropped",
}


def _custom(entry: Record) -> Card:
    body = collapsible("Data", raw_json(entry.get("data"))) if "data" in entry else note("(no data)")
    if entry.get("customType") == USER_BASH_PENDING:  # the agent's own: its message follows once the run settled
        return Card("custom-state", "User command finished during a run (held until the run ended)", body)
    if entry.get("customType") in _AGENT_STATE:
        return Card("custom-state", _AGENT_STATE[entry["customType"]], body)
    return Card("custom-state", f"Plugin state: {entry.get('customType', '?')}", body)


def _custom_message(entry: Record) -> Card:
    body = content(entry.get("content", ""))
    if entry.get("display") is False:
        body += note("Hidden in the terminal view.")
    return Card("custom", f"Plugin message: {entry.get('customType', '?')}", body)


def _compaction(entry: Record) -> Card:
    body = render_markdown(str(entry.get("summary", "")))
    kept = entry.get("firstKeptEntryId")
    facts = [f"{entry['tokensBefore']:,} tokens before" if isinstance(entry.get("tokensBefore"), int) else "",
             f"kept from #{kept}" if isinstance(kept, str) else ""]
    if any(facts):
        body += note(" · ".join(fact for fact in facts if fact))
    return Card("summary", "Compaction", body)


def _branch_summary(entry: Record) -> Card:
    origin = entry.get("fromId")
    body = render_markdown(str(entry.get("summary", "")))
    if isinstance(origin, str):
        body += note(f"Summary of the branch that ended at #{origin}")
    return Card("summary", "Branch summary", body)


_CARDS: dict[str, Callable[[Record], Card]] = {
    "custom": _custom,
    "custom_message": _custom_message,
    "compaction": _compaction,
    "branch_summary": _branch_summary,
}
"""Entry types other than `message` shown as cards."""
