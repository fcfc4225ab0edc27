"""The `<file name="...">` block a text file is given to the model in (`@path` in print and interactive mode,
an editor's embedded resource in ACP): its boundaries stay true whatever the name and the text hold."""

from __future__ import annotations

import re

_CLOSING = re.compile(r"</(file\s*>)", re.IGNORECASE)
_ATTRIBUTE = str.maketrans({"&": "&amp;", '"': "&quot;", "<": "&lt;", ">": "&gt;", "\n": "&#10;", "\r": "&#13;"})


def file_block(name: str, text: str) -> str:
    """`<file name="NAME">\\nTEXT\\n</file>`: `name` escaped as an XML attribute (`&quot;`, `&lt;`, `&#10;`, ...),
    and each `</file>` inside `text` written `<\\/file>`, so the only closing tag is the block's own."""
    body = _CLOSING.sub(r"<\\/\1", text)
    return f'<file name="{name.translate(_ATTRIBUTE)}">\n{body}\n</file>'
