"""Leaf pieces of a card: thinking blocks, images, notes, collapsible sections and raw JSON."""

from __future__ import annotations

import re

from .context import Record
from .highlight import code_block
from .text import as_json, esc

_MIME = re.compile(r"image/[A-Za-z0-9.+-]{1,60}")
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_WHITESPACE = re.compile(r"\s+")


def thinking(item: Record) -> str:
    """A collapsed `<details>` holding the reasoning text as written (no markdown: it is a draft)."""
    text = item.get("thinking")
    if item.get("redacted") or not isinstance(text, str) or not text.strip():
        return '<details class="thinking"><summary>Thinking (redacted)</summary></details>'
    return (f'<details class="thinking"><summary>Thinking</summary>'
            f'<div class="thinking-text">{esc(text)}</div></details>')


def image(item: Record) -> str:
    """An `<img>` with a `data:` URL; a block whose type or data is not a plain base64 image becomes a note."""
    data, mime = item.get("data"), item.get("mimeType")
    if not isinstance(data, str) or not isinstance(mime, str) or not _MIME.fullmatch(mime):
        return note(f"[image that cannot be shown: media type {mime!r}]")
    data = _WHITESPACE.sub("", data)
    if not data or not _BASE64.fullmatch(data):
        return note("[image that cannot be shown: its data is not base64]")
    return (f'<figure class="image"><img alt="image ({esc(mime)})" '
            f'src="data:{esc(mime)};base64,{data}"></figure>')


def note(text: str, kind: str = "note") -> str:
    return f'<div class="{kind}">{esc(text)}</div>'


def raw_json(value: object) -> str:
    """Any value as highlighted JSON: the fallback for shapes this exporter does not know."""
    return code_block(as_json(value), "json")


def collapsible(summary: str, body_html: str, kind: str = "more") -> str:
    return f'<details class="{kind}"><summary>{esc(summary)}</summary>{body_html}</details>'
