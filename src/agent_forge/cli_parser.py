"""The command line's grammar: every flag, the help text, and parsing with prompt words anywhere."""

from __future__ import annotations

import argparse
import os
import sys

from . import __version__


_DESCRIPTION = "agent-forge: a coding agent for the terminal and for other programs."
_EPILOG = """modes:
  (default)      in a terminal: the interactive terminal UI (docs/interactive.md)
  --mode rpc     JSON commands on stdin, responses and events on stdout (for editors, IDEs, bots)
  --mode acp     Agent Client Protocol on stdin/stdout (Zed, JetBrains, Neovim); `agent-forge acp` too
  --mode json    run the prompt and print every event as a JSON line
  -p, --print    run the prompt and print the final answer

examples:
  agent-forge --mode rpc --no-session
  agent-forge -p "explain src/main.py" --model anthropic/claude-sonnet-4-5:high
  git diff | agent-forge -p "review this diff"

environment:
  ANTHROPIC_API_KEY, OPENAI_API_KEY, ...  provider keys
  AGENT_FORGE_DIR                         agent dir (default ~/.agent-forge/agent)
  AGENT_FORGE_SESSION_DIR                 session dir (default <agent dir>/sessions; --session-dir wins)
"""


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's formatter asks `shutil` for the terminal width on every `add_argument`; importing `shutil`
    (and the compression modules it pulls in) costs start-up time, so the width comes from `os` instead."""

    def __init__(self, prog: str) -> None:
        try:
            columns = os.get_terminal_size().columns
        except OSError:
            columns = int(os.environ.get("COLUMNS", "80") or 80)
        super().__init__(prog, width=max(columns - 2, 40))


class _Parser(argparse.ArgumentParser):
    """argparse with its stdout output (`--help`, `--version`) written through `stdout_guard`."""

    def _print_message(self, message: str, file=None) -> None:  # type: ignore[override]
        """`--help` and `--version` output through `stdout_guard` (argparse ignores write errors)."""
        if file is not sys.stdout:  # None means stderr here
            super()._print_message(message, file)
        elif message:
            from .modes.stdout_guard import print_out

            print_out(message, end="")

    def error(self, message: str) -> None:  # type: ignore[override]
        """A usage error: one `agent-forge: <problem> (see agent-forge --help)` line on stderr, exit code 2 (not
        argparse's whole usage block)."""
        from .coding.tools.sanitize import terminal_text

        self.exit(2, f"agent-forge: {terminal_text(message)} (see agent-forge --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="agent-forge", description=_DESCRIPTION, epilog=_EPILOG, formatter_class=_HelpFormatter)
    parser.add_argument("-v", "--version", action="version", version=__version__,
                        help="print the version (bare, e.g. 0.1.0) and exit")
    parser.add_argument("--mode", choices=("text", "json", "rpc", "acp"), default=None, help="output mode")
    parser.add_argument("-p", "--print", dest="print_mode", action="store_true", help="non-interactive: print answer")
    parser.add_argument("--provider", help="provider name (anthropic, openai, or one from models.json)")
    parser.add_argument("--model", help="model id or pattern; 'provider/id' and ':<thinking>' suffix accepted")
    parser.add_argument("--api-key", help="API key for the selected provider (overrides env and auth.json)")
    parser.add_argument("--thinking", help="thinking level: off, minimal, low, medium, high, xhigh, max")
    parser.add_argument("--models", metavar="PATTERNS",
                        help="comma-separated models to cycle through: ids, provider/id, globs, ':<thinking>'")
    parser.add_argument("--context-window", metavar="SIZE",
                        help="context window of the start-up model: 400k, 1m, or a token count")
    parser.add_argument("--session", metavar="PATH|ID", help="resume a session: its file, or a full or partial "
                                                            "session id of this directory")
    parser.add_argument("-c", "--continue", dest="continue_recent", action="store_true",
                        help="resume the most recent session of this directory (a new one if there is none)")
    parser.add_argument("--session-id", metavar="ID",
                        help="open this directory's session with this id, or start a new one with it (letters, "
                             "digits, '.', '_', '-')")
    parser.add_argument("-r", "--resume", action="store_true",
                        help="in the terminal UI: pick a session of this directory to resume")
    parser.add_argument("--fork", metavar="PATH|ID", help="start a new session from a copy of another one")
    parser.add_argument("--list-sessions", action="store_true", help="list this directory's sessions and exit")
    parser.add_argument("--json", action="store_true", help="with --list-sessions: print JSON")
    parser.add_argument("--session-dir", help="directory for session files")
    parser.add_argument("--no-session", action="store_true", help="do not save the session")
    parser.add_argument("-n", "--name", help="session display name")
    parser.add_argument("--system-prompt", metavar="TEXT|FILE", help="replace the default system prompt")
    parser.add_argument("--append-system-prompt", action="append", metavar="TEXT|FILE",
                        help="text (or a file's text) appended to the system prompt (repeatable)")
    parser.add_argument("--export", nargs="+", metavar=("SESSION", "OUT"),
                        help="write SESSION (a session file, or a full or partial session id of this directory) "
                             "as HTML to OUT (default: ./agent-forge-session-<name>.html; '-': stdout) and exit")
    parser.add_argument("messages", nargs="*", help="prompt text; @file arguments include a file")
    parser.add_argument("--list-models", nargs="?", const="", default=None, metavar="SEARCH",
                        help="list the models that have a key (optionally only those matching SEARCH) and exit")
    from .coding.resources.setup import add_arguments as add_resource_arguments
    from .plugins.startup import add_arguments as add_plugin_arguments

    add_resource_arguments(parser)
    add_plugin_arguments(parser)
    from .modes.approvals import add_arguments as add_approval_arguments

    add_approval_arguments(parser)
    parser.add_argument("--no-mcp", action="store_true",
                        help="start none of the configured MCP servers (mcp.json files; docs/mcp.md)")
    _add_accepted_flags(parser)
    return parser


def parse_command_line(argv: list[str] | None) -> argparse.Namespace:
    """`argv` (default `sys.argv[1:]`) parsed with message arguments and options in any order, as the reference
    CLI takes them (`agent-forge @f.txt -p hi`); everything after a first `--` is message arguments (argparse's
    intermixed parsing loses the `--` of `-p -- "-v means verbose?"`). Raises SystemExit as argparse does."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    if "--" not in argv:
        args = parser.parse_intermixed_args(argv)
    else:
        at = argv.index("--")
        args = parser.parse_intermixed_args(argv[:at])
        args.messages = [*args.messages, *argv[at + 1:]]
    _refuse_empty_values(parser, args)
    return args


EMPTY_ALLOWED = frozenset({"system_prompt", "append_system_prompt", "list_models", "session", "fork", "session_id",
                           "name", "theme", "use_theme", "tui_mode"})
"""Flags whose value may be empty: text (an empty system prompt), "every model", the no-op flags, and the
flags that say it in their own words (`cli_usage`: the session flags, `--name`)."""


def _refuse_empty_values(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """A usage error (exit code 2) for a flag given an empty or blank value (`-n ''`, `-t ''`, `--model ''`):
    no flag means anything by one, and taken as "unset" it would silently do what leaving it out does."""
    for action in parser._actions:
        if not action.option_strings or action.dest in EMPTY_ALLOWED or action.nargs == 0:
            continue
        value = getattr(args, action.dest, None)
        values = value if isinstance(value, list) else [value]
        if any(isinstance(item, str) and not item.strip() for item in values):
            parser.error(f"argument {'/'.join(action.option_strings)}: expected a value, not an empty argument")


def _add_accepted_flags(parser: argparse.ArgumentParser) -> None:
    """Flags of the reference CLI (`pi-docs/cli.md`) that clients pass (pi-acp spawns `--mode rpc
    --no-themes`) and that have no meaning here (theme files, TUI modes, a network catalogue): accepted,
    and documented in the README as no-ops."""
    group = parser.add_argument_group("accepted for compatibility, no effect here (themes come from the theme setting)")
    group.add_argument("--theme", action="append", default=[], metavar="PATH", help=argparse.SUPPRESS)
    group.add_argument("--use-theme", metavar="NAME", help=argparse.SUPPRESS)
    group.add_argument("--no-themes", action="store_true", help="--theme, --use-theme, --no-themes: no themes")
    group.add_argument("--tui-mode", metavar="MODE", help="the terminal UI always draws inline")
    group.add_argument("--verbose", action="store_true", help="start-up details are always on stderr")
    group.add_argument("--offline", action="store_true",
                       help="there is no automatic network activity (model calls only)")
