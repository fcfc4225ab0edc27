"""Input expansion: `/skill:<name> args` and `/<template> args` become the text the model receives.

Argument splitting and the substitutions follow the reference agent's `prompt-templates.md`:
`$1`, `$2`, ... one argument (empty when missing); `$@` and `$ARGUMENTS` all arguments joined by spaces;
`${N:-default}` and `${@:-default}` with a fallback for a missing or empty value; `${@:N}` and `${@:N:L}`
arguments from position N (1-based), at most L of them. Substitution is one pass, so `$1` inside an argument
stays as typed; `$0` is not a placeholder.
"""

from __future__ import annotations

import re
from typing import Mapping

from .skills import Skill, expand_skill
from .templates import PromptTemplate

SKILL_PREFIX = "skill:"

_PLACEHOLDER = re.compile(  # [0-9], not \d: Python's \d takes every script's digits, and `$٣` is no placeholder
    r"\$\{@:(?P<start>[0-9]+)(?::(?P<length>[0-9]+))?\}"
    r"|\$\{(?P<dkey>[1-9][0-9]*|@):-(?P<default>[^}]*)\}"
    r"|\$(?P<index>[1-9][0-9]*)"
    r"|\$(?:@|ARGUMENTS\b)"
)
_QUOTES = "\"'"


def split_command(text: str) -> tuple[str, str] | None:
    """`("name", "rest")` for text starting with `/name`, else None. The name ends at the first whitespace;
    `rest` is everything after that whitespace character."""
    if not text.startswith("/") or len(text) < 2 or text[1].isspace():
        return None
    match = re.match(r"/(\S+)(?:\s(.*))?\Z", text, re.DOTALL)
    return (match.group(1), match.group(2) or "") if match else None


def expand_input(text: str, skills: Mapping[str, Skill], templates: Mapping[str, PromptTemplate]) -> str:
    """`text` with a leading skill or template command expanded; any other text (an unknown `/command`
    included) is returned unchanged, and so is a value that is not a string (`user_message` refuses it)."""
    if not isinstance(text, str):
        return text
    command = split_command(text)
    if command is None:
        return text
    name, rest = command
    if name.startswith(SKILL_PREFIX) and name[len(SKILL_PREFIX):] in skills:
        return expand_skill(skills[name[len(SKILL_PREFIX):]], rest)
    if name in templates:
        return substitute(templates[name].body, parse_arguments(rest))
    return text


def parse_arguments(text: str) -> list[str]:
    """Split on whitespace with shell-like quoting: a `"` or `'` opens a quoted argument only at the start of
    an argument and only when a closing quote follows (else it is ordinary text); inside, a backslash before
    that same quote keeps the quote as text, other backslashes stay as typed. Text right after a closing
    quote continues the argument."""
    args: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        current: list[str] = []
        while i < n and not text[i].isspace():
            if text[i] in _QUOTES and not current:
                end = _closing_quote(text, i)
                if end is not None:
                    current.append(text[i + 1:end].replace("\\" + text[i], text[i]))
                    i = end + 1
                    continue
            current.append(text[i])
            i += 1
        args.append("".join(current))
    return args


def _closing_quote(text: str, start: int) -> int | None:
    quote, i = text[start], start + 1
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text) and text[i + 1] == quote:
            i += 2
            continue
        if text[i] == quote:
            return i
        i += 1
    return None


def substitute(body: str, args: list[str]) -> str:
    """Replace the placeholders of the module docstring in `body`."""

    def replace(match: re.Match[str]) -> str:
        if match.group("start") is not None:
            start = max(int(match.group("start")) - 1, 0)
            length = match.group("length")
            return " ".join(args[start:start + int(length)] if length is not None else args[start:])
        if match.group("dkey") is not None:
            value = " ".join(args) if match.group("dkey") == "@" else _nth(args, int(match.group("dkey")))
            return value or match.group("default")
        if match.group("index") is not None:
            return _nth(args, int(match.group("index")))
        return " ".join(args)

    return _PLACEHOLDER.sub(replace, body)


def _nth(args: list[str], position: int) -> str:
    return args[position - 1] if 1 <= position <= len(args) else ""
