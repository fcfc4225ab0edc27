"""Moving the active leaf to another point of the session tree, optionally summarising the branch left behind.

Reference `compaction.md`, "Branch summarization": the abandoned entries are those of the old branch after the
deepest entry it shares with the target's branch. With `summarize=True` and messages among them, the session's
model writes a note about them (retried like compaction summaries, reported with `source: "branchSummary"`),
stored as a `branch_summary` entry `{fromId, summary, usage, details{readFiles, modifiedFiles, promptVersion}}`
appended as a child of the target, so the next model call sees it and a resumed session continues there.
Without a summary the move is in memory only (a reopened file continues at its last entry).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ..paths import path_text
from ..session.context import entry_messages
from ..session.entries import AgentMessage, SessionEntry
from ..errors import AbortedError, CommandError, CompactionError, SessionFileError
from .prompts import BRANCH_SUMMARY_SYSTEM_PROMPT, SUMMARY_PROMPT_VERSION, branch_summary_prompt
from .tokens import answer_reserve, output_budget, prompt_char_budget, text_tokens
from .transcript import file_details, is_context_visible, keep_tail, serialize, with_file_lists

if TYPE_CHECKING:
    from ...agent.agent import Agent
    from ..session.store import SessionStore
    from .controller import CompactionController

BUSY = "Cannot move in the session tree while the agent is busy"
ABORTED = "Branch summary aborted"


def abandoned_entries(old_path: list[SessionEntry], target_path: list[SessionEntry]) -> list[SessionEntry]:
    """The entries of `old_path` after the deepest one it shares with `target_path` (both root → leaf)."""
    shared = {entry["id"] for entry in target_path}
    index = len(old_path)
    while index > 0 and old_path[index - 1]["id"] not in shared:
        index -= 1
    return old_path[index:]


async def navigate_tree(store: SessionStore, agent: Agent, compaction: CompactionController,
                        target_id: str | None, *, busy: bool, summarize: bool = False,
                        custom_instructions: str | None = None) -> dict[str, Any]:
    """Make `target_id` the leaf of `store` (None: before the first entry, so the next one is a new root) and
    `agent`'s messages its branch's context. Returns `{"cancelled": False, "summaryEntry": entry or None}`.
    Raises `CommandError` while a run (`busy`) or compaction is going on, for an unknown id, and when the summary
    fails, `AbortedError` when it is aborted (the leaf is then unchanged). The summary runs as `compaction`'s
    task, so `abort` cancels it."""
    if busy or compaction.is_compacting:
        raise CommandError(BUSY)
    try:
        target_path = store.branch(target_id) if target_id is not None else []
    except ValueError:
        raise CommandError(f"Entry not found: {path_text(target_id)}") from None
    old_leaf = store.leaf_id
    abandoned = abandoned_entries(store.branch(), target_path) if target_id != old_leaf else []
    summarized = summarize and abandoned
    fields = await _summary_fields(agent, compaction, abandoned, custom_instructions) if summarized else None
    store.set_leaf(target_id)
    try:
        entry = store.append_branch_summary(old_leaf, fields["summary"], usage=fields["usage"],
                                            details=fields["details"]) if fields else None
    except (SessionFileError, OSError, ValueError) as exc:  # stay where we were
        store.set_leaf(old_leaf)
        raise CommandError(f"Could not write the session file: {exc}") from None
    agent.messages[:] = store.build_context().messages
    return {"cancelled": False, "summaryEntry": entry}


async def _summary_fields(agent: Agent, compaction: CompactionController, abandoned: list[SessionEntry],
                          focus: str | None) -> dict[str, Any] | None:
    """`{summary, usage, details}` for the abandoned entries; None when they hold no message for the model."""
    messages = [m for entry in abandoned for m in entry_messages(entry) if is_context_visible(m)]
    model = agent.model
    if not messages or model is None:
        return None
    try:
        return await compaction.run_guarded(_summarize(compaction, model, messages, abandoned, focus))
    except asyncio.CancelledError:
        raise AbortedError(ABORTED) from None
    except Exception as exc:  # CompactionError, or a provider bug: the move does not happen
        detail = str(exc) if isinstance(exc, CompactionError) else f"{type(exc).__name__}: {exc}"
        raise CommandError(f"Branch summary failed: {detail}") from None


async def _summarize(compaction: CompactionController, model: dict[str, Any], messages: list[AgentMessage],
                     abandoned: list[SessionEntry], focus: str | None) -> dict[str, Any]:
    budget = prompt_char_budget(model, reserve_output=answer_reserve(model))
    prompt = branch_summary_prompt(conversation=keep_tail(serialize(messages), budget), focus=focus)
    requester = compaction.requester(model, source="branchSummary")
    text, usage = await requester.complete(BRANCH_SUMMARY_SYSTEM_PROMPT, prompt,
                                           output_budget(model, text_tokens(BRANCH_SUMMARY_SYSTEM_PROMPT + prompt)))
    files = file_details(messages, _carried_files(abandoned))
    return {"summary": with_file_lists(text, files), "usage": usage,
            "details": {**files, "promptVersion": SUMMARY_PROMPT_VERSION}}


def _carried_files(abandoned: list[SessionEntry]) -> dict[str, list[str]]:
    """File lists of the branch summaries among the abandoned entries (nested summaries carry them on)."""
    read: list[str] = []
    modified: list[str] = []
    for entry in abandoned:
        details = entry.get("details") if entry["type"] == "branch_summary" else None
        if isinstance(details, dict):
            read += [p for p in details.get("readFiles") or [] if isinstance(p, str)]
            modified += [p for p in details.get("modifiedFiles") or [] if isinstance(p, str)]
    return {"readFiles": read, "modifiedFiles": modified}
