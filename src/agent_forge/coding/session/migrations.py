"""Upgrades of old session file versions to the current one (3), applied in memory to the parsed lines.

Versions (reference docs, `session-format.md`, Session Version): 1 is a linear list of entries without `id` or
`parentId` (a header without `version` is version 1) whose compactions point at the first kept entry by its
line index (`firstKeptEntryIndex`, the header being index 0); 2 added the `id`/`parentId` tree; 3 renamed the
message role `hookMessage` to `custom`.

Migration is deterministic: loading the same file twice gives the same entries, ids included, so entry ids
are durable cursors (`get_entries since`, fork ids) even before the migrated file is written back.
"""

from __future__ import annotations

from collections.abc import Container
from typing import TYPE_CHECKING

from .entries import CURRENT_VERSION

if TYPE_CHECKING:
    from ...ai.types import JsonValue


def check_version(header: dict[str, JsonValue]) -> int:
    """The header's format version (no `version` field: 1). Raises ValueError for a version that is not a
    positive integer or is newer than this program understands."""
    version = header.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ValueError(f"unsupported version {version!r} (supported: 1 to {CURRENT_VERSION})")
    if version > CURRENT_VERSION:
        raise ValueError(f"version {version} is newer than supported ({CURRENT_VERSION}): it was made by a newer "
                         "agent-forge")
    return version


def migrate(header: dict[str, JsonValue], objects: list[dict[str, JsonValue]]) -> int | None:
    """Bring `header` and the JSON objects after it (in file order) to the current version, in place.

    Returns the file's original version when it was older, None when it was current. Raises ValueError as
    `check_version` does.
    """
    version = check_version(header)
    if version == CURRENT_VERSION:
        return None
    if version < 2:
        _v1_to_v2(objects, str(header.get("id", "")))
    _v2_to_v3(objects)
    header["version"] = CURRENT_VERSION
    return version


def _is_v1_entry(obj: dict[str, JsonValue]) -> bool:
    return isinstance(obj.get("type"), str) and obj["type"] != "session"


def _v1_to_v2(objects: list[dict[str, JsonValue]], session_id: str) -> None:
    """Chain the entries in file order, giving each an id derived from the session id and its position (an
    id already present is kept)."""
    taken = {obj["id"] for obj in objects if isinstance(obj.get("id"), str)}
    previous: str | None = None
    for index, obj in enumerate(objects):
        if not _is_v1_entry(obj):
            continue
        if not isinstance(obj.get("id"), str):
            obj["id"] = derived_entry_id(session_id, index, taken)
            taken.add(obj["id"])
        obj["parentId"] = previous
        previous = obj["id"]
    for obj in objects:
        if obj.get("type") == "compaction" and "firstKeptEntryIndex" in obj:
            _index_to_id(obj, objects)


def derived_entry_id(session_id: str, index: int, taken: Container[str]) -> str:
    """8 lowercase hex digits of SHA-256(`<session id>:<index>:<attempt>`) for the first attempt (0, 1, ...)
    whose id is not in `taken`: the same file always migrates to the same ids."""
    import hashlib  # only a version-1 file needs it: start-up does not

    attempt = 0
    while True:
        candidate = hashlib.sha256(f"{session_id}:{index}:{attempt}".encode()).hexdigest()[:8]
        if candidate not in taken:
            return candidate
        attempt += 1


def _index_to_id(compaction: dict[str, JsonValue], objects: list[dict[str, JsonValue]]) -> None:
    """`firstKeptEntryIndex` counts lines from the header (index 0); an index that names no entry keeps
    nothing from before the compaction (its own id, as a retain-none compaction does)."""
    index = compaction.pop("firstKeptEntryIndex")
    target = objects[index - 1] if isinstance(index, int) and 1 <= index <= len(objects) else None
    if target is not None and _is_v1_entry(target):
        compaction["firstKeptEntryId"] = target["id"]
    elif "firstKeptEntryId" not in compaction:
        compaction["firstKeptEntryId"] = compaction["id"]


def _v2_to_v3(objects: list[dict[str, JsonValue]]) -> None:
    for obj in objects:
        message = obj.get("message") if obj.get("type") == "message" else None
        if isinstance(message, dict) and message.get("role") == "hookMessage":
            message["role"] = "custom"
