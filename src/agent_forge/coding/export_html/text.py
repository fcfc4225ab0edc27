"""Text hygiene for the export: every string from a session reaches the page through `esc` or a renderer that
escapes (markdown-it with HTML off, pygments)."""

from __future__ import annotations

import hashlib
import html
import json
import re

# C0 controls other than tab/LF/CR, DEL, and lone surrogates (JSON may encode them; UTF-8 cannot).
_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
# Terminal escape sequences in command output: CSI (`ESC [ ... final`) and OSC (`ESC ] ... BEL|ESC \`).
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?")
REPLACEMENT = "\ufffd"


def clean(text: str) -> str:
    """`text` with control characters (except tab, LF, CR) and lone surrogates replaced by U+FFFD, so the page
    is valid UTF-8 and valid HTML whatever the session holds."""
    return _UNSAFE.sub(REPLACEMENT, text)


def strip_ansi(text: str) -> str:
    """`text` without terminal colour and cursor sequences (bash output is stored as the terminal got it)."""
    return _ANSI.sub("", text)


def esc(value: object) -> str:
    """Any value as HTML text, safe in element content and in quoted attribute values."""
    return html.escape(clean(value if isinstance(value, str) else str(value)), quote=True)


def as_json(value: object) -> str:
    """Pretty JSON of any session value (non-JSON values fall back to `str`), for display only."""
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):  # circular structures cannot come from a file, but never crash
        return repr(value)


def snippet(text: str, limit: int = 80) -> str:
    """The first `limit` characters of `text` on one line, with an ellipsis when cut."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def anchor_id(entry_id: object) -> str:
    """A safe HTML id / URL fragment for an entry id: `e-<id>` when the id is plain, else `e-x<hash>`."""
    text = str(entry_id)
    if re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", text):
        return f"e-{text}"
    return "e-x" + hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
