"""Command line: parse arguments, build the session, run the chosen mode (imported lazily)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from .cli_loop import leave_stuck_threads, run_loop
from .cli_fast import parse_command_line
from .cli_usage import USAGE_EXIT, misplaced_command, stray_json, usage_problem
from .coding.paths import MissingDirectory, working_directory
from .modes.early_signals import stopped

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

    from .coding.agent_session import AgentSession


def main(argv: list[str] | None = None) -> int:
    """Run the command line; the exit code. Whatever the command, a reader that goes away (`| head`, or a
    stream closed from the start) ends it quietly: no traceback and no `Exception ignored` from the
    interpreter's final flush. Any other stdout write error (a full disk) ends it with one line on stderr,
    `agent-forge: cannot write to stdout: <reason>`, and exit code 1 (`stdout_guard`). Worker threads stuck
    in the kernel end the process with that code (`leave_stuck_threads`)."""
    from . import cli_gc

    cli_gc.pause()  # until the mode serves (cli_gc.py)
    try:
        code = run_command(argv)
    except KeyboardInterrupt as exc:  # a stop signal before `run_command` could catch it itself
        code = stopped(exc, starting=not _started)
    leave_stuck_threads(code)
    return code


def run_command(argv: list[str] | None = None) -> int:
    """`main` without the process exit past stuck threads: what an in-process run (`agent_forge.testing.cli`)
    calls."""
    from .modes import stdout_guard

    global _started
    _started = False
    stdout_guard.ensure_standard_streams()
    stdout_guard.tolerate_stderr_errors()
    try:
        code = _main(argv)
    except KeyboardInterrupt as exc:  # a stop signal before the mode's own handlers (`modes/early_signals.py`)
        code = stopped(exc, starting=not _started)
    except MissingDirectory as exc:  # any command that needs the current directory, found where it is needed
        _say(str(exc))
        code = USAGE_EXIT
    except SystemExit as exc:  # argparse: --help, --version, usage errors
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    except BrokenPipeError:
        stdout_guard.discard(sys.stdout)
        stdout_guard.discard(sys.stderr)
        code = 0
    stdout_guard.quiet_exit_streams()
    problem = stdout_guard.failure_message()
    if problem is not None:
        print(problem, file=sys.stderr)
        code = 1
    return code


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["mcp"]:  # `agent-forge mcp add|list|remove`
        from .modes.mcp_command import run_mcp_command

        return run_mcp_command(argv[1:])
    if argv[:1] == ["acp"]:  # the `agent-forge acp` alias editors' agent registries use
        argv = ["--mode", "acp", *argv[1:]]
    args = parse_command_line(argv)
    problem = misplaced_command(args, argv) or stray_json(args)
    if problem:
        _say(problem)
        return USAGE_EXIT
    if args.export is not None:
        from .cli_export import run_export

        return run_export(args.export, args.session_dir)
    if args.trust_project or args.distrust_project:
        from .coding.paths import agent_dir
        from .modes.stdout_guard import print_out
        from .plugins.startup import trust_command

        return trust_command(args, agent_dir(), print_out) or 0
    if args.list_sessions:
        return _list_sessions(args)
    interactive = args.mode is None and not args.print_mode and sys.stdin.isatty() and sys.stdout.isatty()
    if args.resume and not interactive:
        other = (", or use --session PATH|ID, -c or --list-sessions" if args.mode != "acp" else
                 " (in ACP mode the editor chooses the sessions: session/new, session/load)")
        print(f"agent-forge: -r/--resume opens the session selector of the terminal UI: run it in a terminal{other}",
              file=sys.stderr)
        return 2
    if args.list_models is not None:
        return _list_models(args)
    mode = args.mode if args.mode in ("rpc", "json", "acp") else "print"
    problem = usage_problem(args, mode)
    if problem:
        _say(problem)
        return USAGE_EXIT
    working_directory()  # before anything starts: a deleted directory is a usage problem, not a late failure
    from .modes.stdout_guard import refuse_closed_stdout

    if refuse_closed_stdout():  # `>&-`: no answer, event or response could reach anyone
        return 1
    if interactive:
        from .modes.interactive.typeahead import hold

        mode = "interactive"  # a person at a terminal: the terminal UI (`modes/interactive`)
        hold(0, 1)  # keys typed from now until the editor is ready are taken as typed, not echoed
    if mode == "rpc":
        early = _rpc_early(args)
        return 1 if early is None else _said_stop(run_loop(_run(mode, args, early=early)))
    code = run_loop(_run(mode, args, handshake=_acp_handshake() if mode == "acp" else None))
    return _said_stop(code) if mode == "acp" else code


def _said_stop(code: int) -> int:
    """`code`, once a protocol mode stopped by a signal said so on stderr (print mode says why itself)."""
    from .modes import termination

    if termination.stopped_by is not None and code > 128:
        _say(f"Stopped by {termination.stopped_by}.")
    return code


def _say(message: str) -> None:
    """`agent-forge: <message>` on stderr, cleaned for the terminal: errors quote files (a session's name, a
    models.json line) and servers."""
    from .coding.tools.sanitize import terminal_text

    print(f"agent-forge: {terminal_text(message)}", file=sys.stderr)


def _list_sessions(args: argparse.Namespace) -> int:
    """`--list-sessions [--json]`: this directory's sessions, newest first."""
    from .coding.session.listing import format_session_list, list_sessions
    from .modes.stdout_guard import print_out

    print_out(format_session_list(list_sessions(working_directory(), args.session_dir, on_skip=_say_skipped),
                                  as_json=args.json))
    return 0


