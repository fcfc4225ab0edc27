"""Usage errors of the command line: flags that cannot work together or values no flag takes.

Every one is refused before anything starts, with one `agent-forge: <problem>` line and exit code 2 (the
exit code of argparse's own usage errors), rather than silently ignored or reported later as a run failure.
"""

from __future__ import annotations

import argparse

USAGE_EXIT = 2


def stray_json(args: argparse.Namespace) -> str | None:
    """`--json` only shapes `--list-sessions` output: anywhere else it would be ignored without a word."""
    if args.json and not args.list_sessions:
        return ("--json only applies to --list-sessions; for JSON events of a run use --mode json, for a "
                "protocol --mode rpc")
    return None


def usage_problem(args: argparse.Namespace, mode: str) -> str | None:
    """The first usage error of a command line that runs a mode (`rpc`, `json`, `print`), or None."""
    if mode == "rpc" and (args.messages or args.print_mode):
        return "--mode rpc reads its prompts from stdin; drop the message arguments and -p"
    if mode == "acp" and (args.messages or args.print_mode):
        return "--mode acp reads its prompts from the editor on stdin; drop the message arguments and -p"
    if args.session_id is not None:
        return _session_id_problem(args)
    return _session_flags_problem(args) or _thinking_problem(args)


def _session_flags_problem(args: argparse.Namespace) -> str | None:
    """The session flags exclude each other (as `session_listing.startup_session` says), and name something."""
    chosen = [flag for flag, used in (("--session", args.session is not None), ("--continue", args.continue_recent),
                                      ("--fork", args.fork is not None), ("--no-session", args.no_session)) if used]
    if len(chosen) > 1:
        return f"{' and '.join(chosen)} cannot be combined"
    for flag, value in (("--session", args.session), ("--fork", args.fork)):
        if value is not None and not value.strip():
            return f"{flag} needs a session file or id, not an empty argument"
    return None


def _thinking_problem(args: argparse.Namespace) -> str | None:
    from .ai.types import THINKING_LEVELS

    if args.thinking is not None and args.thinking not in THINKING_LEVELS:
        return f"Invalid thinking level: {args.thinking}. Valid levels: {', '.join(THINKING_LEVELS)}"
    return None


def _session_id_problem(args: argparse.Namespace) -> str | None:
    from .coding.session.home import SESSION_ID, SESSION_ID_MAX

    if len(args.session_id) > SESSION_ID_MAX:
        return (f"--session-id is {len(args.session_id)} characters long; at most {SESSION_ID_MAX} are allowed "
                "(it becomes part of the session file's name)")
    if not SESSION_ID.match(args.session_id):
        return (f"--session-id {args.session_id!r}: use letters, digits, '.', '_' and '-', starting and ending "
                "with a letter or digit")
    for flag, used in (("--session", args.session), ("--continue", args.continue_recent),
                       ("--fork", args.fork)):
        if used:
            return f"--session-id and {flag} cannot be combined"
    return None
