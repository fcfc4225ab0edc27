"""Showing text from elsewhere (a model, a server, a file) without letting it drive or hide part of a terminal:
every control and invisible character is written as its escape (`\\x1b`, `\\u202e`). The lowest layer holds it so
that the providers' error snippets and the terminal output (`coding/tools/sanitize.terminal_text`) escape alike.
"""

from __future__ import annotations

import re

EMOJI = "\u00a9\u00ae\u203c-\u3299\U0001f000-\U0001faff"
"""Pictographs a zero-width joiner may join (©, ®, the symbol blocks, the emoji planes), roughly Unicode's
Extended_Pictographic."""
SHOWN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b\u200c\u200e\u200f\u202a-\u202e\u2060-\u2064"
                   f"\u2066-\u2069\ufeff]|(?<![{EMOJI}\ufe0f])\u200d|\u200d(?![{EMOJI}])")
"""What is shown escaped: C0 but tab and LF, DEL, C1; the Arabic letter mark, zero-width and direction marks,
bidi embeddings, overrides and isolates, word joiner and invisible operators, the BOM. A zero-width joiner is
shown as such only between pictographs (after one or its variation selector, before another: 👨‍👩‍👧, a
joined emoji); elsewhere it hides a join and is escaped. Variation selectors and skin-tone modifiers are never
escaped."""


MAYBE_SHOWN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064"
                         "\u2066-\u2069\ufeff]")
"""`SHOWN`'s characters, every joiner included: one character class, a fast first test (text seldom holds any)."""


def escape_invisible(text: str) -> str:
    """`text` with each character of `SHOWN` replaced by `\\xNN` (below U+0100) or `\\uNNNN`."""
    return SHOWN.sub(_visible, text) if MAYBE_SHOWN.search(text) else text


def name_text(name: object) -> str:
    """A name from outside (a path, a CLI argument, a session id, a tool or model name) as one line of a
    message: `escape_invisible`, and newlines and tabs as `\\n` and `\\t` too. A name's newline shown raw
    would split the message in two, and the second line could read as a message of its own (`x\\nWarning:
    ...`); as a space it would name another file."""
    text = str(name)
    if text.isprintable():  # nothing to escape (every escaped character is unprintable): the usual case
        return text
    return escape_invisible(text).replace("\n", "\\n").replace("\t", "\\t")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

