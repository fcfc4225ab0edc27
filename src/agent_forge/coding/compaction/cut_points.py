"""Where a summary compaction cuts the active branch: what is condensed, what stays verbatim.

Rules (reference `compaction.md`, "How it works", "Cut point rules"):
- The span starts at the previous compaction's kept boundary (`firstKeptEntryId`), so messages an earlier
  compaction kept are condensed again together with the earlier summary; the session start without one.
- Walking back from the leaf, entries are kept until their chars/4 estimates reach `keepRecentTokens`; the cut
  then moves forward to the nearest valid cut point: a user, assistant, bashExecution or custom message, a
  `custom_message` or a `branch_summary`, never a tool result (it must stay with its call). The entry that
  reaches the budget is kept, unless it alone is larger than the budget and belongs to an earlier turn than
  the latest user message: then the cut goes past it (see `_user_after`).
- A cut at anything but a user message splits a turn: the turn's beginning (its user message up to the cut) is
  condensed separately as the request in progress.
- The cut never goes back past the previous compaction entry: the context is rebuilt from the latest
  compaction only (`session.projection.context_entries`), which would otherwise replay the older summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..session.context import entry_messages
from ..session.entries import AgentMessage, SessionEntry
from ..session.projection import latest_compaction
from ..session.stats import estimate_tokens
from ..errors import CompactionError

NOTHING_TO_COMPACT = "Nothing to compact (session too small)"
ALREADY_COMPACTED = "Already compacted"


@dataclass
class Preparation:
    """The plan of one summary compaction.

    `history`: messages condensed in full; `request_start`: the beginning of a split turn (empty when the cut is
    at a user message); `kept`: messages from the cut to the leaf; `first_kept_entry_id`: the cut entry;
    `previous_summary` / `previous_details`: those of the compaction being superseded, if any.
    """

    first_kept_entry_id: str
    history: list[AgentMessage] = field(default_factory=list)
    request_start: list[AgentMessage] = field(default_factory=list)
    kept: list[AgentMessage] = field(default_factory=list)
    previous_summary: str | None = None
    previous_details: Any = None


def span_start(path: list[SessionEntry], compaction: int | None) -> int:
    """First index a new compaction may condense: the previous compaction's kept boundary, else the entry after
    that compaction, else 0."""
    if compaction is None:
        return 0
    first_kept = path[compaction].get("firstKeptEntryId")
    return next((i for i in range(compaction) if path[i]["id"] == first_kept), compaction + 1)


def check_new_messages(path: list[SessionEntry], compaction: int | None) -> None:
    """Raise `CompactionError(ALREADY_COMPACTED)` when nothing reaching the model was added since the latest
    compaction."""
    if compaction is not None and not any(_messages(e) for e in path[compaction + 1:]):
        raise CompactionError(ALREADY_COMPACTED)


def prepare(path: list[SessionEntry], keep_recent_tokens: int) -> Preparation:
    """Plan a summary compaction of `path` (root → leaf). Raises `CompactionError` when there is nothing new
    since the latest compaction or nothing old enough to condense."""
    compaction = latest_compaction(path)
    check_new_messages(path, compaction)
    start = span_start(path, compaction)
    floor = start if compaction is None else compaction + 1
    candidates = [i for i in range(start, len(path)) if i != compaction and _messages(path[i])]
    cut = _cut_index(path, candidates, keep_recent_tokens, floor)
    if cut is None:
        raise CompactionError(NOTHING_TO_COMPACT)
    turn_start = _turn_start(path, candidates, cut)
    plan = Preparation(first_kept_entry_id=path[cut]["id"],
                       history=_collect(path, candidates, start, turn_start),
                       request_start=_collect(path, candidates, turn_start, cut) if turn_start < cut else [],
                       kept=_collect(path, candidates, cut, len(path)))
    if not plan.history and not plan.request_start:
        raise CompactionError(NOTHING_TO_COMPACT)
    if compaction is not None:
        plan.previous_summary = path[compaction].get("summary") or None
        plan.previous_details = path[compaction].get("details")
    return plan


def _cut_index(path: list[SessionEntry], candidates: list[int], keep_tokens: int, floor: int) -> int | None:
    """The entry the kept part starts at, or None when the branch has no valid cut after `floor`."""
    valid = [i for i in candidates if i >= floor and is_cut_point(path[i])]
    if not valid:
        return None
    kept = 0
    reached = candidates[0]
    for index in reversed(candidates):
        size = sum(estimate_tokens(m) for m in _messages(path[index]))
        kept += size
        if kept >= keep_tokens:
            reached = index + 1 if size > keep_tokens and _user_after(path, candidates, index) else index
            break
    later = [i for i in valid if i >= reached]
    return later[0] if later else valid[-1]  # only tool results after the budget point: keep a little more


def _user_after(path: list[SessionEntry], candidates: list[int], index: int) -> bool:
    """Is there a user message after `index`? A message larger than the whole kept budget in an earlier turn
    is condensed rather than kept: kept, it could make the context overflow again and again (a pasted log
    on a small local model), while the request being answered now always stays word for word."""
    return any(_is_user(path[i]) for i in candidates if i > index)


def is_cut_point(entry: SessionEntry) -> bool:
    """May the kept part start at this entry? Message entries of user, assistant, bashExecution and custom
    messages, and `custom_message` / `branch_summary` entries; never a tool result."""
    if entry["type"] in ("custom_message", "branch_summary"):
        return True
    message = entry.get("message") if entry["type"] == "message" else None
    return isinstance(message, dict) and message.get("role") in ("user", "assistant", "bashExecution", "custom")


def _turn_start(path: list[SessionEntry], candidates: list[int], cut: int) -> int:
    """Index of the user message opening the turn the cut falls in; `cut` itself when it is a user message or
    no user message precedes it in the span."""
    for index in reversed([i for i in candidates if i <= cut]):
        if _is_user(path[index]):
            return index
    return cut


def _is_user(entry: SessionEntry) -> bool:
    message = entry.get("message") if entry["type"] == "message" else None
    return isinstance(message, dict) and message.get("role") == "user"


def _collect(path: list[SessionEntry], candidates: list[int], start: int, end: int) -> list[AgentMessage]:
    return [m for i in candidates if start <= i < end for m in _messages(path[i])]


def _messages(entry: SessionEntry) -> list[AgentMessage]:
    """Context messages of an entry; a compaction contributes none here (its summary travels separately)."""
    return [] if entry["type"] == "compaction" else entry_messages(entry)
