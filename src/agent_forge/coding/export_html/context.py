"""What rendering one entry needs to know about the others: tool calls by id and labels by target."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, NamedTuple, Sequence

Record = Mapping[str, object]
"""An entry, message or block as read from the session file: renderers check each field they read (a malformed
value is shown as JSON, never trusted), so any JSON object, or a typed entry of the store, will do."""


class Card(NamedTuple):
    """One entry as shown: CSS `kind`, plain-text `title`, HTML `body` and HTML `meta` (model, usage, ...)."""

    kind: str
    title: str
    body: str
    meta: str = ""


@dataclass
class RenderContext:
    """`tool_calls`: toolCall block by its id (to pair a result with its arguments); `answered`: the ids of
    calls with a result; `labels`: current label text by target entry id; `leaf_id`: the session's current
    leaf."""

    tool_calls: dict[str, Record] = field(default_factory=dict)
    answered: set[str] = field(default_factory=set)
    labels: dict[str, str] = field(default_factory=dict)
    leaf_id: str | None = None

    @classmethod
    def of_entries(cls, entries: Sequence[Record], leaf_id: str | None) -> RenderContext:
        context = cls(leaf_id=leaf_id)
        for entry in entries:
            if entry.get("type") == "message":
                context._note_calls(entry.get("message"))
            elif entry.get("type") == "label" and isinstance(entry.get("targetId"), str):
                context._note_label(entry["targetId"], entry.get("label"))
        return context

    def _note_calls(self, message: object) -> None:
        if isinstance(message, dict) and message.get("role") == "toolResult":
            self.answered.add(str(message.get("toolCallId")))
        if not isinstance(message, dict) or message.get("role") != "assistant":
            return
        blocks = message.get("content") if isinstance(message.get("content"), list) else []
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "toolCall" and isinstance(block.get("id"), str):
                self.tool_calls[block["id"]] = block

    def _note_label(self, target: str, label: object) -> None:
        # Label entries are appended in order: the last one wins; an empty or missing label clears it.
        if isinstance(label, str) and label.strip():
            self.labels[target] = label
        else:
            self.labels.pop(target, None)
