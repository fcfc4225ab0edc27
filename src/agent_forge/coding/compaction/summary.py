"""The summary compactor (seed 000, the default strategy): condense the old part of the branch into a note.

The model gets the serialized messages before the cut (`cut_points.prepare`), the earlier note when the branch
was compacted before, the beginning of a turn the cut split, and the user's focus; it answers with a structured
note (`prompts.summary_prompt`). The files read and modified are carried forward in `details` and listed under
the note. Result and entry: `SummaryPlan.result` / `SummaryPlan.append_to`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...ai.types import Model
from .cut_points import Preparation, prepare
from .prompts import SUMMARY_PROMPT_VERSION, SUMMARY_SYSTEM_PROMPT, summary_prompt
from .request import Requester
from .tokens import answer_reserve, output_budget, prompt_char_budget, text_tokens
from .transcript import file_details, keep_tail, serialize, with_file_lists

if TYPE_CHECKING:
    from ..session.entries import CompactionEntry
    from ..session.store import SessionStore

STRATEGY = "summary"


@dataclass
class SummaryPlan:
    """A finished summary compaction, before its entry is written."""

    preparation: Preparation
    summary: str
    usage: dict[str, Any]
    details: dict[str, Any]
    tokens_before: int

    def append_to(self, store: SessionStore) -> CompactionEntry:
        """Append the `compaction` entry `{summary, firstKeptEntryId, tokensBefore, usage, details}` to `store`."""
        return store.append_compaction(self.summary, self.preparation.first_kept_entry_id, self.tokens_before,
                                       usage=self.usage, details=self.details)

    def result(self, estimated_tokens_after: int) -> dict[str, object]:
        """The `compact` response data / `compaction_end.result` (seed 000): `{summary, firstKeptEntryId,
        tokensBefore, estimatedTokensAfter, usage, details}`."""
        return {"summary": self.summary, "firstKeptEntryId": self.preparation.first_kept_entry_id,
                "tokensBefore": self.tokens_before, "estimatedTokensAfter": estimated_tokens_after,
                "usage": self.usage, "details": self.details}


async def summarize(path: list[dict[str, Any]], *, requester: Requester, model: Model, keep_recent_tokens: int,
                    tokens_before: int, focus: str | None = None) -> SummaryPlan:
    """Plan the cut of `path` (the active branch, root → leaf) and ask the model for the note. Raises
    `CompactionError` (nothing to compact, a failed request)."""
    plan = prepare(path, keep_recent_tokens)
    prompt = _prompt(plan, model, focus)
    text, usage = await requester.complete(SUMMARY_SYSTEM_PROMPT, prompt,
                                           output_budget(model, text_tokens(SUMMARY_SYSTEM_PROMPT + prompt)))
    previous = plan.previous_details if _is_own_summary(plan.previous_details) else None
    files = file_details(plan.history + plan.request_start, previous)
    details = {**files, "strategy": STRATEGY, "promptVersion": SUMMARY_PROMPT_VERSION}
    return SummaryPlan(preparation=plan, summary=with_file_lists(text, files), usage=usage, details=details,
                       tokens_before=tokens_before)


def _prompt(plan: Preparation, model: Model, focus: str | None) -> str:
    """The request text; the transcript keeps its newest part when the whole would not fit the window."""
    budget = prompt_char_budget(model, reserve_output=answer_reserve(model))
    request_start = keep_tail(serialize(plan.request_start), budget // 3) if plan.request_start else ""
    conversation = keep_tail(serialize(plan.history), max(1000, budget - len(request_start)))
    return summary_prompt(conversation=conversation, request_start=request_start,
                          earlier_note=plan.previous_summary, focus=focus)


def _is_own_summary(details: Any) -> bool:
    """Only file lists our summary compactor wrote are carried forward (a verbatim compaction has none)."""
    return isinstance(details, dict) and details.get("strategy", STRATEGY) == STRATEGY
