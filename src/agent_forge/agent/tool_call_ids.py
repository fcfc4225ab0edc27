"""Tool call ids unique within an assistant message.

A model (or a proxy in front of it) may give two tool calls of one message the same id. Each call's result and
events are matched by id, so the second result would be lost ("No result was recorded for this tool call") and
both calls' events would look like one. When the message ends, later duplicates are renamed deterministically
(`<id>_2`, `<id>_3`, ...; never an id the message already uses), so the same stream always gives the same ids.
"""

from __future__ import annotations

from typing import Any


def make_tool_call_ids_unique(message: dict[str, Any]) -> list[tuple[str, str]]:
    """Rename, in place, each `toolCall` block of `message["content"]` whose `id` an earlier block has; returns
    the `(old, new)` pairs (empty when every id was already unique). Ids that are not strings are left alone."""
    blocks = [b for b in message.get("content") or [] if isinstance(b, dict) and b.get("type") == "toolCall"]
    taken = {b.get("id") for b in blocks}
    seen: set[Any] = set()
    renamed: list[tuple[str, str]] = []
    for block in blocks:
        old = block.get("id")
        if old not in seen or not isinstance(old, str):
            seen.add(old)
            continue
        new = _free_id(old, taken)
        block["id"] = new
        taken.add(new)
        seen.add(new)
        renamed.append((old, new))
    return renamed


def _free_id(base: str, taken: set[Any]) -> str:
    n = 2
    while f"{base}_{n}" in taken:
        n += 1
    return f"{base}_{n}"
