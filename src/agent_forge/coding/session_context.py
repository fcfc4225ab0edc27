"""What the model sees of a session: the messages, model, thinking level and context window of one branch.

Rules (reference docs, `session-format.md`, Context Building): settings come from the whole path root → leaf;
messages come from the path, except that when compactions are on it the latest one replaces everything before
it with its summary: the summary first, then the entries from its `firstKeptEntryId` up to the compaction, then
the entries after it. Summaries become messages of the roles `compactionSummary` and `branchSummary`
(message-types.md); `coding/messages.py` turns them into user messages for the provider.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .session_entries import AgentMessage, SessionEntry, timestamp_ms


@dataclass
class SessionContext:
    """What the next model request needs from the active branch.

    `messages`: AgentMessages root → leaf (message entries' own dicts: do not mutate); `model`:
    `(provider, modelId)` of the latest `model_change` on the branch (without one: of the latest assistant
    message), or None;
    `thinking_level`: latest `thinking_level_change` or None; `context_window`: latest
    `context_window_change.contextWindow` (tokens) or None.
    """

    messages: list[AgentMessage] = field(default_factory=list)
    model: tuple[str, str] | None = None
    thinking_level: str | None = None
    context_window: int | None = None


def build_context(path: list[SessionEntry]) -> SessionContext:
    """The SessionContext of `path` (entries root → leaf, e.g. `SessionStore.branch()`)."""
    context = _settings(path)
    messages: list[AgentMessage] = []
    for entry in context_entries(path):
        if entry["type"] == "message":  # inlined: the common case, run once per entry of a resumed session
            if isinstance(entry.get("message"), dict):
                messages.append(entry["message"])
        else:
            messages += entry_messages(entry)
    context.messages = messages
    return context


def context_entries(path: list[SessionEntry]) -> list[SessionEntry]:
    """The entries of `path` that feed the model, honouring the latest compaction (which comes first)."""
    last = next((i for i in range(len(path) - 1, -1, -1) if path[i]["type"] == "compaction"), None)
    if last is None:
        return path
    compaction = path[last]
    first_kept = compaction.get("firstKeptEntryId")
    start = next((i for i in range(last) if path[i]["id"] == first_kept), last)
    # An older compaction inside the kept range is already folded into this one's summary: skip it.
    kept = [entry for entry in path[start:last] if entry["type"] != "compaction"]
    return [compaction, *kept, *path[last + 1 :]]


def entry_messages(entry: SessionEntry) -> list[AgentMessage]:
    """The context messages one entry contributes (none for settings, labels, custom state, ...)."""
    converter = _CONTEXT_MESSAGES.get(entry["type"])
    return converter(entry) if converter is not None else []


def _settings(path: list[SessionEntry]) -> SessionContext:
    context = SessionContext()
    for entry in path:
        kind = entry["type"]
        if kind == "message":
            continue  # most entries: skip them first
        if kind == "model_change":
            context.model = _model(entry.get("provider"), entry.get("modelId")) or context.model
        elif kind == "thinking_level_change" and isinstance(entry.get("thinkingLevel"), str):
            context.thinking_level = entry["thinkingLevel"]
        elif kind == "context_window_change" and _is_count(entry.get("contextWindow")):
            context.context_window = entry["contextWindow"]
    # The selected model is what model_change records (it may be a router); the model that answered only
    # stands in for files that never recorded one (version 1).
    context.model = context.model or _last_answering_model(path)
    return context


def _last_answering_model(path: list[SessionEntry]) -> tuple[str, str] | None:
    for entry in reversed(path):
        message = entry.get("message") if entry["type"] == "message" else None
        if isinstance(message, dict) and message.get("role") == "assistant":
            found = _model(message.get("provider"), message.get("model"))
            if found:
                return found
    return None


def _model(provider: object, model_id: object) -> tuple[str, str] | None:
    return (provider, model_id) if isinstance(provider, str) and isinstance(model_id, str) else None


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _message_of(entry: SessionEntry) -> list[AgentMessage]:
    message = entry.get("message")
    return [message] if isinstance(message, dict) else []


def _custom_message_of(entry: SessionEntry) -> list[AgentMessage]:
    """`custom_message` entry → `{"role": "custom", customType, content, display, details?, timestamp}`."""
    message: AgentMessage = {
        "role": "custom",
        "customType": entry.get("customType"),
        "content": entry.get("content", ""),
        "display": bool(entry.get("display", True)),
        "timestamp": timestamp_ms(entry.get("timestamp", "")),
    }
    if "details" in entry:
        message["details"] = entry["details"]
    return [message]


def _compaction_summary_of(entry: SessionEntry) -> list[AgentMessage]:
    """`compaction` entry → `{"role": "compactionSummary", summary, tokensBefore, timestamp}`."""
    summary = entry.get("summary")
    if not isinstance(summary, str) or not summary:
        return []
    tokens = entry.get("tokensBefore")
    return [{"role": "compactionSummary", "summary": summary, "tokensBefore": tokens if _is_count(tokens) else 0,
             "timestamp": timestamp_ms(entry.get("timestamp", ""))}]


def _branch_summary_of(entry: SessionEntry) -> list[AgentMessage]:
    """`branch_summary` entry → `{"role": "branchSummary", summary, fromId, timestamp}` (none when empty)."""
    summary = entry.get("summary")
    if not isinstance(summary, str) or not summary:
        return []
    return [{"role": "branchSummary", "summary": summary, "fromId": entry.get("fromId"),
             "timestamp": timestamp_ms(entry.get("timestamp", ""))}]


_CONTEXT_MESSAGES: dict[str, Callable[[SessionEntry], list[AgentMessage]]] = {
    "message": _message_of,
    "custom_message": _custom_message_of,
    "compaction": _compaction_summary_of,
    "branch_summary": _branch_summary_of,
}
"""Entry type → the context messages it contributes; types not listed contribute none."""
