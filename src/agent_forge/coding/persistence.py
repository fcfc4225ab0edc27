"""The session hub's durability promise: every entry is appended to the session file before the event that
reports it reaches a listener, so a client that saw `message_end` can trust the entry is on disk, unless a
`session_write_error` came first: the entry then waits in memory, in order, until a write succeeds
(`session_write_resumed`). `Persistence` watches the store's write state and retries while entries wait.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Any, Callable

from ..ai import json_wire
from .paths import path_text
from .errors import CommandError
from .events import Emit, SessionWriteError, SessionWriteResumed
from .message_persist import persist_message
from .env_waits import wait_from_env
from .session.fit import fit_event
from .session.store import SessionStore
from ..words import counted

if TYPE_CHECKING:
    from pathlib import Path

    from ..agent.events import AgentEvent

WRITE_RETRY_S = wait_from_env("AGENT_FORGE_WRITE_RETRY_MS", 2.0)
"""While session entries wait after a failed write, a write is retried this often (besides every new append),
so a freed disk is noticed while the session is idle: 2 s, or `AGENT_FORGE_WRITE_RETRY_MS`, read at start-up."""


class Persistence:
    """Writes of one session: `store()` is its current store, `closed()` whether it was closed (no retries then),
    `emit` sends `session_write_error` / `session_write_resumed` to the session's listeners."""

    def __init__(self, *, store: Callable[[], SessionStore], closed: Callable[[], bool], emit: Emit):
        self._store = store
        self._closed = closed
        self._emit = emit
        self.write_failures: list[str] = []
        """Each distinct session-file write error of this process, in order (print mode exits 1 when any)."""
        self._write_retry: asyncio.TimerHandle | None = None
        self._early: list[dict[str, Any]] = []  # results saved as their call finished, before their message_end
        self._streaming: dict[str, Any] | None = None  # the assistant message being streamed, from its message_start

    def before_event(self, event: AgentEvent) -> AgentEvent:
        """What listeners get for the loop's `event`, once what it reports is written. A message that is whole
        when it starts (every role but the streamed assistant) is written at its `message_start`, shrunk to fit
        a session line there, so both its events carry what the file holds, never a line the file lacks; the
        assistant's at its `message_end`. A tool's progress (`tool_execution_update`) is shrunk to the same
        size the same way (`fit_event`). Text nothing writes yet (progress, the queue's texts, a streamed
        assistant message's start and updates) gets lone surrogates as U+FFFD here, as messages get them from the
        file (`persist_message`): listeners see what a file would hold. Built-in providers never stream one; a
        custom `stream_fn` (the SDK caller's code) may."""
        kind = event["type"]
        if kind == "message_start" and event["message"].get("role") != "assistant":
            self.persist_early(event["message"])
        elif kind == "message_start":
            self._streaming = json_wire.scrub_in_place(event["message"])
        elif kind == "message_update":
            self._scrub_update(event["assistantMessageEvent"])
        elif kind == "message_end":
            self._streaming = None
            self.persist(event["message"])
        elif kind == "tool_execution_update":
            return fit_event(json_wire.scrub_in_place(event))  # type: ignore[arg-type, return-value]
        elif kind == "queue_update":
            json_wire.scrub_in_place(event)
        return event

    def _scrub_update(self, update: dict[str, Any]) -> None:
        """`update` (a stream event) with lone surrogates as U+FFFD; when its text had one, the streamed message's
        block it belongs to too (the stream's own code put the same text there), so the message a listener
        holds from `message_start` says what the deltas said. Costs O(the event) unless a surrogate is found."""
        changed = False
        for key, value in update.items():  # delta, content, id, toolName; toolCall, partial
            if isinstance(value, str):
                fixed = json_wire.join_surrogates(value)
                changed, update[key] = changed or fixed is not value, fixed
            elif isinstance(value, (dict, list)):
                json_wire.scrub_in_place(value)
        if not changed:
            return  # the usual case: each string came back as it was
        blocks = self._streaming.get("content") if self._streaming is not None else None
        index = update.get("contentIndex")
        if isinstance(blocks, list) and isinstance(index, int) and 0 <= index < len(blocks):
            json_wire.scrub_in_place(blocks[index])

    def persist_early(self, message: dict[str, Any]) -> None:
        """Append `message` now, before its events, once (a second call for the same dict writes nothing): a
        finished tool call's result before its `tool_execution_end` (the loop's `on_tool_result`), since a kill
        -9 while sibling calls still run must not lose what the client was told; a user or custom message
        before its `message_start`. Its `message_end`, later, then writes nothing. The file holds a batch's
        results in completion order; `session/context.py` puts them back in call order."""
        if any(early is message for early in self._early):
            return
        self.persist(message)
        self._early.append(message)

    def persist(self, message: dict[str, Any]) -> None:
        """Append a message entry (unless `persist_early` already did). A failing disk must not kill the run
        the client is watching: the store keeps the entry until a write succeeds and `_on_write_state` tells
        the client."""
        for index, early in enumerate(self._early):
            if early is message:
                del self._early[index]
                return
        persist_message(self._store(), message)  # unencodable or oversized values must not end the run

    def watch(self, store: SessionStore) -> None:
        """Report `store`'s write state from now on (at once when its first write already failed: a fork or
        clone)."""
        store.on_write_state = lambda previous: self._on_write_state(store, previous)
        if store.write_error is not None:
            self._on_write_state(store, None)

    def _on_write_state(self, store: SessionStore, previous: str | None) -> None:
        """Tell listeners at once that the session file's writes failed (`session_write_error`) or caught up
        (`session_write_resumed`), note it on stderr, and retry every `WRITE_RETRY_S` while entries wait."""
        state = store.write_error
        if state is None:
            print(f"agent-forge: the session file is written again: {path_text(store.path)}", file=sys.stderr)
            self._emit(SessionWriteResumed(type="session_write_resumed", path=str(store.path)))
            return
        if state["error"] not in self.write_failures:
            self.write_failures.append(state["error"])
        print(f"agent-forge: the session file could not be written: {path_text(state['path'])}: {state['error']} "
              f"({entries_text(state['pendingEntries'], 'wait')} in memory)", file=sys.stderr)
        self._emit(SessionWriteError(type="session_write_error", **state))
        self._schedule_retry()

    def _schedule_retry(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop (SDK use outside asyncio): the next append retries
        if self._write_retry is None:
            self._write_retry = loop.call_later(WRITE_RETRY_S, self._retry_writes)

    def _retry_writes(self) -> None:
        self._write_retry = None
        if not self._closed() and not self._store().flush():
            self._schedule_retry()

    def stop_retries(self) -> None:
        if self._write_retry is not None:
            self._write_retry.cancel()
            self._write_retry = None

    def check_written(self) -> None:
        """Raise `CommandError` while entries of the current session wait after a failed write and still cannot
        be written: leaving the session (new, switch, fork, clone) would lose them."""
        store = self._store()
        if not store.flush():
            state = store.write_error or {}
            count = state.get("pendingEntries", 0)
            raise CommandError(f"The session file cannot be written ({state.get('error')}): "
                               f"{entries_text(count)} of {path_text(state.get('path'))} "
                               f"{'is' if count == 1 else 'are'} "
                               "not on disk yet. "
                               "Free some space (or make the path writable again) and try again.")


def release(store: SessionStore) -> None:
    """Close `store` (its last try at writing waiting entries); when entries are still not on disk, save the
    whole session to a recovery file and say on stderr where (or that they are lost). Once per store: SIGTERM
    during a close reaches here twice."""
    if store.released:
        return
    store.close()  # a last write that succeeds still reports `session_write_resumed`
    store.on_write_state = None
    if store.write_error is not None:
        store.rescue()
        print(f"agent-forge: {unsaved_report(store)}", file=sys.stderr)


def unsaved_report(store: SessionStore) -> str | None:
    """What `release` said of `store` (None when every entry is on disk or it was not released): `N session
    entries could not be written to <path> (<OS error>): ` and where the whole session was saved or that they
    are lost. The interactive mode says it again once its terminal is back (stderr was its log meanwhile)."""
    state = store.write_error
    if state is None or not store.released:
        return None
    lost = "it is lost" if state["pendingEntries"] == 1 else "they are lost"
    fate = lost if store.recovered is None else _rescued_text(*store.recovered)
    return (f"{entries_text(state['pendingEntries'])} could not be written to {path_text(state['path'])} "
            f"({state['error']}): {fate}")


def _rescued_text(path: Path, session_id: str) -> str:
    """Where the recovery copy went and how to resume it: by its path, which works from any directory (a copy in
    the temp dir is among no directory's sessions, so its id alone would find nothing)."""
    return (f"the whole session is saved to {path_text(path)} as session {session_id}; resume it with --session "
            f"{resume_argument(path)}")


def resume_argument(path: Path) -> str:
    """`path` as a `--session` argument to paste into a shell: `shlex`-quoted, or, when it holds a character a
    terminal must not get raw (`path_text` would escape it), in bash's `$'...'` quoting, which both shows the
    escape and gives the shell the real character."""
    import shlex

    text = str(path)
    if path_text(text) == text:
        return shlex.quote(text)
    return "$'" + "".join(map(_ansi_c, text)) + "'"


def _ansi_c(char: str) -> str:
    """`char` inside bash's `$'...'`: `\\'` and `\\\\` escaped, as it is when printable, else `\\uXXXX` or
    `\\UXXXXXXXX`."""
    if char in "\\'":
        return "\\" + char
    if char.isprintable():
        return char
    return f"\\U{ord(char):08x}" if ord(char) > 0xFFFF else f"\\u{ord(char):04x}"


def entries_text(count: int, verb: str = "") -> str:
    """`1 session entry`, `3 session entries`; with `verb` (`wait`) also its agreeing form (`waits`)."""
    text = counted(count, "session entry", "session entries")
    return f"{text} {verb + 's' if count == 1 else verb}" if verb else text