def _say_skipped(reason: str) -> None:
    """A session file left out of a listing or `-c`: said on stderr, never silently."""
    _say(f"skipped {reason}")


def _list_models(args: argparse.Namespace) -> int:
    """`--list-models [SEARCH]`: `provider/id` and name of each model with a key, filtered by a case-insensitive
    substring of either (none matching: said on stderr, exit 0), escaped (`path_text`: one row, no terminal
    control); 1 with a message when the configuration cannot be loaded. With no model at all, stderr says how
    to give one a key (it sends no prompt, so the start-up readiness wording does not fit)."""
    from .coding.agent_session import CommandError, key_setup_hint
    from .coding.factory import SessionOptions, create_session
    from .coding.paths import path_text
    from .modes.stdout_guard import print_out

    try:
        session = create_session(SessionOptions(cwd=working_directory(), no_session=True, provider=args.provider,
                                                api_key=args.api_key))
    except CommandError as exc:
        _say(str(exc))
        return 1
    from .coding.tools.sanitize import print_warning

    for warning in session.warnings:  # a broken auth.json or models.json explains a short list
        print_warning(warning)
    search = args.list_models.lower()
    models = session.model_control.available_models()
    shown = 0
    for model in models:
        ref, name = f"{model['provider']}/{model['id']}", str(model.get("name", ""))
        if search in ref.lower() or search in name.lower():  # printed escaped: one row, no terminal control
            print_out(f"{path_text(ref)}\t{path_text(name)}")
            shown += 1
    if not models:  # say why the list is empty and how to fix it
        print(f"agent-forge: no model has a key: {key_setup_hint(session.registry)}", file=sys.stderr)
    elif not shown:  # an empty stdout alone reads like a broken command
        _say(f"no model with a key matches {args.list_models!r} (--list-models alone lists all {len(models)})")
    return 0


def _enter_session_directory(resume: Path, args: argparse.Namespace) -> Path:
    """`--session`: work in the directory the session recorded when it still exists (the reference's "resumes
    it in its working directory"), saying so on stderr; otherwise say that the current one is used. Path
    arguments keep meaning what they meant where they were typed."""
    from .coding.session.home import resume_directory

    cwd = working_directory()
    home = resume_directory(resume, cwd)
    if home.notice:
        _say(home.notice)
    if home.cwd != cwd:
        _anchor_path_arguments(args, cwd)
        os.chdir(home.cwd)
        os.environ["PWD"] = home.cwd  # tools' shells read it
    return resume


def _anchor_path_arguments(args: argparse.Namespace, cwd: str) -> None:
    """Make the relative paths among the arguments absolute against `cwd` before the process changes
    directory. A value that names no file there (a plugin module name, system-prompt text) stays as typed."""
    if args.session_dir:
        args.session_dir = os.path.join(cwd, os.path.expanduser(args.session_dir))
    for name in ("skill", "prompt_template", "plugin", "append_system_prompt"):
        values = getattr(args, name, None)
        if values:
            setattr(args, name, [_anchored(value, cwd) for value in values])
    if args.system_prompt:
        args.system_prompt = _anchored(args.system_prompt, cwd)
    args.messages = ["@" + _anchored(m[1:], cwd) if m.startswith("@") and len(m) > 1 else m for m in args.messages]


def _anchored(value: str, cwd: str) -> str:
    candidate = os.path.join(cwd, os.path.expanduser(value))
    # lexists: a link loop or a path without permission names something here too (its error names it later)
    return candidate if os.path.lexists(candidate) else value


