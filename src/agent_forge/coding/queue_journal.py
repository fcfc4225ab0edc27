"""Queued steering and follow-up messages on disk from the moment they are accepted (docs/rpc.md, "Queued messages").

A `steer`, `follow_up` or queued `prompt` is answered long before its message joins the conversation (its
`message_end`); a process killed in between must not lose it. So at acceptance, before the response, a hidden
`custom` entry is appended (`QUEUE_PENDING`, `data: {"kind": "steer" | "followUp", "message": <the user message>,
"sessionId": <the file's session id>}`, never part of the context), as user bash does (`user_bash.py`). It is
settled by:
- delivery: a `message` entry equal to its message later in the file (the `message_end` that delivers it writes
  it; matching on it means there is no window where the message is on disk twice or not at all);
- a drop the user asked for (`clear_queue`, new_session / switch_session / fork / clone, the interactive Escape and
  Alt+Up that move the texts into the editor): one `QUEUE_SETTLED` entry (`data: {"ids": [<pending entry ids>],
  "reason": "cleared" | "session_change"}`).
Messages still queued when the process ends (kill -9, a crash, SIGTERM, stdin EOF, Ctrl+D) stay pending.

A reader tells pending from settled in one pass over the file's entries in append order (`pending_queue`): all
branches, so a tree move, a compaction or a retry's context edit changes nothing. A pending entry copied into
another file (fork, clone, `--fork`) names another session id and is never restored there: the queue belonged to
the process writing the file it was accepted in.

Opening a file (`restore`) puts its pending messages back in the queue, in order, with their kind, once (nothing is
written for it: their pending entries stay the record); the next prompt delivers them, as any message queued while
idle. They are not run on open: a client resuming a session need not be there to see a run start.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Callable, Iterable

from .message_persist import save_json_safe
from .session.entries import QUEUE_PENDING, QUEUE_SETTLED, holds_custom_type
from .session.shapes import context_message

if TYPE_CHECKING:
    from ..agent.agent import Agent
    from ..agent.types import AgentMessage
    from .session.store import SessionStore

QUEUE_KINDS = ("steer", "followUp")
"""`data.kind` of a pending entry: the `streamingBehavior` it was queued with."""


class QueueJournal:
    """The on-disk record of one session's queue (`session.intake.journal`). `store()` is the current store
    (read at each use: new_session and switch_session replace it)."""

    def __init__(self, *, agent: Agent, store: Callable[[], SessionStore]):
        self._agent = agent
        self._store = store
        self._ids: list[tuple[AgentMessage, str]] = []  # queued message → its pending entry id (by identity)

    def record(self, message: AgentMessage, kind: str) -> None:
        """Write the pending entry of `message`, about to be queued as `kind` ("steer" or "followUp"). A value
        JSON cannot hold (an SDK caller's image) is made JSON-safe in `message` itself, as its delivery would
        (`message_persist.py`), so the message entry that settles it is equal to it."""
        self._forget_unqueued()
        store = self._store()
        written: list[str] = []

        def append(message: AgentMessage) -> dict[str, Any]:
            data = {"kind": kind, "message": message, "sessionId": store.session_id}
            entry = store.append_custom(QUEUE_PENDING, data)
            written.append(entry["id"])
            return entry

        entry = save_json_safe(append, message)
        if entry is not None and store.last_cut is not None:  # shrunk to fit a line: the queued message too
            message.clear()
            message.update(copy.deepcopy(entry["data"]["message"]))
        self._ids.extend((message, entry_id) for entry_id in written)

    def clear(self, reason: str = "cleared") -> tuple[list[AgentMessage], list[AgentMessage]]:
        """Empty the queue as the user asked (`Agent.clear_queues`, which sends `queue_update`) and settle what it
        held. Returns (steering, follow-up) messages, oldest first."""
        steering, follow_up = self._agent.clear_queues()
        self.settle([*steering, *follow_up], reason)
        return steering, follow_up

    def settle(self, messages: Iterable[AgentMessage], reason: str) -> None:
        """One `QUEUE_SETTLED` entry naming the pending entries of `messages` (none: nothing is written)."""
        dropped = {id(message) for message in messages}
        ids = [entry_id for message, entry_id in self._ids if id(message) in dropped]
        self._ids = [(message, entry_id) for message, entry_id in self._ids if id(message) not in dropped]
        if ids:
            self._store().append_custom(QUEUE_SETTLED, {"ids": ids, "reason": reason})

    def restore(self) -> int:
        """Queue again the messages the current file left pending (`pending_queue`), in order, with their kind;
        each queued message sends `queue_update`. A message already queued in this process is not added again.
        Returns how many were added."""
        store = self._store()
        self._forget_unqueued()
        known = {entry_id for _, entry_id in self._ids}
        added = 0
        for entry_id, kind, message in pending_queue(store.entries, store.session_id):
            if entry_id in known:
                continue
            message = copy.deepcopy(message)  # the loop owns queued messages; the store's entry stays as read
            self._ids.append((message, entry_id))
            (self._agent.steer if kind == "steer" else self._agent.follow_up)(message)
            added += 1
        return added

    def announce(self) -> None:
        """Send `queue_update` when something is queued: a front end subscribing after `restore` learns of it."""
        if self._agent.steering_queue or self._agent.follow_up_queue:
            self._agent.announce_queue()

    def _forget_unqueued(self) -> None:
        """Drop the ids of messages no longer queued (delivered: their message entry settles them on disk)."""
        queued = {id(message) for message in [*self._agent.steering_queue, *self._agent.follow_up_queue]}
        self._ids = [(message, entry_id) for message, entry_id in self._ids if id(message) in queued]


def pending_queue(entries: list[Any], session_id: str) -> list[tuple[str, str, AgentMessage]]:
    """`(entry id, kind, message)` of the `QUEUE_PENDING` entries of `entries` (a file's, in append order) that were
    written for `session_id` and that neither a `QUEUE_SETTLED` entry names nor an equal `message` entry follows, in
    order. Pending entries whose data is unusable (a hand edit) are left alone."""
    if not holds_custom_type(entries, QUEUE_PENDING):  # the usual file: one quick pass, not a walk of each entry
        return []
    waiting: dict[str, tuple[str, AgentMessage]] = {}
    for entry in entries:
        kind = entry.get("type")
        if kind == "custom":
            _read_custom(entry, session_id, waiting)
        elif kind == "message" and waiting:
            for entry_id, (_, message) in waiting.items():
                if entry.get("message") == message:
                    del waiting[entry_id]  # delivered: its message_end wrote it
                    break
    return [(entry_id, kind, message) for entry_id, (kind, message) in waiting.items()]


def _read_custom(entry: dict[str, Any], session_id: str, waiting: dict[str, tuple[str, AgentMessage]]) -> None:
    data = entry.get("data")
    if not isinstance(data, dict):
        return
    if entry.get("customType") == QUEUE_PENDING:
        message, kind = data.get("message"), data.get("kind")
        if data.get("sessionId") == session_id and kind in QUEUE_KINDS and _is_user_message(message):
            waiting[entry["id"]] = (kind, message)
    elif entry.get("customType") == QUEUE_SETTLED and isinstance(data.get("ids"), list):
        for entry_id in data["ids"]:
            if isinstance(entry_id, str):
                waiting.pop(entry_id, None)


def _is_user_message(message: Any) -> bool:
    return context_message(message) is not None and message.get("role") == "user"
