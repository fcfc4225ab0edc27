"""RPC mode's first `get_state`, answered before the event loop and the agent are imported (issue 15: spawn →
first `get_state` response; asyncio, the agent, tools and compaction are most of a full start-up's imports).

`start_early` makes the session's prelude (`coding/prelude.py`: settings, registry, store, start-up model), reads
the client's first line synchronously and, when it is a `get_state` the prelude can answer, writes the response
the session would write: the same `session_state` fields from the same objects, which the session is then built
on. Anything else first (another command, a line that is not JSON, end of input, a line longer than
`FIRST_LINE_LIMIT`) is the server's to answer: the bytes read go back to it unprocessed (`EarlyStart.rest`).

The prelude cannot answer, and the server does, when what the session does after it may change the state: a
plugin to load (its setup and `session_start` may set the model, the name, ...), `--name`, user bash results
or queued messages a killed run left pending. With an `mcp.json` (servers start with the session, and a client
may wait for them before it writes) the first line is not waited for: answered early only when it is already
there once the prelude is made (a client that writes at spawn), else the session starts at once (its servers
change no `get_state` field).
"""

from __future__ import annotations

from typing import Any, BinaryIO

from ...coding.errors import CommandError
from ...coding.prelude import SessionOptions, SessionPrelude, prepare_session
from ...records import replace
from ..early_input import read_first_line
from ..early_signals import StoppedEarly, answered

FIRST_LINE_LIMIT = 1 << 20
"""Bytes read at most while looking for the first line (a `get_state` is a few dozen): past them the server
reads on."""


class EarlyStart:
    """What `start_early` did: `options` to build the session from (holding the prelude), or `error`, the
    `CommandError` making the prelude raised (the start-up error); `rest`, the input read and not answered."""

    def __init__(self, options: SessionOptions, error: CommandError | None = None, rest: bytes = b""):
        self.options, self.error, self.rest = options, error, rest


def start_early(options: SessionOptions, args: Any, stdin: BinaryIO, stdout: BinaryIO) -> EarlyStart:
    """The prelude of `options`, then (when it can answer) the first line read from `stdin` and a `get_state`
    answered on `stdout`. `args`: the command line (`--approvals`, `-e`, `--no-plugins`). Raises `StoppedEarly`
    for SIGTERM or SIGHUP meanwhile (the caller releases the session's lock, as the mode would)."""
    import _signal  # the C module: `early_signals` says why

    signals = _Signals()
    try:
        previous = {signum: _signal.signal(signum, signals.arrived) for signum in (_signal.SIGTERM, _signal.SIGHUP)}
    except ValueError:  # not the main thread (an in-process run): handlers can only be set there
        return _start(options, args, stdin, stdout, signals)
    try:
        started = _start(options, args, stdin, stdout, signals)
    finally:
        for signum, handler in previous.items():
            _signal.signal(signum, handler)
    signals.check()
    return started


class _Signals:
    """SIGTERM and SIGHUP during `start_early`: raised as `StoppedEarly` at once while the first line is awaited
    (the read is interrupted), else noted and raised by `check` (never from inside the prelude's code)."""

    def __init__(self) -> None:
        self.waiting, self.code = False, 0

    def arrived(self, signum: int, frame: Any) -> None:
        self.code = self.code or 128 + signum
        if self.waiting:
            self.waiting = False
            raise StoppedEarly(self.code)

    def check(self) -> None:
        if self.code:
            raise StoppedEarly(self.code)


def _start(options: SessionOptions, args: Any, stdin: BinaryIO, stdout: BinaryIO, signals: _Signals) -> EarlyStart:
    try:
        prelude = prepare_session(options)
    except CommandError as exc:
        return EarlyStart(options, exc)
    options = replace(prelude.options, prelude=prelude)
    if not _answerable(prelude, args):
        return EarlyStart(options)
    if _starts_servers(prelude) and not _input_waiting(stdin):
        return EarlyStart(options)  # its MCP servers start with the session: a client may wait for them first
    signals.check()
    return EarlyStart(options, rest=_answer_first_line(prelude, args, stdin, stdout, signals))