def _elsewhere_hint(args: argparse.Namespace, error: Exception) -> str:
    """For a `--session <id>` or `--fork <id>` that matched nothing here: the sessions of other directories it
    matches."""
    from .coding.errors import NoSessionMatch

    reference = args.session if args.session is not None else args.fork
    if reference is None or not isinstance(error, NoSessionMatch):
        return ""
    from .coding.session.home import sessions_elsewhere

    found = sessions_elsewhere(reference, args.session_dir, on_skip=_say_skipped)
    if not found:
        return ""
    from .coding.paths import path_text

    listing = "".join(f"\n  {path_text(path)}" for path in found)
    return (f"\nIt matches sessions of other directories; resume one by its path (--session PATH, which works "
            f"in that session's directory) or copy it here with --fork PATH:{listing}")


def _choose_session(args: argparse.Namespace) -> tuple[Path | None, Path | None] | None:
    """`(file to resume, file to fork from)` of the session flags, after entering a resumed session's
    directory; None (with the reason on stderr) when the flags name no usable session."""
    from .coding.session.listing import SessionFileError, startup_session

    try:
        resume, fork_from = startup_session(working_directory(), args.session_dir, session=args.session,
                                            continue_recent=args.continue_recent, fork=args.fork,
                                            no_session=args.no_session, on_skip=_say_skipped, on_note=_say)
    except SessionFileError as exc:
        _say(f"{exc}{_elsewhere_hint(args, exc)}")
        return None
    if args.session_id is not None and not args.no_session:
        from .coding.session.home import session_with_id

        try:
            resume = session_with_id(args.session_id, working_directory(), args.session_dir)
        except SessionFileError as exc:
            _say(f"--session-id {args.session_id}: {exc}; no second file with that id is made")
            return None
    if resume is not None:
        resume = _enter_session_directory(resume.absolute(), args)
    return resume, fork_from


async def serve_rpc(argv: list[str], reader: Any, writer: Any, *, mode: str = "rpc") -> int:
    """`agent-forge --mode rpc <argv>` (or `mode` "acp") inside this process, over `reader`/`writer`
    (`modes/rpc/streams.py`: asyncio streams, in-memory pipes) instead of stdin/stdout: same arguments, session
    choice and plugins; stdin, stdout and the signal handlers are left alone. The exit code (2 for bad
    arguments, with the reason on stderr). The process's cwd and environment are the agent's: callers
    isolating runs set them first. ValueError for a mode other than the two protocol modes."""
    if mode not in ("rpc", "acp"):
        raise ValueError(f"serve_rpc serves the rpc and acp modes, not {mode!r}")
    try:
        args = parse_command_line(["--mode", mode, *argv])
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    try:
        working_directory()
        problem = usage_problem(args, mode)
    except MissingDirectory as exc:
        problem = str(exc)
    if problem:
        _say(problem)
        return 2
    return await _run(mode, args, streams=(reader, writer))


def _acp_handshake() -> Any:
    """ACP mode's first `initialize`, answered before the event loop is imported (`modes/acp/handshake.py`)."""
    from .modes.acp.handshake import answer_early
    from .modes.stdout_guard import claim_stdin, claim_stdout

    return answer_early(claim_stdin(), claim_stdout())  # claimed as `_run` would: the same streams after it


def _rpc_early(args: argparse.Namespace) -> Any:
    """RPC mode's session prelude and first `get_state`, answered before the event loop is imported
    (`modes/rpc/early.py`); None when the flags name no usable session (said on stderr)."""
    from .modes.rpc.early import start_early
    from .modes.stdout_guard import claim_stdin, claim_stdout

    stdout, stdin = claim_stdout(), claim_stdin()  # as `_run` claims them: the same streams after it
    options = _session_options("rpc", args)
    return None if options is None else start_early(options, args, stdin, stdout)


