"""Session events to the screen: finished messages, tool blocks and notices go to the scrollback; the
streaming message, running tools, the spinner and the queues go to the live region (`LiveState`).

The view is one session listener (`AgentSession.subscribe`); it never drives the session itself, except for
handing plugin dialogs to `dialogs.Dialogs` (`open_dialog`)."""

from __future__ import annotations

from typing import Any, Callable

from ...coding.paths import path_text
from ..approvals import REJECT_TEXT, REJECT_WHY
from .blocks import (assistant_block, compaction_notice, custom_block, error_notice, error_summary, is_long, notice,
                     retry_notice, thinking_text, user_block, user_parts)
from .live import LiveState
from .tool_blocks import ToolCall, tool_block

GAP = ""  # rendered as an empty line, as Text("") is
"""An empty line after each message and tool block, as between paragraphs."""
DIALOGS = ("select", "confirm", "input", "editor")
REJECTIONS = (REJECT_TEXT, REJECT_WHY)


class EventView:
    """Listener for one session. `print_` writes renderables to the scrollback; `changed` asks for a redraw;
    `footer_changed` for a footer refresh; `set_editor_text` and `open_dialog` serve plugin requests."""

    def __init__(self, live: LiveState, *, print_: Callable[..., None], changed: Callable[[], None],
                 footer_changed: Callable[[], None], set_editor_text: Callable[[str], None],
                 open_dialog: Callable[[dict[str, Any]], None], footer_status: dict[str, str],
                 set_title: Callable[[str], None] = lambda title: None):
        self.live = live
        self._print, self._changed, self._footer_changed = print_, changed, footer_changed
        self._set_editor_text, self._open_dialog, self._set_title = set_editor_text, open_dialog, set_title
        self._status = footer_status
        self.expanded = False  # Ctrl+O: full tool output in later blocks
        self.last_block: Callable[[bool], Any] | None = None  # the last collapsible block, by `expanded`
        self.last_thinking = ""  # the last answer's thinking: Ctrl+T shows it again (the scrollback is printed)
        self._compacting_alone = False
        self._failed: dict[str, Any] | None = None  # a failed answer: its error shows at agent_end, once
        self._retrying = False  # between auto_retry_start and auto_retry_end
        self._partial_shown = False  # the last answer printed failed (a retry leaves it out of the context)

    def __call__(self, event: dict[str, Any]) -> None:
        handler = getattr(self, f"_on_{event.get('type')}", None)
        if handler is not None:
            handler(event)
            self._changed()

    # -- the run ---------------------------------------------------------------------------------------
    def _on_agent_start(self, event: dict[str, Any]) -> None:
        if not self.live.working:
            self.live.start()

    def _on_agent_end(self, event: dict[str, Any]) -> None:
        """A failed answer's error, unless it is retried: the retry notice then says it (one line a try)."""
        if event.get("willRetry") or self._retrying:  # `auto_retry_start` / `auto_retry_end` say it
            return
        failed, self._failed = self._failed, None
        if failed is not None:
            self._print(error_notice(failed), GAP)
        messages = event.get("messages") or []
        if messages and isinstance(messages[-1], dict) and messages[-1].get("role") == "toolResult":
            # a run ends on a tool result only when aborted during (or right after) its tools: no aborted
            # answer says so, as it does for an abort while the model streams
            self._print(notice("aborted", "warning"), GAP)

    def _on_agent_settled(self, event: dict[str, Any]) -> None:
        self.live.stop()
        self._footer_changed()

    def _on_message_start(self, event: dict[str, Any]) -> None:
        if event["message"].get("role") == "assistant":
            self.live.new_message()

    def _on_message_update(self, event: dict[str, Any]) -> None:
        update = event.get("assistantMessageEvent") or {}
        kind = update.get("type")
        if kind == "text_delta":
            self.live.text.feed(update.get("delta", ""))
        elif kind == "thinking_delta":
            self.live.thinking.feed(update.get("delta", ""))

    def _on_message_end(self, event: dict[str, Any]) -> None:
        message = event["message"]
        role = message.get("role")
        if role == "user":
            text, attached = user_parts(message)
            if is_long(text):  # a long paste: Ctrl+O can show more of it
                self.show_collapsible(lambda expanded: user_block(text, expanded=expanded, attached=attached))
            else:
                self._print(user_block(text, attached=attached), GAP)
        elif role == "custom" and (block := custom_block(message)) is not None:
            self._print(block, GAP)
        elif role == "assistant":
            self._failed = message if message.get("stopReason") == "error" else None
            block = assistant_block(message, show_thinking=self.live.show_thinking, with_error=False)
            self.last_thinking = thinking_text(message)
            self.live.new_message()
            self._partial_shown = block is not None and self._failed is not None
            if block is not None:  # a failed one's error or retry note comes right under it
                self._print(*((block,) if self._failed is not None else (block, GAP)))
            self._footer_changed()

    def _on_tool_execution_start(self, event: dict[str, Any]) -> None:
        self.live.tool_started(event)

    def _on_tool_execution_update(self, event: dict[str, Any]) -> None:
        self.live.tool_updated(event)

    def _on_tool_execution_end(self, event: dict[str, Any]) -> None:
        call = self.live.tools.pop(str(event.get("toolCallId")), None) or ToolCall(
            str(event.get("toolName")), {})
        call.finish()
        result, is_error = event.get("result"), bool(event.get("isError"))
        self.show_collapsible(lambda expanded: tool_block(call, result, is_error, expanded=expanded))

    def show_collapsible(self, block: Callable[[bool], Any]) -> None:
        """Print a block Ctrl+O can expand (a tool call's, a `!` command's): `block(expanded)` builds it."""
        self.last_block = block
        self._print(block(self.expanded), GAP)

    def _on_queue_update(self, event: dict[str, Any]) -> None:
        self.live.steering = [_queued(text) for text in event.get("steering") or []]
        self.live.follow_up = [_queued(text) for text in event.get("followUp") or []]

    # -- retries, compaction, errors ---------------------------------------------------------------------
    def _on_auto_retry_start(self, event: dict[str, Any]) -> None:
        if self._partial_shown:  # the session leaves the failed attempt out of the conversation: say so
            self._print(notice("(interrupted: this partial answer is left out; retrying)", "info"))
            self._partial_shown = False
        hint = (self._failed or {}).get("retryAfterMs")
        self._failed, self._retrying = None, True
        self._print(retry_notice(event, hint))
        self.live.activity = f"retrying (retry {event.get('attempt')}/{event.get('maxAttempts')})"

    def _on_auto_retry_end(self, event: dict[str, Any]) -> None:
        self.live.activity = ""
        failed, self._failed, self._retrying = self._failed, None, False
        if not event.get("success"):  # counted as print mode and `finalError` count: requests (`retry.py`)
            from ...coding.retry import RETRY_CANCELLED, requests_made, with_attempts

            if event.get("finalError") == RETRY_CANCELLED:  # the event's error is only "Retry cancelled": once
                self._print(notice(with_attempts("retry cancelled", requests_made(event)), "error"))
                return
            error = (failed or {}).get("errorMessage") or event.get("finalError") or "failed"
            summary = with_attempts(error_summary(str(error)), requests_made(event))
            self._print(notice(f"retries ended: {summary}", "error"))

    def _on_compaction_start(self, event: dict[str, Any]) -> None:
        self._compacting_alone = not self.live.working  # `/compact` while idle: no run settles it
        if self._compacting_alone:
            self.live.start()
        self.live.activity = f"compacting context ({event.get('reason')})"

    def _on_compaction_end(self, event: dict[str, Any]) -> None:
        self.live.activity = ""
        if self._compacting_alone:
            self.live.stop()
            self._compacting_alone = False
        if event.get("result") or event.get("reason") != "manual":  # `/compact` reports its own failure
            self._print(compaction_notice(event))
        self._footer_changed()

    def _on_session_write_error(self, event: dict[str, Any]) -> None:
        from ...coding.persistence import entries_text

        self._print(notice(f"cannot write the session file {path_text(event.get('path'))}: {event.get('error')} "
                           f"({entries_text(event.get('pendingEntries', 0), 'wait')} in memory)", "error"))

    def _on_session_write_resumed(self, event: dict[str, Any]) -> None:
        self._print(notice("the session file is written again", "success"))

    def _on_extension_error(self, event: dict[str, Any]) -> None:
        self._print(notice(f"plugin {path_text(event.get('extensionPath'))} failed in {event.get('event')}: "
                                  f"{event.get('error')}", "error"))

    def _on_context_window_changed(self, event: dict[str, Any]) -> None:
        self._footer_changed()

    def _on_thinking_level_changed(self, event: dict[str, Any]) -> None:
        self._footer_changed()

    def _on_session_info_changed(self, event: dict[str, Any]) -> None:
        self._footer_changed()  # e.g. a plugin named the session: the footer's heading shows the name

    # -- plugin requests ---------------------------------------------------------------------------------
    def _on_extension_ui_request(self, event: dict[str, Any]) -> None:
        method = event.get("method")
        if method == "notify":
            kind = event.get("notifyType") if event.get("notifyType") in ("warning", "error") else "info"
            self._print(notice(str(event.get("message", "")), kind))
        elif method == "setStatus":
            self._set_status(event)
        elif method == "setWidget":
            self._set_widget(event)
        elif method == "setTitle":
            self._set_title(str(event.get("title", "")))
        elif method == "set_editor_text":
            self._set_editor_text(str(event.get("text", "")))
        elif method in DIALOGS:
            call = self.live.tools.get(str(event.get("toolCallId")))
            if call is not None:  # an approval question: its call waits, it does not run
                call.pause()
            self._open_dialog(event)

    def dialog_closed(self, dialog: Any, fields: dict[str, Any] | None) -> None:
        """A dialog closed with the answer `fields` (None: withdrawn, timed out): an approval question's call
        runs from now on, or is rejected."""
        call = self.live.tools.get(str(dialog.tool_call_id)) if dialog.tool_call_id else None
        if call is not None:
            call.resume()
            if fields is None or fields.get("cancelled") or fields.get("value") in REJECTIONS:
                call.rejected = True

    def _set_status(self, event: dict[str, Any]) -> None:
        key, text = str(event.get("statusKey", "")), event.get("statusText")
        if text:
            self._status[key] = str(text)
        else:
            self._status.pop(key, None)

    def _set_widget(self, event: dict[str, Any]) -> None:
        key, lines = str(event.get("widgetKey", "")), event.get("widgetLines")
        if lines:
            self.live.widgets[key] = [str(line) for line in lines]
        else:
            self.live.widgets.pop(key, None)


def _queued(text: Any) -> str:
    """A queued message as its row shows it: the typed text, `[attached: notes.txt]` for each file it attached
    (not the file's text)."""
    from .completion import attached_files

    typed, files = attached_files(str(text))
    return typed + "".join(f" [attached: {name}]" for name, _ in files)
