"""The default system prompt: who the agent is, its tools, the date and the working directory."""

from __future__ import annotations

import datetime as _dt
from typing import Iterable

_PREAMBLE = """You are agent-forge, a coding agent working in the user's project through tools.
Work carefully and directly: read before you change, keep changes minimal and focused, and check your work by
running it when you can. Prefer the dedicated tools over shell equivalents (read over cat, edit over sed).
When you are done, say briefly what you changed and what you verified."""

_GUIDELINES = """Guidelines:
- Paths may be relative to the working directory or absolute.
- Use edit for targeted changes; each oldText must match the file exactly and occur once.
- Use write only for new files or complete rewrites.
- Output of read and bash is truncated when long; the result says how to see more."""


def build_system_prompt(*, cwd: str, tools: Iterable[object], today: _dt.date | None = None,
                        append: str | None = None, custom: str | None = None, sections: Iterable[str] = ()) -> str:
    """Assemble the prompt. `tools` are objects with `name` and `description` (first line is listed).
    `custom` replaces the default preamble, tool list and guidelines (`--system-prompt`, SYSTEM.md); `append`
    and then `sections` (context files, skills: `resources/loader.py`) follow; the date and cwd come last."""
    if custom is not None:
        parts = [custom.strip()] if custom.strip() else []
    else:
        listing = "\n".join(f"- {t.name}: {_first_line(t.description)}" for t in tools)  # type: ignore[attr-defined]
        parts = [_PREAMBLE, f"Available tools:\n{listing}" if listing else "No tools are available.", _GUIDELINES]
    if append:
        parts.append(append)
    parts.extend(sections)
    day = (today or _dt.date.today()).isoformat()
    parts.append(f"Current date: {day}\nCurrent working directory: {cwd}")
    return "\n\n".join(parts)


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""
