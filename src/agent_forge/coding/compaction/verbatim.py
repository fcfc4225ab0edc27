"""The verbatim-line compactor (seed 003, `compaction.strategy: "verbatim-lines"`): delete lines, rewrite nothing.

The active context except its newest `preserve_recent` context-visible messages is rendered as transcript lines
(`transcript.render_message`, tool output whole) and numbered; the model answers with `start,end` deletion
records; the kept lines are rebuilt mechanically, each run of deleted lines becoming `(filtered N lines)`.

Rungs (`rung` in the result), from best to last resort:
- `planned`: the answer's ranges were valid as given;
- `repaired`: the answer needed repair (reversed or out-of-range bounds, overlaps, prose or code fences around
  the records, other separators) and still named lines to delete;
- `mechanical`: the answer named nothing usable (or deleted every line), or the numbered transcript would not
  fit the model's window: the oldest lines are deleted up to the target ratio, keeping every user request line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...ai.types import Model
from ...ai.usage import empty_usage
from ..config_values import is_count, is_fraction
from ..session.context import entry_messages
from ..session.projection import context_entries, latest_compaction
from ..session.entries import AgentMessage, CompactionEntry, SessionEntry
from ..errors import CompactionError
from ..safe_read import exists
from .cut_points import NOTHING_TO_COMPACT, check_new_messages
from .line_ranges import Line, Range, mechanical_ranges, parse_ranges, rebuild, usable
from .prompts import VERBATIM_PROMPT_VERSION, VERBATIM_SYSTEM_PROMPT, verbatim_prompt
from .request import Requester
from .tokens import estimate_messages, output_budget, prompt_char_budget, text_tokens
from .transcript import is_context_visible, render_message

if TYPE_CHECKING:
    from ..settings import Settings
    from ..session.store import SessionStore

STRATEGY = "verbatim-lines"
DEFAULT_COMPRESSION_RATIO = 0.5
DEFAULT_PRESERVE_RECENT = 2
QUERY_CHARS = 500
USER_LABEL = "[User]: "


@dataclass(frozen=True)
class VerbatimParams:
    """`compression_ratio`: share of the numbered lines to delete (0-1); `preserve_recent`: newest
    context-visible messages kept out of the transcript (0 sends everything)."""

    compression_ratio: float = DEFAULT_COMPRESSION_RATIO
    preserve_recent: int = DEFAULT_PRESERVE_RECENT

    @classmethod
    def from_settings(cls, settings: Settings) -> VerbatimParams:
        """Read `compaction.compressionRatio` and `compaction.preserveRecent`; invalid values use defaults."""
        ratio = settings.get("compaction.compressionRatio", DEFAULT_COMPRESSION_RATIO)
        keep = settings.get("compaction.preserveRecent", DEFAULT_PRESERVE_RECENT)
        return cls(compression_ratio=float(ratio) if is_fraction(ratio) else DEFAULT_COMPRESSION_RATIO,
                   preserve_recent=int(keep) if is_count(keep) else DEFAULT_PRESERVE_RECENT)


# -- splitting the context -------------------------------------------------------------------------------------


@dataclass
class Split:
    """The active context divided into the part numbered for the model and the preserved tail."""

    head: list[AgentMessage]
    tail: list[AgentMessage]
    first_kept_entry_id: str | None


def split_context(path: list[SessionEntry], preserve_recent: int) -> Split:
    """Split the context of `path` (root → leaf). The tail holds the newest `preserve_recent` visible messages
    added since the latest compaction (fewer when fewer were added: the context is rebuilt from the latest
    compaction only). Raises `CompactionError` when nothing new was added since that compaction."""
    compaction = latest_compaction(path)
    check_new_messages(path, compaction)
    after = {e["id"] for e in path[compaction + 1:]} if compaction is not None else None
    pairs = [(entry["id"], message) for entry in context_entries(path) for message in entry_messages(entry)
             if is_context_visible(message)]
    count = 0
    for entry_id, _ in reversed(pairs):
        if count == preserve_recent or (after is not None and entry_id not in after):
            break
        count += 1
    cut = len(pairs) - count
    return Split(head=[m for _, m in pairs[:cut]], tail=[m for _, m in pairs[cut:]],
                 first_kept_entry_id=pairs[cut][0] if count else None)


def transcript_lines(messages: list[AgentMessage]) -> list[Line]:
    lines: list[Line] = []
    for message in messages:
        text = render_message(message, tool_result_chars=None)
        if not text:
            continue
        rows = text.split("\n")
        if message.get("role") == "compactionSummary":  # an earlier compacted text keeps its requests too
            lines.extend(Line(row, protected=row.startswith(USER_LABEL)) for row in rows)
            continue
        lines.append(Line(rows[0], protected=message.get("role") == "user"))
        lines.extend(Line(row) for row in rows[1:])
    return lines


def numbered(lines: list[Line]) -> str:
    return "\n".join(f"{n}| {line.text}" for n, line in enumerate(lines, 1))


# -- the compaction --------------------------------------------------------------------------------------------


@dataclass
class VerbatimPlan:
    """A finished verbatim-line compaction, before its entry is written."""

    split: Split
    compacted_text: str
    parameters: dict[str, Any]
    rung: str
    ranges: list[Range]
    stats: dict[str, int]
    usage: dict[str, Any]
    tokens_before: int
    backup_path: str | None = None

    def before_write(self, session_file: Path | None) -> None:
        """Copy the session file beside itself (`<file>.<UTC time>.compact.bak`) before the entry is appended.
        Raises `CompactionError` when the copy cannot be written; an in-memory session has no backup."""
        if session_file is None or not exists(session_file):
            return
        from ..session.durable import copy_private
        from ..session.reading import SessionFileError

        now = datetime.now(timezone.utc)
        target = session_file.with_name(
            f"{session_file.name}.{now.strftime('%Y-%m-%dT%H-%M-%S')}-{now.microsecond // 1000:03d}Z.compact.bak")
        try:
            copy_private(session_file, target)  # private like the session file; nothing left when it fails
        except OSError as exc:  # the OS's words, as every other message gives them (not "[Errno 28] ...")
            raise CompactionError(f"Could not write the session backup {target}: {exc.strerror or exc}") from None
        except SessionFileError as exc:
            raise CompactionError(f"Could not write the session backup {target}: {exc}") from None
        self.backup_path = str(target)

    def append_to(self, store: SessionStore) -> CompactionEntry:
        """Append the `compaction` entry to `store`; `summary` holds the compacted text so the context rebuild
        uses it."""
        details = {"strategy": STRATEGY, "promptVersion": VERBATIM_PROMPT_VERSION, "parameters": self.parameters,
                   "rung": self.rung, "stats": self.stats, "ranges": [list(r) for r in self.ranges],
                   "backupPath": self.backup_path}
        return store.append_compaction(self.compacted_text, self.split.first_kept_entry_id, self.tokens_before,
                                       usage=self.usage, details=details)

    def result(self, estimated_tokens_after: int) -> dict[str, object]:
        """The `compact` response data / `compaction_end.result` of seed 003 (plus `usage`)."""
        return {"compactedText": self.compacted_text, "firstKeptEntryId": self.split.first_kept_entry_id,
                "tokensBefore": self.tokens_before, "promptVersion": VERBATIM_PROMPT_VERSION,
                "parameters": self.parameters, "rung": self.rung, "stats": self.stats,
                "backupPath": self.backup_path, "usage": self.usage}


def check_plan(path: list[SessionEntry], params: VerbatimParams) -> None:
    """Raise `CompactionError` when a verbatim compaction of `path` would have no line to number (nothing new
    since the latest compaction, or nothing outside the preserved tail). Stops at the first line found."""
    if not any(render_message(m, tool_result_chars=0) for m in split_context(path, params.preserve_recent).head):
        raise CompactionError(NOTHING_TO_COMPACT)


async def compact_verbatim(path: list[SessionEntry], *, requester: Requester, model: Model,
                           params: VerbatimParams, tokens_before: int, overhead: int,
                           focus: str | None = None) -> VerbatimPlan:
    """Plan a verbatim-line compaction of `path` and ask the model for deletions. Raises `CompactionError`."""
    split = split_context(path, params.preserve_recent)
    lines = transcript_lines(split.head)
    if not lines:
        raise CompactionError(NOTHING_TO_COMPACT)
    query = focus or _latest_request(split.head + split.tail)
    parameters = {"compression_ratio": params.compression_ratio, "preserve_recent": params.preserve_recent,
                  "query": query}
    ranges, rung, usage = await _choose(lines, requester, model, params.compression_ratio, query)
    if not ranges:
        raise CompactionError(NOTHING_TO_COMPACT)
    text = rebuild(lines, ranges)
    after = text_tokens(text) + estimate_messages(split.tail) + overhead
    stats = _stats(len(lines), ranges, tokens_before, after)
    return VerbatimPlan(split=split, compacted_text=text, parameters=parameters, rung=rung, ranges=ranges,
                        stats=stats, usage=usage, tokens_before=tokens_before)


async def _choose(lines: list[Line], requester: Requester, model: Model, ratio: float,
                  query: str) -> tuple[list[Range], str, dict[str, Any]]:
    """(ranges, rung, usage): the model's ranges when usable, else the mechanical rung."""
    prompt = verbatim_prompt(numbered_transcript=numbered(lines), line_count=len(lines),
                             delete_percent=round(ratio * 100), query=query)
    answer_room = min(int(model.get("maxTokens") or 8192), 8 * len(lines) + 256)
    if len(prompt) + len(VERBATIM_SYSTEM_PROMPT) > prompt_char_budget(model, answer_room):
        return mechanical_ranges(lines, ratio), "mechanical", empty_usage()
    answer, usage = await requester.complete(VERBATIM_SYSTEM_PROMPT, prompt,
                                             min(answer_room, output_budget(model, text_tokens(prompt))))
    parsed = parse_ranges(answer, len(lines))
    if not usable(parsed, len(lines)):
        return mechanical_ranges(lines, ratio), "mechanical", usage
    return parsed.ranges, "repaired" if parsed.repaired else "planned", usage


def _latest_request(messages: list[AgentMessage]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            text = render_message(message).removeprefix(USER_LABEL).strip()
            if text:
                return text[:QUERY_CHARS]
    return "(not stated)"


def _stats(line_count: int, ranges: list[Range], tokens_before: int, tokens_after: int) -> dict[str, int]:
    deleted = sum(end - start + 1 for start, end in ranges)
    reduction = math.floor(100 * (tokens_before - tokens_after) / tokens_before) if tokens_before > 0 else 0
    return {"linesBefore": line_count, "linesDeleted": deleted, "linesKept": line_count - deleted,
            "rangeCount": len(ranges), "tokensBefore": tokens_before, "tokensAfter": tokens_after,
            "percentReduction": max(0, reduction)}
