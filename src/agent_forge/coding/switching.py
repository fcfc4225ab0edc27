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
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, TypeVar

from .errors import CommandError, SessionFileError
from .hooks import HookCalls
from .paths import same_file
from ..words import counted
from .session.entries import SessionEntry
from .session.store import SessionStore
from .session.tree import clone_path, fork_path

if TYPE_CHECKING:
    from ..agent.agent import Agent
    from .models.control import ModelControl
    from .hooks import SessionHooks
    from .queue_journal import QueueJournal
    from .user_bash import UserBash

T = TypeVar("T")


class SessionSwitch:
    """The session changes of one `AgentSession`: `new_session`, `switch_session`, `fork`, `clone`, each asking
    the plugin hooks first (`hooks()`: a veto answers `cancelled`) and `check_written()` before that (it raises
    `CommandError` while entries of the current session cannot be written). `store()` is the current store,
    `replace_store(store, messages)` swaps it; `abort()` and `user_bash.abort()` stop the work in progress;
    `user_bash.restore_pending()` adds the user bash results an opened file left pending, `queue.restore()` queues
    the messages it left queued (`queue_journal.py`). The veto hook is called through `hook_calls`, which a
    client's `abort` stops: a change stopped while asking is cancelled; one whose `session_started` the hooks'
    `abort()` ends stays made."""

    def __init__(self, *, cwd: str, agent: Agent, model_control: ModelControl, hooks: Callable[[], SessionHooks],
                 store: Callable[[], SessionStore], replace_store: Callable[[SessionStore, list[Any]], None],
                 check_written: Callable[[], None], abort: Callable[[], Awaitable[None]],
                 user_bash: UserBash, queue: QueueJournal, hook_calls: HookCalls | None = None):
        self.cwd = cwd
        self.session_dir: str | None = None
        """Sessions root for stores this session creates later (new_session, fork, clone)."""
        self._agent = agent
        self._model_control = model_control
        self._hooks = hooks
        self._store = store
        self._replace_store = replace_store
        self._check_written = check_written
        self._abort = abort
        self._user_bash = user_bash
        self._queue = queue
        self._calls = hook_calls or HookCalls()

    async def _stop_work(self, opened: SessionStore | None = None) -> None:
        """The work in progress belongs to the session being left: queued messages are dropped, user shell
        commands and the run are aborted and settle first. Then the session's entries must be on disk still:
        the stopped run's last message may be what a full disk keeps from the file, and leaving would only
        leave it to a recovery copy (`CommandError` saying the run was stopped; `opened`, the file opened for the
        change, is released whatever ends the change here)."""
        try:
            dropped = 0
            if self._agent.steering_queue or self._agent.follow_up_queue:
                dropped = sum(map(len, self._queue.clear("session_change")))  # emits queue_update
            await self._user_bash.abort()
            await self._abort()
            self._check_written()
        except BaseException as exc:
            if opened is not None:
                from .persistence import release

                release(opened)
            if isinstance(exc, CommandError):
                gone = f" and {counted(dropped, 'queued message')} dropped" if dropped else ""
                raise CommandError(f"{exc} (The run was stopped{gone} first.)") from None
            raise

    async def new_session(self, parent_session: str | None) -> bool:
        """A fresh store (file or memory, as the current one) with `parent_session` in its header and the current
        model, thinking level and context window; returns `cancelled`. Work in progress belongs to the old
        conversation: queued messages are dropped, a run and user shell commands are aborted and settle first."""
        self._check_written()
        return (await self._vetoable("new_session", lambda: self._new_session(parent_session),
                                     parentSession=parent_session))[0]

    async def _new_session(self, parent_session: str | None) -> None:
        await self._stop_work()
        self._replace_store(self.successor_store(parent_session), [])  # `--no-session` holds for the process
        self._model_control.record_configuration()  # model, thinking level, a selected context window

    async def switch_session(self, session_path: str) -> bool:
        """Continue the session in `session_path`; returns `cancelled`. Raises `CommandError` (missing,
        unreadable or locked file, or an empty path) leaving this session as it was."""
        if not session_path.strip():  # "" would resolve to the cwd and fail as "Is a directory"
            raise CommandError("The session path is empty: give the path of a session file")
        self._check_written()
        return (await self._vetoable("switch_session", lambda: self._switch(session_path),
                                     targetSessionFile=session_path))[0]

    async def _switch(self, session_path: str) -> None:
        """Relative paths are from the process cwd."""
        path = Path(os.path.abspath(os.path.expanduser(session_path)))
        current = self._store()
        if current.path is not None and current.on_disk and same_file(path, current.path):
            await self._stop_work()
            current.set_leaf(current.entries[-1]["id"] if current.entry_count else None)  # as a reopen would
            self._adopt(current)
            return
        # Off the event loop: a large file takes a while to parse (and its first context to check: `_adopt`
        # finds it made), and other commands must still be answered.
        store = await asyncio.to_thread(_command, lambda: _opened(path))
        store.no_session = current.no_session
        if store.load_warnings:  # the client's log: what the file lost before this agent read it
            from .tools.sanitize import print_warning  # a path may hold control characters

            for warning in store.load_warnings:
                print_warning(str(warning))
        await self._stop_work(store)
        self._adopt(store)

    async def fork(self, entry_id: str) -> dict[str, Any]:
        """Continue in a new session holding the branch up to just before user message `entry_id`: `{text,
        cancelled}` with that message's text (for the client's editor), also when a plugin vetoed it (seed 003).
        Raises `CommandError` (`Invalid entry ID for forking`) for an unknown id or an entry that is not a user
        message; the entry is checked before the hooks are asked."""
        self._check_written()
        try:
            path, text = fork_path(self._store(), entry_id)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        cancelled, _ = await self._vetoable("fork", lambda: self._fork(path), entryId=entry_id)
        return {"text": text, "cancelled": cancelled}

    async def _fork(self, path: list[SessionEntry]) -> None:
        await self._stop_work()  # first: a refused change must leave no new file (the branch before the message
        self._adopt(_command(lambda: self._new_store(path)), record_model=True)  # is not what the abort writes)

    async def clone(self) -> bool:
        """Continue in a new session holding the whole active branch (also for a session with no message yet);
        returns `cancelled`."""
        self._check_written()
        return (await self._vetoable("clone", self._clone))[0]

    async def _clone(self) -> None:
        await self._stop_work()
        self._adopt(_command(lambda: self._new_store(clone_path(self._store()))), record_model=True)

    async def save_copy(self, entry_id: str | None = None) -> dict[str, Any]:
        """A new session file holding the branch before user message `entry_id` (a fork) or, without it, the
        whole active branch (a clone), while this session stays as it is (ACP, where the editor opens the copy
        with `session/load`): `{cancelled, sessionId, path, text}` (`text`: the fork's message). The hooks are
        asked first (action `fork` / `clone`; a veto answers `cancelled`); their `session_start` does not run,
        since this session does not move. Raises `CommandError`: an unknown entry or one that is not a user
        message, nothing to copy yet, `--no-session` (a copy in memory could not be opened), a file that
        cannot be written."""
        from .persistence import release

        self._check_written()
        if self._store().no_session:
            raise CommandError("Sessions are not stored (--no-session): there is no file to copy into")
        try:
            path, text = fork_path(self._store(), entry_id) if entry_id is not None else (clone_path(self._store()), "")
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if not any(entry["type"] == "message" for entry in path):
            raise CommandError("Nothing to copy yet: " + ("there is no message before that one" if entry_id
                                                          else "the session has no message"))
        details = {"entryId": entry_id} if entry_id is not None else {}
        if await self._vetoed("fork" if entry_id is not None else "clone", details):
            return {"cancelled": True, "sessionId": None, "path": None, "text": text}
        store = _command(lambda: self._new_store(path))
        if store.build_context().model is None:
            self._model_control.record_configuration(store)  # a resume of the copy finds the model
        release(store)
        return {"cancelled": False, "sessionId": store.session_id, "path": str(store.path), "text": text}

    async def _vetoable(self, action: str, change: Callable[[], Awaitable[T]],
                        **details: Any) -> tuple[bool, T | None]:
        """Ask the hooks whether `action` may go on, then run `change()`: `(cancelled, result)`. `details`
        describe the change to the hooks (`targetSessionFile`, `entryId`, ...). An `abort` while the hooks are
        asked cancels the change; one while `session_started` runs ends that (the hooks' `abort()`: the change stays
        made)."""
        hooks = self._hooks()
        if await self._vetoed(action, details):
            return True, None
        path = self._store().path
        result = await change()
        await hooks.session_started(action, str(path) if path else None)
        return False, result

    async def _vetoed(self, action: str, details: dict[str, Any]) -> bool:
        """Whether the hooks veto `action`, or an `abort` stopped them while they were asked."""
        stopped, vetoed = await self._calls.run(self._hooks().before_session_change(action, details))
        return stopped or bool(vetoed)

    def successor_store(self, parent_session: str | os.PathLike[str] | None = None, *,
                        entries: Iterable[SessionEntry] = ()) -> SessionStore:
        """The store of a session started from the current one (`new_session`, fork, clone), starting with
        copies of `entries` (ids kept, so entry ids stay valid cursors across a fork): in memory when the
        process runs with `--no-session` (`SessionStore.no_session`), else a new locked file in the session
        directory with `parent_session` in its header. Raises SessionFileError when a file with a message
        cannot be written."""
        if self._store().no_session:
            return SessionStore.in_memory(self.cwd, entries=entries)
        return SessionStore.create(self.cwd, self.session_dir, parent_session=parent_session, lock=True,
                                   entries=entries)

    def _new_store(self, path: list[SessionEntry]) -> SessionStore:
        current = self._store()
        parent = current.path if current.path is not None and current.on_disk else None
        return self.successor_store(parent, entries=path)

    def _adopt(self, store: SessionStore, *, record_model: bool = False) -> None:
        """Make `store` the session's store, then take messages, model, thinking level and context window from
        its branch (`ModelControl.restore`; nothing is written for them). `record_model`: a new store whose
        branch names no model gets the current one recorded, so a resume finds it."""
        context = store.build_context()
        if store is not self._store():
            self._replace_store(store, context.messages)
        else:
            self._agent.messages = list(context.messages)
        self._model_control.restore(context)
        if record_model and context.model is None:
            self._model_control.record_configuration()
        # A user bash result its run never settled to add (a kill, or a fork cut between): added now, once, as
        # reopening the file would add it.
        self._user_bash.restore_pending()
        self._queue.restore()  # messages a killed process left queued in the file opened (none in a copy)

def _opened(path: Path) -> SessionStore:
    """`path` opened (locked) with its active branch's context made, as `_adopt` takes it."""
    store = SessionStore.open(path, lock=True)
    store.build_context()
    return store


def _command(build: Callable[[], T]) -> T:
    try:
        return build()
    except SessionFileError as exc:
        raise CommandError(str(exc)) from None


def fork_file(source: str | os.PathLike[str], cwd: str, session_dir: str | None = None) -> SessionStore:
    """`--fork`: a new locked session for `cwd` holding a copy of `source`'s active branch (ids kept) and its
    labels (`clone_path`), with `parentSession` naming `source`. The source is only read. Raises
    SessionFileError."""
    original = SessionStore.open(source)
    store = SessionStore.create(cwd, session_dir, parent_session=original.path, lock=True,
                                entries=clone_path(original))
    store.load_warnings = original.load_warnings
    return store
