"""Shapes and constructors of the lines of a session file: the header and the tree entries.

Format: JSONL, version 3 (reference docs, `session-format.md`). Line 1 is a `SessionHeader`; every later line is
an entry with `type`, `id` (8 lowercase hex digits, unique within the file), `parentId` (an id or null) and
`timestamp` (ISO 8601 UTC with milliseconds and `Z`), plus the fields of its type. Message timestamps inside
`message` entries stay Unix milliseconds (ai/types.py).
"""

# No `from __future__ import annotations` here: the TypedDicts' field types stay objects; held as text, typing
# would compile each one at import (a `ForwardRef`), and the first `compile` of a process costs ~1.5 ms (issue 15).
import os
import time
from collections.abc import Container
from itertools import repeat
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict

if TYPE_CHECKING:  # `datetime` is imported where a timestamp is parsed: its import (~3.7 M instructions: the
    from datetime import datetime  # pure-Python module runs before the C one replaces it) is not on start-up's path

CURRENT_VERSION = 3

AgentMessage = dict[str, Any]
"""Any message the agent keeps: the ai-layer roles plus `bashExecution`, `custom`, summaries (message-types.md)."""


class SessionHeader(TypedDict):
    type: Literal["session"]
    version: int
    id: str
    timestamp: str
    cwd: str
    parentSession: NotRequired[str]
    recoveredFrom: NotRequired[str]  # a recovery copy (`SessionStore.rescue`): the id of the session it saves


class SessionEntry(TypedDict):
    """Fields every entry has; each type adds its own (below), in the order they are written. Unknown types are
    kept as they are."""

    type: str
    id: str
    parentId: str | None
    timestamp: str


class MessageEntry(SessionEntry):
    message: AgentMessage


class ModelChangeEntry(SessionEntry):
    provider: str
    modelId: str


class ThinkingLevelChangeEntry(SessionEntry):
    thinkingLevel: str


class SessionInfoEntry(SessionEntry):
    name: str


class LabelEntry(SessionEntry):
    """Labels the entry `targetId`; without `label` (or a blank one) it clears that entry's label."""

    targetId: str
    label: NotRequired[str]


class CustomEntry(SessionEntry):
    """Plugin state; never part of the model context."""

    customType: str
    data: NotRequired[Any]


USER_BASH_PENDING = "agent_forge.user_bash_pending"
"""`customType` of the agent's own `custom` entry holding a user `bash` command's message (`data: {"message":
...}`) from its response until the run it finished in settles (`coding/user_bash.py`)."""

QUEUE_PENDING = "agent_forge.queue_pending"
"""`customType` of the agent's own `custom` entry holding a queued steering or follow-up message (`data: {"kind":
"steer" | "followUp", "message": ..., "sessionId": ...}`) from its acceptance until it is delivered (an equal
`message` entry follows) or dropped (`QUEUE_SETTLED`); `coding/queue_journal.py`."""

QUEUE_SETTLED = "agent_forge.queue_settled"
"""`customType` of the agent's own `custom` entry settling queued messages the user dropped (`data: {"ids": [<ids
of QUEUE_PENDING entries>], "reason": "cleared" | "session_change"}`)."""


def holds_custom_type(entries: list[Any], custom_type: str) -> bool:
    """Whether an entry of `entries` (dicts) has `customType` `custom_type`: one pass at C speed (a `map` of
    `dict.get`, ~10 times a generator's), as each resume asks it of every entry before its first answer."""
    return custom_type in map(dict.get, entries, repeat("customType"))


def custom_types(entries: list[Any]) -> list[Any]:
    """The `customType` values of `entries` (dicts) that are set (not None, empty or false), in order: one pass at
    C speed, as `holds_custom_type`, answering it for several types (a file holds few custom entries)."""
    return list(filter(None, map(dict.get, entries, repeat("customType"))))


class CustomMessageEntry(SessionEntry):
    """Plugin message that joins the model context as a `custom` role message."""

    customType: str
    content: str | list[dict[str, Any]]
    display: bool
    details: NotRequired[Any]


class CompactionEntry(SessionEntry):
    """The latest one on a branch replaces the context before `firstKeptEntryId` by `summary`."""

    summary: str
    firstKeptEntryId: str | None
    tokensBefore: int
    usage: NotRequired[dict[str, Any]]
    details: NotRequired[Any]
    fromHook: NotRequired[bool]


class BranchSummaryEntry(SessionEntry):
    """What the branch left at `fromId` (the leaf before a tree move) held, for the branch moved to."""

    fromId: str | None
    summary: str
    usage: NotRequired[dict[str, Any]]
    details: NotRequired[Any]
    fromHook: NotRequired[bool]


class ContextWindowChangeEntry(SessionEntry):
    """The context window (tokens) chosen for the model `provider`/`modelId` (`set_context_window`)."""

    provider: str
    modelId: str
    contextWindow: int


class UsageEntry(SessionEntry):
    """Model usage outside the conversation (`kind`: e.g. `cache_warm`); counted in the session's totals only."""

    kind: str
    provider: str
    model: str
    usage: dict[str, Any]


ContextReplacement = str | list[dict[str, Any]] | None
"""`replacement` of a context edit: None omits the target; text or content blocks replace its `content`."""


