"""The command lines editors spawn (`--mode rpc --no-session`, `--mode rpc --session FILE --model M`) parsed
without argparse: building the full parser costs more than the rest of RPC mode's first `get_state` work
(issue 15). Only exact spellings of a few flags with plain values are taken; anything else (another flag, an
abbreviation, `--flag=value`, a value starting with `-` or blank, a repeated flag, a prompt word, `--help`)
returns None and goes to argparse (`cli_parser.parse_command_line`), which gives every message and `--help`.
`tests/test_cli_fast.py` checks the namespace against argparse's for the same lines."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

DEFAULTS: dict[str, Any] = {
    "mode": None, "print_mode": False, "provider": None, "model": None, "api_key": None, "thinking": None,
    "models": None, "context_window": None, "session": None, "continue_recent": False, "session_id": None,
    "resume": False, "fork": None, "list_sessions": False, "json": False, "session_dir": None,
    "no_session": False, "name": None, "system_prompt": None, "append_system_prompt": None, "export": None,
    "list_models": None, "no_context_files": False, "skill": [], "no_skills": False, "prompt_template": [],
    "no_prompt_templates": False, "tools": None, "no_tools": False, "no_builtin_tools": False,
    "exclude_tools": None, "no_project_resources": False, "plugin": [], "no_plugins": False, "approve": None,
    "trust_project": False, "distrust_project": False, "approvals": None, "no_mcp": False, "theme": [],
    "use_theme": None, "no_themes": False, "tui_mode": None, "verbose": False, "offline": False, "messages": [],
}
"""Every destination of `cli_parser.build_parser` with its default (lists are copied per parse)."""

SWITCHES = {"--no-session": "no_session", "--no-mcp": "no_mcp", "--no-themes": "no_themes",
            "--no-plugins": "no_plugins", "--verbose": "verbose", "--offline": "offline"}
"""Flags without a value taken here: store True."""

VALUED = {"--mode": "mode", "--session": "session", "--model": "model", "--provider": "provider",
          "--thinking": "thinking", "--session-dir": "session_dir", "--approvals": "approvals"}
"""Flags with one value taken here (the value plain: not blank, not starting with `-`)."""

CHOICES = {"mode": ("text", "json", "rpc", "acp"), "approvals": ("full", "ask", "read-only")}


class FastNamespace(SimpleNamespace):
    """What `argparse.Namespace` offers the CLI: attributes, `vars()`, equality and `in`."""

    def __contains__(self, key: str) -> bool:
        return key in self.__dict__


def parse_command_line(argv: list[str] | None) -> Any:
    """`cli_parser.parse_command_line`: the namespace of `argv` (default `sys.argv[1:]`); SystemExit as argparse
    raises it. The lines `fast_parse` takes skip argparse."""
    import sys

    argv = sys.argv[1:] if argv is None else list(argv)
    fast = fast_parse(argv)
    if fast is not None:
        return fast
    from .cli_parser import parse_command_line as parse_with_argparse

    return parse_with_argparse(argv)


def fast_parse(argv: list[str]) -> FastNamespace | None:
    """The namespace argparse would make of `argv`, or None when `argv` is not one of the simple lines taken
    here (argparse then parses it)."""
    values: dict[str, Any] = {}
    index = 0
    while index < len(argv):
        token = argv[index]
        if token in SWITCHES and SWITCHES[token] not in values:
            values[SWITCHES[token]] = True
            index += 1
        elif token in VALUED and VALUED[token] not in values and index + 1 < len(argv):
            value = argv[index + 1]
            if not _plain(VALUED[token], value):
                return None
            values[VALUED[token]] = value
            index += 2
        else:
            return None
    defaults = {name: list(value) if isinstance(value, list) else value for name, value in DEFAULTS.items()}
    return FastNamespace(**{**defaults, **values})


def _plain(name: str, value: str) -> bool:
    """Whether argparse takes `value` as this flag's value with no error of ours or its own."""
    if not value.strip() or value.startswith("-"):
        return False
    return name not in CHOICES or value in CHOICES[name]
