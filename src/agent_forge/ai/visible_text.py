"""Showing text from elsewhere (a model, a server, a file) without letting it drive or hide part of a terminal:
every control and invisible character is written as its escape (`\\x1b`, `\\u202e`). The lowest layer holds it so
that the providers' error snippets and the terminal output (`coding/tools/sanitize.terminal_text`) escape alike.
"""

from __future__ import annotations

import re

SHOWN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
"""What is shown escaped: C0 but tab and LF, DEL, C1; the Arabic letter mark, zero-width and direction marks,
bidi embeddings, overrides and isolates, word joiner and invisible operators, the BOM."""


def escape_invisible(text: str) -> str:
    """`text` with each character of `SHOWN` replaced by `\\xNN` (below U+0100) or `\\uNNNN`."""
    return SHOWN.sub(_visible, text) if SHOWN.search(text) else text


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