class ContextEdit(TypedDict):
    """The fields of a `context_edit` entry (reference `session-format.md`, ContextEditEntry): `targetId` names
    a `message` entry (user, assistant, toolResult, ...) or a `custom_message` entry; `replacement` as
    `ContextReplacement`. Written by `SessionStore.append_context_edit` (`retry.forget_failed_attempt`:
    `replacement: null` hides a failed attempt); read by `session_context.context_entries`."""

    targetId: str
    replacement: ContextReplacement


class ContextEditEntry(SessionEntry, ContextEdit):
    """An append-only edit of one earlier context-producing entry. It changes only the model context built from
    a branch holding it (the latest edit of a target on the branch wins; moving to a point before it shows the
    original again); the target stays unchanged in the file, `get_entries`, exports and the token totals."""


ENTRY_SHAPES: dict[str, type] = {
    "message": MessageEntry, "model_change": ModelChangeEntry, "thinking_level_change": ThinkingLevelChangeEntry,
    "context_window_change": ContextWindowChangeEntry, "session_info": SessionInfoEntry, "label": LabelEntry,
    "custom": CustomEntry, "custom_message": CustomMessageEntry, "compaction": CompactionEntry,
    "branch_summary": BranchSummaryEntry, "context_edit": ContextEditEntry, "usage": UsageEntry,
}
"""Entry `type` → its TypedDict. Writers produce exactly these (`SessionStore.append_<type>`); readers narrow an
entry to the shape of its `type` (`cast`), but still check each field they use: a hand-edited file or another
tool may leave one missing or of the wrong type."""

OMIT: Any = object()
"""Default of an optional entry field: left out of the entry (None is written as null)."""


def with_optional(fields: dict[str, Any], **optional: Any) -> dict[str, Any]:
    """`fields` plus those of `optional` that were given (not `OMIT`), in their order (the order on disk)."""
    fields.update((key, value) for key, value in optional.items() if value is not OMIT)
    return fields


def iso_timestamp(moment: "datetime | None" = None) -> str:
    """`2026-11-30T14:29:15.123Z`: UTC, millisecond precision, `Z` suffix (session-format.md, Entry Base); now
    when `moment` is None (from the clock, without `datetime`)."""
    if moment is None:
        seconds, milliseconds = divmod(time.time_ns() // 1_000_000, 1000)
        return time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(seconds)) + f"{milliseconds:03d}Z"
    from datetime import timezone

    moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_timestamp(text: str) -> "datetime | None":
    """Inverse of `iso_timestamp` (any ISO 8601 form is accepted); None when `text` is not a timestamp."""
    from datetime import datetime, timezone

    try:
        moment = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def timestamp_ms(text: str) -> int:
    """Unix milliseconds of an entry timestamp, 0 when it cannot be parsed."""
    moment = parse_timestamp(text)
    return int(moment.timestamp() * 1000) if moment else 0


def new_entry_id(taken: Container[str]) -> str:
    """8 random lowercase hex digits not in `taken` (ids only need to be unique within one file)."""
    while True:
        candidate = os.urandom(4).hex()
        if candidate not in taken:
            return candidate


def make_header(cwd: str, *, parent_session: str | None = None, session_id: str | None = None) -> SessionHeader:
    """A version-3 header; `session_id` defaults to a fresh uuid4."""
    header: SessionHeader = {
        "type": "session",
        "version": CURRENT_VERSION,
        "id": session_id or uuid4(),
        "timestamp": iso_timestamp(),
        "cwd": cwd,
    }
    if parent_session is not None:
        header["parentSession"] = parent_session
    return header


def make_entry(entry_type: str, entry_id: str, parent_id: str | None, fields: dict[str, Any]) -> SessionEntry:
    """An entry dict with the base fields first (the order they appear in on disk), then `fields`.

    Raises ValueError when `fields` tries to set a base field or `entry_type` is empty or `session`.
    """
    if not entry_type or entry_type == "session":
        raise ValueError(f"invalid session entry type: {entry_type!r}")
    clash = {"type", "id", "parentId", "timestamp"} & fields.keys()
    if clash:
        raise ValueError(f"entry fields may not override base fields: {sorted(clash)}")
    entry: dict[str, Any] = {"type": entry_type, "id": entry_id, "parentId": parent_id, "timestamp": iso_timestamp()}
    entry.update(fields)
    return entry  # type: ignore[return-value]


def is_entry(obj: Any) -> bool:
    """True for a dict shaped like an entry: string `type` (not `session`) and `id`, `parentId` a string or None."""
    return (
        isinstance(obj, dict)
        and isinstance(obj.get("type"), str)
        and obj["type"] != "session"
        and isinstance(obj.get("id"), str)
        and (obj.get("parentId") is None or isinstance(obj.get("parentId"), str))
    )


def is_header(obj: Any) -> bool:
    """True for a dict shaped like a session header: `type: "session"` and a string `id`."""
    return isinstance(obj, dict) and obj.get("type") == "session" and isinstance(obj.get("id"), str)


def uuid4() -> str:
    """A random RFC 9562 version-4 UUID string (the `uuid` module imports `platform`: start-up budget)."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC variant
    text = raw.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"
