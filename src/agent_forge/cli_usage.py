"""Usage errors of the command line: flags that cannot work together or values no flag takes.

Every one is refused before anything starts, with one `agent-forge: <problem>` line and exit code 2 (the
exit code of argparse's own usage errors), rather than silently ignored or reported later as a run failure.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

USAGE_EXIT = 2


def stray_json(args: argparse.Namespace) -> str | None:
    """`--json` only shapes `--list-sessions` output: anywhere else it would be ignored without a word."""
    if args.json and not args.list_sessions:
        return ("--json only applies to --list-sessions; for JSON events of a run use --mode json, for a "
                "protocol --mode rpc")
    return None


COMMANDS = ("acp", "mcp")
"""The words that name a command when they come first (`agent-forge mcp list`, `agent-forge acp`)."""


def misplaced_command(args: argparse.Namespace, argv: list[str]) -> str | None:
    """A command word after flags (`agent-forge --approvals full acp`, `--no-mcp mcp list`) would otherwise be
    sent to the model as a prompt: as in the reference CLI, a command comes first, its options after it. The
    word stays a prompt where the command line says so: after `--`, or with `-p`/`--mode`, which run a prompt."""
    word = args.messages[0] if args.messages else None
    if word not in COMMANDS or args.print_mode or args.mode is not None:
        return None
    if "--" in argv and len(args.messages) == len(argv) - argv.index("--") - 1:  # every word came after `--`
        return None
    return (f"{word!r} is a command and must come first, before any option (agent-forge {word} ...); to send "
            f"the word as a prompt, use -p or put it after --")


def usage_problem(args: argparse.Namespace, mode: str) -> str | None:
    """The first usage error of a command line that runs a mode (`rpc`, `json`, `print`, `acp`), or None."""
    if mode == "rpc" and (args.messages or args.print_mode):
        return "--mode rpc reads its prompts from stdin; drop the message arguments and -p"
    if mode == "acp" and (args.messages or args.print_mode):
        return "--mode acp reads its prompts from the editor on stdin; drop the message arguments and -p"
    if mode == "acp" and (flags := _session_choice_flags(args)):
        from .words import listed

        return (f"{listed(flags)} {'does' if len(flags) == 1 else 'do'} not apply in ACP mode: the editor "
                "chooses the sessions (session/new, session/load)")
    if args.session_id is not None:
        return _session_id_problem(args) or value_syntax_problem(args) or path_arguments_problem(args)
    return (_session_flags_problem(args) or _thinking_problem(args) or value_syntax_problem(args)
            or path_arguments_problem(args))


def value_syntax_problem(args: argparse.Namespace) -> str | None:
    """A flag value no configuration could make valid (`--context-window abc`, `-t read,+bash`, a `--name` with
    a control character): a usage error,
    where one that names something the configuration lacks (`--provider nope`, `--model nosuch`, a session id
    no session has) is a failure of the run (exit code 1)."""
    from .coding.errors import CommandError

    if args.name is not None:
        from .coding.state import session_name

        try:
            session_name(args.name)
        except CommandError as exc:
            return str(exc)
    if args.context_window is not None:
        from .coding.models.control import parse_context_window

        try:
            parse_context_window(args.context_window)
        except CommandError as exc:
            return str(exc)
    if args.tools is not None:
        from .coding.tools.selection import ToolSelectionError, check_cli_entries

        try:
            check_cli_entries(args.tools.split(","))
        except ToolSelectionError as exc:
            return str(exc)
    return None


def path_arguments_problem(args: argparse.Namespace) -> str | None:
    """A flag value that names something that exists but cannot be what the flag reads: for "text or a file"
    flags (`--system-prompt`, `--append-system-prompt`) anything but a readable regular file of at most 1 MB
    (the text would silently become the path itself, or a read of `/dev/zero` would never end); for the
    resource paths (`--skill`, `--prompt-template`) a device or FIFO (one the OS will not examine is warned
    about by the loader, which goes on without it); for `--session-dir`
    (else `$AGENT_FORGE_SESSION_DIR`, unless `--no-session`) anything but a directory (a missing one is made).
    A path the OS refuses to examine (a link loop, no permission) is named with the OS's reason. Relative to
    the current directory."""
    texts = [("--system-prompt", args.system_prompt)] if args.system_prompt else []
    texts += [("--append-system-prompt", value) for value in args.append_system_prompt or ()]
    paths = [("--skill", value) for value in args.skill or ()]
    paths += [("--prompt-template", value) for value in args.prompt_template or ()]
    return (next(filter(None, (_text_file_problem(flag, value) for flag, value in texts)), None)
            or _session_dir_problem(args)
            or next(filter(None, (_resource_path_problem(flag, value) for flag, value in paths)), None))


def _text_file_problem(flag: str, value: str) -> str | None:
    from .coding.paths import path_text
    from .coding.safe_read import MAX_CONFIG_BYTES, TEXT_ABSENT, format_size

    info = _stat(value, TEXT_ABSENT)
    if isinstance(info, OSError):
        return _unexaminable(flag, value, info)
    if info is not None and not stat.S_ISREG(info.st_mode):
        return (f"{flag} {path_text(value)}: it is {_kind(info.st_mode)}, not a regular file (give the text "
                "itself, or the path of a text file)")
    if info is not None and info.st_size > MAX_CONFIG_BYTES:
        return (f"{flag} {path_text(value)}: the file is larger than {format_size(MAX_CONFIG_BYTES)} (the "
                "limit for it)")
    refused = _unopenable(value) if info is not None else None
    return None if refused is None else f"{flag} {path_text(value)}: cannot read: {refused}"


def _session_dir_problem(args: argparse.Namespace) -> str | None:
    """`--session-dir`, or the environment's session dir it replaces, that cannot be a directory: refused
    before any model request (the session would otherwise fail to save only after the paid answer)."""
    from .coding.paths import path_text

    flag, value = "--session-dir", args.session_dir
    if not value and not args.no_session:
        flag, value = "AGENT_FORGE_SESSION_DIR", os.environ.get("AGENT_FORGE_SESSION_DIR")
    if not value:
        return None
    info = _stat(value, frozenset({errno.ENOENT}))  # a missing one is made
    if isinstance(info, OSError):
        return _unexaminable(flag, value, info)
    if info is not None and not stat.S_ISDIR(info.st_mode):
        return f"{flag} {path_text(value)}: it is {_kind(info.st_mode)}, not a directory"
    refused = None if args.no_session else _unwritable_dir(value)
    return None if refused is None else f"{flag} {path_text(value)}: {refused}"


def _unwritable_dir(value: str) -> str | None:
    """`cannot write in it: <reason>` for a directory `value` this process may not create files in, `cannot
    make it in <the nearest existing directory>: <reason>` for a missing one it may not create; else None."""
    from .coding.paths import path_text

    path = os.path.abspath(os.path.expanduser(value))
    existing = path
    while not os.path.exists(existing) and os.path.dirname(existing) != existing:
        existing = os.path.dirname(existing)
    reason = _write_refusal(existing)
    if reason is None:
        return None
    return f"cannot write in it: {reason}" if existing == path else f"cannot make it in {path_text(existing)}: {reason}"


def _write_refusal(directory: str) -> str | None:
    """The OS's words for why files cannot be made in `directory` (a read-only file system, no write or search
    permission), None when they can; checked with the effective ids, as the later write will be."""
    effective = os.access in os.supports_effective_ids
    if os.access(directory, os.W_OK | os.X_OK, effective_ids=effective):
        return None
    try:
        read_only = bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # no statvfs (Windows): permission is the likely reason
        read_only = False
    return os.strerror(errno.EROFS if read_only else errno.EACCES)


def _resource_path_problem(flag: str, value: str) -> str | None:
    from .coding.paths import path_text

    info = _stat(value)
    if isinstance(info, OSError):  # too long, a link loop: the loader warns with the OS's reason and goes on
        return None
    if info is not None and not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
        return f"{flag} {path_text(value)}: it is {_kind(info.st_mode)}, not a file or a directory"
    return None


def _unexaminable(flag: str, value: str, error: OSError) -> str:
    from .coding.paths import path_text

    return f"{flag} {path_text(value)}: cannot be examined: {error.strerror or error}"


def _stat(value: str, absent: frozenset[int] = frozenset({errno.ENOENT, errno.ENOTDIR})
          ) -> os.stat_result | OSError | None:
    """The status of the file `value` names (links followed), None when it names nothing (the `errno` is one
    of `absent`), or the `OSError` of a path the OS refuses to examine (`safe_read.examine`)."""
    from .coding.safe_read import examine

    if "\n" in value:  # text, or no path anyone typed
        return None
    return examine(os.path.expanduser(value), absent=absent)


def _unopenable(value: str) -> str | None:
    """The OS's reason a regular file cannot be opened for reading (no permission), else None; the open does
    not block (`stat` said it is a regular file, yet it may have changed since)."""
    try:
        os.close(os.open(os.path.expanduser(value), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)))
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def _kind(mode: int) -> str:
    from .coding.safe_read import describe_kind

    return "a regular file" if stat.S_ISREG(mode) else describe_kind(mode)


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


def _session_choice_flags(args: argparse.Namespace) -> list[str]:
    """The flags given that choose or name the session, which an ACP editor does per session instead."""
    return [flag for flag, used in (("--session", args.session is not None), ("--continue", args.continue_recent),
                                    ("--fork", args.fork is not None), ("--session-id", args.session_id is not None),
                                    ("--name", args.name is not None)) if used]


def _thinking_problem(args: argparse.Namespace) -> str | None:
    from .ai.options import THINKING_LEVELS
    from .coding.paths import path_text

    if args.thinking is not None and args.thinking not in THINKING_LEVELS:
        return f"Invalid thinking level: {path_text(args.thinking)}. Valid levels: {', '.join(THINKING_LEVELS)}"
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
