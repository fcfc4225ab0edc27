"""Split a Markdown file into its `---` frontmatter (a small YAML subset) and its body.

Supported YAML: `key: value` scalars (plain, `"double"` with backslash escapes, `'single'` with `''`),
`true`/`false` (YAML 1.2: `yes`/`no` stay text), `null`/`~`, `|` and `>` block scalars, and one nesting level of `- item` lists or
`sub: value` maps. Comments (`#` at the start of a line) and blank lines are skipped. That is what skill and
prompt-template headers use in practice (Agent Skills specification, the reference agent's `skills.md`); a
full YAML parser would be a new runtime dependency.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import FrontmatterError

_KEY = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.-]*)\s*:(?:\s+(.*))?$")


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """`(metadata, body)`. A file that does not start with a `---` line has no frontmatter: `({}, text)`.

    Line endings are normalised to `\\n` and a leading BOM is dropped. Raises `FrontmatterError`.
    """
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return {}, text
    for end in range(1, len(lines)):
        if lines[end].rstrip() in ("---", "..."):
            return parse_header(lines[1:end]), "\n".join(lines[end + 1:])
    raise FrontmatterError("frontmatter starts with --- but is never closed")


def parse_header(lines: list[str]) -> dict[str, Any]:
    """Parse the lines between the fences (see the module docstring). Raises `FrontmatterError`."""
    result: dict[str, Any] = {}
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if _skippable(line):
            continue
        match = _KEY.match(line)
        if match is None or line[0].isspace():
            raise FrontmatterError(f"line {index + 1}: expected 'key: value', got {line.strip()!r}")
        key, raw = match.group(1), (match.group(2) or "").strip()
        key_line = index + 1  # file line: the opening fence is line 1
        block, index = _indented_block(lines, index)
        result[key] = _value(raw, block, key_line)
    return result


def _skippable(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _indented_block(lines: list[str], index: int) -> tuple[list[str], int]:
    """The lines after a key that are indented or blank (trailing blank lines are left for the caller)."""
    block: list[str] = []
    while index < len(lines) and (not lines[index].strip() or lines[index][0].isspace()):
        block.append(lines[index])
        index += 1
    while block and not block[-1].strip():
        block.pop()
        index -= 1
    return block, index


def _value(raw: str, block: list[str], line_no: int) -> Any:
    if raw in ("|", "|-", "|+", ">", ">-", ">+"):
        return _block_scalar(raw, block)
    if block and raw:
        raise FrontmatterError(f"line {line_no}: a key with a value cannot be followed by indented lines")
    if block:
        return _nested(block, line_no)
    return scalar(raw)


def _block_scalar(indicator: str, block: list[str]) -> str:
    indent = min((len(line) - len(line.lstrip()) for line in block if line.strip()), default=0)
    body = [line[indent:] for line in block]
    text = " ".join(part.strip() for part in body) if indicator.startswith(">") else "\n".join(body)
    return text if indicator.endswith("-") else text + "\n"


def _nested(block: list[str], line_no: int) -> list[Any] | dict[str, Any]:
    items = [line.strip() for line in block if not _skippable(line)]
    if all(item.startswith("- ") or item == "-" for item in items):
        return [scalar(item[1:].strip()) for item in items]
    nested: dict[str, Any] = {}
    for item in items:
        match = _KEY.match(item)
        if match is None:
            raise FrontmatterError(f"line {line_no}: cannot parse nested line {item!r}")
        nested[match.group(1)] = scalar((match.group(2) or "").strip())
    return nested


def scalar(raw: str) -> Any:
    """One YAML scalar: quoted string, boolean, null, or plain text (numbers stay text). A trailing ` #`
    comment on a plain value is dropped."""
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            return raw[1:-1]
    if len(raw) >= 2 and raw[0] == raw[-1] == "'":
        return raw[1:-1].replace("''", "'")
    plain = re.sub(r"\s+#.*$", "", raw).strip()
    lowered = plain.lower()
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    if lowered in ("null", "~", ""):
        return None
    return plain