async def _run(mode: str, args: argparse.Namespace, streams: tuple[Any, Any] | None = None,
               handshake: Any = None, early: Any = None) -> int:
    """Run `mode`; `early`: what `_rpc_early` did (RPC mode on stdin/stdout)."""
    from .modes.stdout_guard import claim_stdin, claim_stdout

    if streams is None:
        claim_stdout()  # before plugins load: what they print goes to stderr, not into the protocol or the answer
        claim_stdin()  # and what they read is the null device, not the client's commands or the piped prompt
    if mode == "acp":  # sessions are made by `session/new` in the directories the editor names
        from .modes.acp.server import run_acp_mode

        _serving()
        return await run_acp_mode(args, *(streams or (None, None)), handshake=handshake)
    if mode == "interactive":  # a person can answer the project-trust question: ask it before loading
        from .coding.paths import agent_dir
        from .modes.interactive.trust_prompt import ask_on_terminal
        from .modes.stdout_guard import protocol_stdin, protocol_stdout

        protocol_stdout().flush()
        ask_on_terminal(working_directory(), agent_dir(), args.approve, protocol_stdin().fileno(),
                        protocol_stdout().fileno())
    options = early.options if early is not None else _session_options(mode, args)
    if options is None:
        return 1
    if mode == "interactive":  # the editor is painted first; the session is built behind it
        return await _run_interactive(options, args)
    from .coding.agent_session import CommandError
    from .coding.factory import create_session

    try:
        if early is not None and early.error is not None:
            raise early.error
        session = create_session(options)
    except CommandError as exc:
        _say(str(exc))
        return 1
    from .plugins.startup import install_from_args

    await install_from_args(session, args, mode)
    from .modes.approvals import configure as configure_approvals
    from .modes.termination import run_until_terminated

    configure_approvals(session, args.approvals, mode)
    _serving()
    if mode == "rpc":
        from .modes.rpc.server import run_rpc_mode

        if streams is not None:
            return await run_rpc_mode(session, *streams)
        return await run_until_terminated(session, run_rpc_mode(session, early=early))
    from .modes.print_mode import run_print_mode

    return await run_until_terminated(session, run_print_mode(session, args.messages, json_events=(mode == "json")))


def _session_options(mode: str, args: argparse.Namespace) -> Any:
    """The `SessionOptions` of the command line, after choosing (and entering) the session to resume; None when
    the flags name no usable session (said on stderr)."""
    from .coding.prelude import SessionOptions
    from .coding.resources.setup import options_from_args

    chosen = _choose_session(args)
    if chosen is None:
        return None
    resume, fork_from = chosen
    options = SessionOptions(
        cwd=working_directory(), provider=args.provider, model=args.model, api_key=args.api_key, thinking=args.thinking,
        session_file=str(resume) if resume else None, fork_from=str(fork_from) if fork_from else None,
        session_dir=args.session_dir, no_session=args.no_session, name=args.name,
        system_prompt=args.system_prompt, append_system_prompt=args.append_system_prompt,
        scoped_models=args.models, context_window=args.context_window, session_id=args.session_id,
        start_without_model=(mode in ("rpc", "interactive")), no_mcp=args.no_mcp,
        unattended=(mode in ("print", "json")), **options_from_args(args),
    )
    return options


async def _run_interactive(options: Any, args: argparse.Namespace) -> int:
    """The terminal UI: painted from the session's prelude (settings, store, model), the session built right
    after the first paint and the plugins loaded behind it (`modes/interactive/app.py`). The agent, its tools
    and compaction are a sixth of a start-up's imports: the editor does not wait for them."""
    from .records import replace

    from .coding.errors import CommandError
    from .coding.prelude import prepare_session
    from .modes.interactive.app import InteractiveMode
    from .modes.interactive.reload import PluginArgs
    from .modes.termination import run_until_terminated

    try:
        options = replace(options, prelude=options.prelude or prepare_session(options))
    except CommandError as exc:
        _say(str(exc))
        return 1

    def build() -> AgentSession:
        from .coding.factory import create_session
        from .modes.approvals import configure as configure_approvals

        session = create_session(options)
        configure_approvals(session, args.approvals, "interactive")
        return session

    async def load_plugins(session: AgentSession) -> None:
        from .plugins.startup import install_from_args

        await install_from_args(session, args, "interactive")

    _serving()
    first = " ".join(args.messages) or ("/resume" if args.resume else None)
    mode = InteractiveMode(options.prelude, build, PluginArgs(args.plugin, not args.no_plugins))
    code = await run_until_terminated(lambda: mode.session, mode.run(first, load_plugins))
    if mode.session is None:  # never built (a start-up error, a signal): its file is released all the same
        from .coding.persistence import release

        release(options.prelude.store)
    if mode.start_error is not None:
        _say(mode.start_error)
    return code


_started = False
"""Whether a mode serves yet (`_serving`): a stop signal before is said to come `during start-up`."""


def _serving() -> None:
    """Start-up is over: the garbage collector runs again (`cli_gc.resume`)."""
    from . import cli_gc

    global _started
    _started = True
    cli_gc.resume()
