"""Moving an AgentSession to another session file: `switch_session`, `fork` and `clone` (seed 000).

Each one first makes sure the target can be used (the file opens and its lock is free, the entry exists, the
new file can be written) and only then stops the work in progress and swaps the store, so a failure leaves the
current session exactly as it was. (A clone copies the branch once the work has settled, so only a failure to
write its new file comes after the work was stopped.) After the swap the agent's messages, model, thinking
level and context window come from the new store's active branch, and nothing is appended for them. Fork and
clone record `parentSession` (the current file, when it is on disk).

`--no-session` is a choice for the whole process: a session started from the current one (`new_session`, fork,
clone; see `successor_store`) stays in memory, also after `switch_session` made an existing file the current
session (that file is then written to, as the user asked; but no new file is ever created).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from .session_entries import SessionEntry
from .session_file import SessionFileError
from .session_store import SessionStore
from .session_tree import clone_path, fork_path

if TYPE_CHECKING:
    from .agent_session import AgentSession


async def switch_session(session: AgentSession, session_path: str) -> bool:
    """Load `session_path` (relative paths are from the process cwd) and continue it; returns `cancelled`
    (always False until plugins can veto). Raises CommandError when the file is missing, unreadable, not a
    session, or in use by another process; the current session then stays."""
    path = Path(os.path.abspath(os.path.expanduser(session_path)))
    current = session.store
    if current.path is not None and current.on_disk and _same_file(path, current.path):
        await _stop_work(session)
        current.set_leaf(current.entries[-1]["id"] if current.entry_count else None)  # as a reopen would
        _adopt(session, current)
        return False
    # Off the event loop: a large file takes a while to parse, and other commands must still be answered.
    store = await asyncio.to_thread(_command, lambda: SessionStore.open(path, lock=True))
    store.no_session = current.no_session
    for warning in store.load_warnings:  # the client's log: what the file lost before this agent read it
        print(f"Warning: {warning}", file=sys.stderr)
    await _stop_work(session)
    _adopt(session, store)
    return False


async def fork(session: AgentSession, entry_id: str) -> dict[str, object]:
    """Continue in a new session holding the branch up to just before user message `entry_id`; returns
    `{text, cancelled}` with that message's text (for the client's editor). Raises CommandError
    (`Invalid entry ID for forking`) for an unknown id or an entry that is not a user message."""
    try:
        path, text = fork_path(session.store, entry_id)
    except ValueError as exc:
        raise _command_error(str(exc)) from None
    store = _command(lambda: _new_store(session, path))
    await _stop_work(session)
    _adopt(session, store, record_model=True)
    return {"text": text, "cancelled": False}


async def clone(session: AgentSession) -> bool:
    """Continue in a new session holding the whole active branch (also for a session with no message yet);
    returns `cancelled` (always False)."""
    await _stop_work(session)
    _adopt(session, _command(lambda: _new_store(session, clone_path(session.store))), record_model=True)
    return False


def successor_store(session: AgentSession, parent_session: str | os.PathLike[str] | None = None, *,
                    entries: Iterable[SessionEntry] = ()) -> SessionStore:
    """The store of a session started from the current one (`new_session`, fork, clone), starting with copies
    of `entries` (ids kept, so entry ids stay valid cursors across a fork): in memory when the process runs
    with `--no-session` (`SessionStore.no_session`), else a new locked file in the session directory with
    `parent_session` in its header. Raises SessionFileError when a file with a message cannot be written."""
    if session.store.no_session:
        return SessionStore.in_memory(session.cwd, entries=entries)
    return SessionStore.create(session.cwd, session.session_dir, parent_session=parent_session, lock=True,
                               entries=entries)


def _new_store(session: AgentSession, path: list[SessionEntry]) -> SessionStore:
    current = session.store
    parent = current.path if current.path is not None and current.on_disk else None
    return successor_store(session, parent, entries=path)


def _adopt(session: AgentSession, store: SessionStore, *, record_model: bool = False) -> None:
    """Make `store` the session's store, then take messages, model, thinking level and context window from its
    branch (`ModelControl.restore`; nothing is written for them). `record_model`: a new store whose branch
    names no model gets the current one recorded, so a resume finds it."""
    context = store.build_context()
    if store is not session.store:
        session.replace_store(store, context.messages)
    else:
        session.agent.messages = list(context.messages)
    session.model_control.restore(context)
    if record_model and context.model is None:
        session.model_control.record_configuration()


async def _stop_work(session: AgentSession) -> None:
    """The work in progress belongs to the session being left: queued messages are dropped, user shell
    commands and the run are aborted and settle first (as `new_session` does)."""
    if session.agent.steering_queue or session.agent.follow_up_queue:
        session.agent.clear_queues()
    await session.user_bash.abort()
    await session.abort()


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _command(build):  # type: ignore[no-untyped-def]
    try:
        return build()
    except SessionFileError as exc:
        raise _command_error(str(exc)) from None


def _command_error(message: str) -> Exception:
    from .agent_session import CommandError

    return CommandError(message)


def fork_file(source: str | os.PathLike[str], cwd: str, session_dir: str | None = None) -> SessionStore:
    """`--fork`: a new locked session for `cwd` holding a copy of `source`'s active branch (ids kept), with
    `parentSession` naming `source`. The source is only read. Raises SessionFileError."""
    original = SessionStore.open(source)
    store = SessionStore.create(cwd, session_dir, parent_session=original.path, lock=True,
                                entries=original.branch())
    store.load_warnings = original.load_warnings
    return store
