"""Session events → ACP `session/update` notifications (schema `SessionUpdate`), one `Updates` per session.

Text and thinking deltas become `agent_message_chunk` / `agent_thought_chunk`. A tool call is announced
(`tool_call`, status `pending`) once the model finished writing its arguments, goes `in_progress` when it
starts (one the session asks about first when the user allows it: a rejected call goes `pending` → `failed`), streams bash output as `tool_call_update` content, and ends `completed` or `failed` with its result or
diff (`tool_calls.py`). After each assistant message a `usage_update` gives the context use and the session's
cost; retries and compaction are told as thoughts (or `notice` updates when the client accepts them), so a
slow turn never looks dead.

Every chunk carries a `messageId`: each content block of an assistant message (its thinking, each text between
tool calls) is a message of its own, named `<role>-<timestamp>-<block index>` (`message_key`), so a thought
and the reply it precedes are two messages, and `session/load` replays a stored message under the very ids
its live stream used (`replay.py`). What is said beside the answer (a status thought, the reply of
a command run at once, `aside`) never lands inside it: while a message streams it is held, and sent when that
message ends; a text of another message right after an answer's text starts on a new paragraph, for editors that
join chunks without reading `messageId`.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING, Any, Callable, Iterator

from . import tool_calls

if TYPE_CHECKING:
    from .witness import DiskWitness

Notify = Callable[[dict[str, Any]], None]
"""Sends one `SessionUpdate` object (the translator adds nothing else)."""


class Updates:
    """Listener for one AgentSession's events; `send` gets each `update` object."""

    def __init__(self, session: Any, send: Notify, *, notices: bool = False, witness: DiskWitness | None = None):
        self.session, self.send, self.notices = session, send, notices
        self.witness = witness  # None when edits go to the editor's buffers: the disk is no witness
        self._calls: dict[str, dict[str, Any]] = {}  # toolCallId -> {name, args}
        self._streaming: str | None = None  # the `message_key` of the assistant message streaming now
        self._streamed: dict[str, tuple[str, list[str]]] = {}  # its blocks so far: messageId -> (kind, deltas)
        self._held: list[dict[str, Any]] = []  # asides waiting for it to end
        self._flush_waiters: list[asyncio.Future[None]] = []  # `flushed()` callers waiting for `_held` to go
        self._last_text: str | None = None  # the messageId of the text shown last (None: something came after)
        self._mcp_failing: set[str] = set()  # the servers whose failure was said, failing and restarting since
        self._restored: list[str] = []  # `message_key`s of queued messages the editor never saw (`expect_restored`)
        self._told: list[str] = []  # those told so far

    def expect_restored(self, messages: list[dict[str, Any]]) -> None:
        """`messages` were queued before this process (restored from the file at `session/load`): the editor never
        saw them, so each is told as a user message when it is delivered, under the `messageId` a later replay
        gives it."""
        self._restored = [key for message in messages if (key := message_key(message))]

    def __call__(self, event: dict[str, Any]) -> None:
        handler = _HANDLERS.get(event.get("type", ""))
        if handler is not None:
            handler(self, event)

    # -- the streaming answer -------------------------------------------------------------------------
    def _message_start(self, event: dict[str, Any]) -> None:
        message = event.get("message") or {}
        if message.get("role") == "assistant":
            self._streaming = message_key(message) or uuid.uuid4().hex

    def _message_update(self, event: dict[str, Any]) -> None:
        part = event.get("assistantMessageEvent") or {}
        kind = part.get("type")
        if kind in ("text_delta", "thinking_delta") and part.get("delta"):
            block_id = f"{self._streaming or uuid.uuid4().hex}-{part.get('contentIndex', 0)}"
            shown = "agent_message_chunk" if kind == "text_delta" else "agent_thought_chunk"
            self._streamed.setdefault(block_id, (shown, []))[1].append(str(part["delta"]))
            if kind == "text_delta":
                self._text(str(part["delta"]), block_id)
            else:
                self._send({**chunk("agent_thought_chunk", part["delta"]), "messageId": block_id})
        elif kind == "toolcall_end" and isinstance(part.get("toolCall"), dict):
            call = part["toolCall"]
            self._announce(str(call.get("id")), str(call.get("name")), _args(call.get("arguments")), "pending")

    def _message_end(self, event: dict[str, Any]) -> None:
        message = event.get("message") or {}
        if message.get("role") == "assistant":
            self.send(usage_update(self.session))
            self._release()
        elif message.get("role") == "user" and message_key(message) in self._restored:
            self._tell_restored(message, str(message_key(message)))
        elif message.get("role") == "custom":
            from ...coding.messages import shown_custom_text

            shown = shown_custom_text(message)
            if shown is not None:  # a plugin's message the person is meant to see: a thought, as on replay
                key = message_key(message) or uuid.uuid4().hex
                self.aside({**chunk("agent_thought_chunk", shown), "messageId": key})

    def _tell_restored(self, message: dict[str, Any], key: str) -> None:
        """A restored queued message delivered now: its chunks, their id made unique as the replay makes it (two
        messages queued within one millisecond share a `message_key`: the second is `<key>~2`)."""
        self._restored.remove(key)
        count = self._told.count(key)
        self._told.append(key)
        for update in user_chunks(message, f"{key}~{count + 1}" if count else key):
            self.aside(update)

    def _text(self, text: str, message_id: str) -> None:
        """One chunk of message `message_id`'s text; the first after another message's text starts a paragraph."""
        if self._last_text not in (None, message_id):
            text = "\n\n" + text
        self._last_text = message_id
        self.send({**chunk("agent_message_chunk", text), "messageId": message_id})

    def _send(self, update: dict[str, Any]) -> None:
        if update.get("sessionUpdate") in _SEPARATE:
            self._last_text = None
        self.send(update)

    def aside(self, update: dict[str, Any]) -> None:
        """Send `update`, said beside the answer (a command's reply, a `!command`'s call, a status line): an
        `agent_message_chunk` is a message of its own; what the editor draws between texts (`_HELD`) is held
        while an assistant message streams, and sent in order when it ends."""
        if self._streaming is not None and update.get("sessionUpdate") in _HELD:
            self._held.append(update)
        elif update.get("sessionUpdate") == "agent_message_chunk":
            self._text(str((update.get("content") or {}).get("text") or ""), uuid.uuid4().hex)
        else:
            self._send(update)

    def new_turn(self) -> None:
        """A prompt taken while no run streams: the editor shows its answer as a new turn (no paragraph break)."""
        self._last_text = None

    def flushed(self) -> asyncio.Future[None]:
        """Done once nothing said beside the answer is held (at once when nothing is): a `session/prompt`
        answered after it comes after its command's reply and notices, as ACP orders a turn's updates."""
        waiter = asyncio.get_running_loop().create_future()
        if self._held:
            self._flush_waiters.append(waiter)
        else:
            waiter.set_result(None)
        return waiter

    def in_flight(self) -> list[dict[str, Any]]:
        """What a `session/load` of this open session tells after the stored conversation (`replay`, which
        leaves these calls out): the text and thinking of the assistant message streaming now, so far, under the
        ids its next chunks carry, and the calls under way (`pending` until they run, then `in_progress`)."""
        updates = [{**chunk(kind, "".join(deltas)), "messageId": block_id}
                   for block_id, (kind, deltas) in self._streamed.items()]
        for call_id, call in self._calls.items():
            status = "in_progress" if call.get("started") and not call.get("asked") else "pending"
            shown = self._call_shown(call_id, call["name"], call["args"], status)
            if call.get("terminal"):  # it runs in the editor's terminal, which shows it live
                shown["content"] = [{"type": "terminal", "terminalId": call["terminal"]}]
            updates.append(shown)
        return updates

    def running_calls(self) -> set[str]:
        """The ids of the calls announced and not yet ended (`in_flight` tells them)."""
        return set(self._calls)

    def _release(self) -> None:
        self._streaming = None
        self._streamed = {}
        held, self._held = self._held, []
        for update in held:
            self.aside(update)
        waiters, self._flush_waiters = self._flush_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    # -- tool calls -----------------------------------------------------------------------------------
    def _announce(self, call_id: str, name: str, args: dict[str, Any], status: str) -> None:
        if call_id in self._calls:
            return
        self._calls[call_id] = {"name": name, "args": args}
        self._send(self._call_shown(call_id, name, args, status))

    def _call_shown(self, call_id: str, name: str, args: dict[str, Any], status: str) -> dict[str, Any]:
        cwd = self.session.cwd
        return {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": tool_calls.title_of(name, args),
                "kind": tool_calls.kind_of(name), "status": status, "rawInput": args,
                "locations": tool_calls.locations_of(name, args, cwd),
                "content": tool_calls.pending_content(name, args, cwd)}

    def _tool_start(self, event: dict[str, Any]) -> None:
        """A call that the session will ask about first stays `pending` until the user allows it (`allowed`);
        a rejected one goes from `pending` to `failed`."""
        call_id, name, args = str(event.get("toolCallId")), str(event.get("toolName")), _args(event.get("args"))
        approvals = getattr(self.session, "approvals", None)
        asks = bool(approvals is not None and approvals.would_ask(name, args))
        if call_id not in self._calls:
            self._announce(call_id, name, args, "pending" if asks else "in_progress")
        elif not asks:
            self._send({"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "in_progress"})
        self._calls[call_id].update(started=True, asked=asks)

    def allowed(self, call_id: str) -> None:
        """The user allowed call `call_id`, which waited `pending`: it runs now."""
        call = self._calls.get(call_id)
        if call is not None and call.pop("asked", False):
            self._send({"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "in_progress"})

    def terminal(self, call_id: str, terminal_id: str) -> None:
        """The call runs in the editor's terminal `terminal_id`: embedded in the call, which shows it live."""
        if call_id in self._calls:
            self._calls[call_id]["terminal"] = terminal_id
        self._send({"sessionUpdate": "tool_call_update", "toolCallId": call_id,
                   "content": [{"type": "terminal", "terminalId": terminal_id}]})

    def _tool_update(self, event: dict[str, Any]) -> None:
        call_id = str(event.get("toolCallId"))
        fenced = event.get("toolName") == "bash"
        content = tool_calls.output_content(event.get("partialResult"), fenced=fenced)
        if content:
            self._send({"sessionUpdate": "tool_call_update", "toolCallId": call_id, "content": content})

    def _tool_end(self, event: dict[str, Any]) -> None:
        call_id = str(event.get("toolCallId"))
        call = self._calls.pop(call_id, None) or {"name": str(event.get("toolName")), "args": {}}
        result, failed = event.get("result") or {}, bool(event.get("isError"))
        cwd = self.session.cwd
        change = self.witness.take(call_id) if self.witness is not None else None
        content = tool_calls.result_content(call["name"], call["args"], result, cwd, change, failed)
        if call.get("terminal"):  # the editor shows the output in its terminal
            content = [{"type": "terminal", "terminalId": call["terminal"]}]
        update: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
                                  "status": "failed" if failed else "completed", "content": content}
        details = result.get("details") if isinstance(result, dict) else None
        line = details.get("firstChangedLine") if isinstance(details, dict) else None
        if isinstance(line, int):
            update["locations"] = tool_calls.locations_of(call["name"], call["args"], cwd, line)
        self._send(update)

    def _agent_end(self, event: dict[str, Any]) -> None:
        """Calls announced but never run (the answer was aborted or failed after their arguments) end here;
        so do the asides still held (a message that never ended)."""
        self._release()
        for call_id in list(self._calls):
            if not self._calls[call_id].get("started"):
                del self._calls[call_id]
                self._send({"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "failed"})

    # -- what else the user should see ----------------------------------------------------------------
    def _retry(self, event: dict[str, Any]) -> None:
        self.tell(f"The request failed ({event.get('errorMessage')}); retrying in "
                  f"{int(event.get('delayMs', 0)) / 1000:g} s (retry {event.get('attempt')} of "
                  f"{event.get('maxAttempts')}).", "warning")

    def _compaction_start(self, event: dict[str, Any]) -> None:
        self.tell(f"Compacting the conversation ({event.get('reason')})…", "info")

    def _compaction_end(self, event: dict[str, Any]) -> None:
        if event.get("errorMessage"):
            self.tell(str(event["errorMessage"]), "error")  # it says "Compaction failed: ..." itself
        elif event.get("result"):
            self.tell("Compaction done.", "info")

    def _write_error(self, event: dict[str, Any]) -> None:
        from ...coding.paths import path_text
        from ...coding.persistence import entries_text

        count = event.get("pendingEntries", 0)
        self.tell(f"The session file {path_text(event.get('path'))} cannot be written: {event.get('error')} "
                  f"({entries_text(count, 'wait')} in memory, written once {'it' if count == 1 else 'they'} can "
                  "be).", "error")

    def _write_resumed(self, event: dict[str, Any]) -> None:
        self.tell("The session file is written again.", "info")

    def _mcp_server(self, event: dict[str, Any]) -> None:
        """A server that failed (its command missing, its URL refusing) is said in the session and on stderr
        once: its restarts that fail too (after 1, 2, 4 ... s, then every minute) are not said again until its
        state changes (it connected, stopped, was disabled); then a failure is news again. A prompt going on
        without a server still starting says so (`message`)."""
        name, state = str(event.get("name")), event.get("state")
        if state == "failed":
            if name in self._mcp_failing:
                return
            self._mcp_failing.add(name)
            text = f"MCP server {name!r} failed: {event.get('lastError') or 'unknown error'}"
            restarts = " (while its restarts fail too, this is not said again)" if "restarting in" in text else ""
            self.tell(text + restarts, "error")
            from ...coding.tools.sanitize import print_warning  # only for a failing server

            print_warning(text)
            return
        if state != "starting":  # connected, stopped, disabled: a failure after this is news again
            self._mcp_failing.discard(name)
        if event.get("message"):
            self.tell(str(event["message"]), "warning")

    def tell(self, text: str, severity: str) -> None:
        """A status line the user sees (`status_update`), never inside the streaming answer (`aside`)."""
        self.aside(status_update(text, severity, self.notices))


_HELD = frozenset({"agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update"})
"""What an aside holds while a message streams: what the editor draws in the conversation, between its texts."""
_SEPARATE = frozenset({"tool_call", "tool_call_update", "agent_thought_chunk", "user_message_chunk", "plan"})
"""Updates an editor shows between two texts: the next text is not joined to the last."""

_HANDLERS: dict[str, Callable[[Updates, dict[str, Any]], None]] = {
    "message_start": Updates._message_start, "message_update": Updates._message_update,
    "message_end": Updates._message_end,
    "tool_execution_start": Updates._tool_start, "tool_execution_update": Updates._tool_update,
    "tool_execution_end": Updates._tool_end, "agent_end": Updates._agent_end, "auto_retry_start": Updates._retry,
    "compaction_start": Updates._compaction_start, "compaction_end": Updates._compaction_end,
    "mcp_server_changed": Updates._mcp_server,
    "session_write_error": Updates._write_error, "session_write_resumed": Updates._write_resumed,
}


def status_update(text: str, severity: str, notices: bool) -> dict[str, Any]:
    """A status line (`severity` info, warning or error): a `notice` when the client accepts them, else a
    thought of its own (both are shown; neither is stored, so none is replayed)."""
    if notices:
        return {"sessionUpdate": "notice", "severity": severity, "title": text}
    return {**chunk("agent_thought_chunk", f"\n{text}\n"), "messageId": uuid.uuid4().hex}


def message_key(message: dict[str, Any]) -> str | None:
    """`<role>-<timestamp>` of a stored or streaming message (its Unix ms `timestamp` is set when it starts and
    saved with it), the stem of its chunks' `messageId`s; None without an integer timestamp."""
    stamp = message.get("timestamp")
    if not isinstance(stamp, int) or isinstance(stamp, bool):
        return None
    return f"{message.get('role')}-{stamp}"


def chunk(kind: str, text: str) -> dict[str, Any]:
    """A `ContentChunk` update of text (`agent_message_chunk`, `agent_thought_chunk`, `user_message_chunk`)."""
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def user_chunks(message: dict[str, Any], key: str) -> Iterator[dict[str, Any]]:
    """A user message's text and images as `user_message_chunk`s, their `messageId` `key` (one message: its
    blocks share the id), as a replay and a restored queued message are told."""
    content = message.get("content")
    if isinstance(content, str):
        yield {**chunk("user_message_chunk", content), "messageId": key}
        return
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text":
            yield {**chunk("user_message_chunk", str(block.get("text", ""))), "messageId": key}
        elif isinstance(block, dict) and block.get("type") == "image":
            yield {"sessionUpdate": "user_message_chunk", "messageId": key, "content": {
                "type": "image", "data": str(block.get("data", "")), "mimeType": str(block.get("mimeType", ""))}}


def usage_update(session: Any) -> dict[str, Any]:
    """`usage_update`: tokens of the next request against the model's context window, and the session's cost
    so far in USD (the catalogue's prices)."""
    model = session.model or {}
    stats = session.get_session_stats()
    return {"sessionUpdate": "usage_update", "used": max(0, int(session.compaction.context_tokens())),
            "size": max(0, int(model.get("contextWindow") or 0)),
            "cost": {"amount": float(stats.get("cost") or 0.0), "currency": "USD"}}


def _args(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
