"""Counted nouns in what users and models read: `1 session entry`, `2 session entries`, never `1 entries`."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`count` and `noun`, in the plural (`plural`, else `noun` + `s`) unless `count` is 1; thousands are
    grouped (`1,204 messages`)."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"