def _answerable(prelude: SessionPrelude, args: Any) -> bool:
    """Whether nothing the session does after the prelude can change its `get_state` (see the module doc)."""
    from ...coding.session.entries import QUEUE_PENDING, USER_BASH_PENDING, custom_types, holds_custom_type
    from ...plugins.discovery import plugin_sources

    options, policy, store = prelude.options, prelude.policy, prelude.store
    if options.name is not None:
        return False
    entries = store.entries
    kinds = custom_types(entries)  # one pass over the file's entries for both questions (the branch is among them)
    if USER_BASH_PENDING in kinds and holds_custom_type(store.branch(), USER_BASH_PENDING):
        return False
    if QUEUE_PENDING in kinds and _pending(entries, store.session_id):
        return False  # queued again when the session is built: get_state counts them
    found = plugin_sources(options.cwd, prelude.agent_dir, prelude.settings, policy, list(args.plugin or []),
                           not args.no_plugins)
    return not found.sources


def _pending(entries: list[Any], session_id: str) -> bool:
    """Whether `entries` leave queued messages pending (`queue_journal.pending_queue`, imported only for them)."""
    from ...coding.queue_journal import pending_queue

    return bool(pending_queue(entries, session_id))


def _starts_servers(prelude: SessionPrelude) -> bool:
    """Whether the session starts MCP servers (an `mcp.json` it reads; `--no-mcp` aside)."""
    policy = prelude.policy
    return not prelude.options.no_mcp and _mcp_files(prelude.options.cwd, prelude.agent_dir,
                                                     policy is not None and policy.code_allowed)


def _input_waiting(stdin: BinaryIO) -> bool:
    """Whether `stdin` has input (or its end) to read now: a client that wrote its first line at spawn."""
    import select

    try:
        return bool(select.select([stdin], [], [], 0)[0])
    except (OSError, ValueError):  # not selectable: the server reads it
        return False


def _mcp_files(cwd: str, agent_dir: Any, project_allowed: bool) -> bool:
    """Whether an `mcp.json` the session reads exists (`coding/mcp/config.py`: the agent dir's, a trusted
    project's); one naming no server counts too (the server answers then; the answer is the same)."""
    from pathlib import Path

    from ...coding.paths import project_dir
    from ...coding.safe_read import examine

    files = [Path(agent_dir) / "mcp.json", *([project_dir(cwd) / "mcp.json"] if project_allowed else [])]
    # one that cannot be examined (a link loop) is warned about: there is a file
    return any(examine(path) is not None for path in files)


def _answer_first_line(prelude: SessionPrelude, args: Any, stdin: BinaryIO, stdout: BinaryIO,
                       signals: _Signals) -> bytes:
    """Read the first line; answer it when it is a `get_state`. The bytes read past what was answered."""
    signals.waiting = True
    try:
        data = read_first_line(stdin, FIRST_LINE_LIMIT)
    finally:
        signals.waiting = False
    signals.check()
    line, newline, rest = data.partition(b"\n")
    request_id = _get_state_id(line) if newline else None
    if request_id is None:
        return data
    from . import framing
    from ..stdout_guard import write_out
    from .responses import response

    state = early_state(prelude, args.approvals)
    write_out(stdout, framing.encode(response("get_state", request_id[0], data=state)))
    answered()
    return rest


def _get_state_id(line: bytes) -> tuple[Any] | None:
    """`(id,)` of a `get_state` command line (`NO_ID` without one, as the server reads it), else None."""
    from . import framing
    from .responses import NO_ID

    if line.endswith(b"\r"):  # CRLF input: the server strips one `\r` (framing.LineSplitter)
        line = line[:-1]
    try:
        command = framing.decode(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(command, dict) or command.get("type") != "get_state":
        return None
    return (command.get("id", NO_ID),)


def early_state(prelude: SessionPrelude, approvals: str | None) -> dict[str, Any]:
    """`AgentSession.get_state()` of the session about to be built on `prelude`, before any command: idle, its
    branch's messages, nothing queued, the approval policy of `--approvals` or the settings
    (`modes/approvals.configure`)."""
    from types import SimpleNamespace

    from ...coding.settings import approval_policy  # not `coding.approvals`: its classes cost ~0.5 ms
    from ...coding.state import session_state

    settings, store = prelude.settings, prelude.store
    messages = store.build_context(repair=False).messages if store.entries else []
    agent = SimpleNamespace(model=prelude.agent.model, thinking_level=prelude.agent.thinking_level,
                            steering_mode=settings.steering_mode, follow_up_mode=settings.follow_up_mode,
                            messages=messages, steering_queue=(), follow_up_queue=())
    compaction = SimpleNamespace(is_compacting=False, enabled=settings.compaction.enabled)
    policy = SimpleNamespace(policy=approvals or approval_policy(settings, "full"))
    return session_state(agent, store, compaction, policy, streaming=False)  # type: ignore[arg-type]
