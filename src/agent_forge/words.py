"""Counted nouns in what users and models read: `1 session entry`, `2 session entries`, never `1 entries`."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None, *, grouped: bool = False) -> str:
    """`count` and `noun`, in the plural (`plural`, else `noun` + `s`) unless `count` is 1: `1204 messages`, or
    with `grouped` (the terminal's notes of sizes) `1,204 messages`."""
    number = f"{count:,}" if grouped else str(count)
    return f"{number} {noun if count == 1 else plural or noun + 's'}"


def listed(items: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
