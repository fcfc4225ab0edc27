"""The typed `append_*` methods of a session store: one per entry type, each naming its fields (shapes in
`entries.py`). `SessionStore` inherits them; they all go through its `_append`, which writes the line."""

from __future__ import annotations

from typing import Any

from .entries import (
    OMIT, AgentMessage, BranchSummaryEntry, CompactionEntry, ContextEditEntry, ContextReplacement,
    ContextWindowChangeEntry, CustomEntry, CustomMessageEntry, LabelEntry, MessageEntry, ModelChangeEntry,
    SessionInfoEntry, ThinkingLevelChangeEntry, UsageEntry, with_optional)


class EntryAppends:
    """Append methods returning the new entry dict: its `parentId` is the previous leaf and it becomes the leaf.
    They raise TypeError/ValueError when a field is not JSON-serialisable (nothing is added); an entry too large
    for a session line is shrunk first (`fit.py`)."""

    def _append(self, entry_type: str, fields: dict[str, Any]) -> Any:
        raise NotImplementedError  # SessionStore._append

    def append_message(self, message: AgentMessage) -> MessageEntry:
        """Append a `message` entry holding `message` (any AgentMessage dict); the first one creates the file."""
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise ValueError("a session message must be a dict with a string 'role'")
        return self._append("message", {"message": message})

    def append_model_change(self, provider: str, model_id: str) -> ModelChangeEntry:
        """Append `{"type": "model_change", "provider", "modelId"}`: the model selected from here on."""
        return self._append("model_change", {"provider": provider, "modelId": model_id})

    def append_thinking_level_change(self, level: str) -> ThinkingLevelChangeEntry:
        """Append `{"type": "thinking_level_change", "thinkingLevel"}`."""
        return self._append("thinking_level_change", {"thinkingLevel": level})

    def append_context_window_change(self, provider: str, model_id: str,
                                     context_window: int) -> ContextWindowChangeEntry:
        """Append `{"type": "context_window_change", "provider", "modelId", "contextWindow"}` (tokens)."""
        fields = {"provider": provider, "modelId": model_id, "contextWindow": context_window}
        return self._append("context_window_change", fields)

    def append_session_info(self, name: str) -> SessionInfoEntry:
        """Append `{"type": "session_info", "name"}`; a blank name clears the session's name."""
        return self._append("session_info", {"name": name})

    def append_label(self, target_id: str, label: str | None = None) -> LabelEntry:
        """Append `{"type": "label", "targetId", "label"?}`; without `label` it clears the target's label."""
        fields = {"targetId": target_id, **({"label": label} if label is not None else {})}
        return self._append("label", fields)

    def append_custom(self, custom_type: str, data: Any = None) -> CustomEntry:
        """Append plugin state `{"type": "custom", "customType", "data"?}` (`data` left out when None); never
        part of the model context."""
        fields = {"customType": custom_type, **({"data": data} if data is not None else {})}
        return self._append("custom", fields)

    def append_custom_message(self, custom_type: str, content: str | list[dict[str, Any]], display: bool,
                              details: Any = OMIT) -> CustomMessageEntry:
        """Append `{"type": "custom_message", "customType", "content", "display", "details"?}`: a plugin message
        the context holds as a `custom` role message (`details` left out when not given; None is written as null)."""
        fields = {"customType": custom_type, "content": content, "display": display}
        return self._append("custom_message", with_optional(fields, details=details))

    def append_compaction(self, summary: str, first_kept_entry_id: str | None, tokens_before: int, *,
                          usage: dict[str, Any] = OMIT, details: Any = OMIT,
                          from_hook: bool = OMIT) -> CompactionEntry:
        """Append `{"type": "compaction", "summary", "firstKeptEntryId", "tokensBefore", "usage"?, "details"?,
        "fromHook"?}`: from here the branch's context is the summary, then the entries from `first_kept_entry_id`
        on. The optional fields are left out when not given (None is written as null)."""
        fields = {"summary": summary, "firstKeptEntryId": first_kept_entry_id, "tokensBefore": tokens_before}
        optional = with_optional(fields, usage=usage, details=details, fromHook=from_hook)
        return self._append("compaction", optional)

    def append_branch_summary(self, from_id: str | None, summary: str, *, usage: dict[str, Any] = OMIT,
                              details: Any = OMIT, from_hook: bool = OMIT) -> BranchSummaryEntry:
        """Append `{"type": "branch_summary", "fromId", "summary", "usage"?, "details"?, "fromHook"?}`: what the
        branch left at `from_id` held. Optional fields as in `append_compaction`."""
        fields = {"fromId": from_id, "summary": summary}
        optional = with_optional(fields, usage=usage, details=details, fromHook=from_hook)
        return self._append("branch_summary", optional)

    def append_context_edit(self, target_id: str, replacement: ContextReplacement) -> ContextEditEntry:
        """Append `{"type": "context_edit", "targetId", "replacement"}`: from here the branch's context omits
        (`replacement` None) or replaces the content of the entry `target_id` (see `ContextEdit`)."""
        fields = {"targetId": target_id, "replacement": replacement}
        return self._append("context_edit", fields)

    def append_usage(self, kind: str, provider: str, model: str, usage: dict[str, Any]) -> UsageEntry:
        """Append `{"type": "usage", "kind", "provider", "model", "usage"}`: spending outside the conversation."""
        fields = {"kind": kind, "provider": provider, "model": model, "usage": usage}
        return self._append("usage", fields)
