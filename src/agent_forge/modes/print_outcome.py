"""How one print-mode or JSON-mode run ended, in words for stderr: why there is no answer, or what is odd about it.

`RunWatch` is a session listener that follows one prompt's run (`start` resets it): the last assistant message
(`message_end`, failed attempts an automatic retry hid included) and the retry in progress (`auto_retry_start`
without a successful `auto_retry_end`). `run_problem` says why a run ended without an answer: every way has
its own line (a signal, a cancelled retry with the error it was retrying, an abort, a provider error, tool calls
with no reply after them). `answer_notices` says what a script cannot see in the printed text: an answer cut off
at the output token limit (`stopReason: "length"`), an answer with no text (only thinking, or nothing).
"""

from __future__ import annotations

from typing import Callable

from ..agent.types import AgentMessage
from ..coding.events import AutoRetryStart, SessionEvent
from ..coding.mcp.errors import without_restart_delay
from ..coding.retry import RETRY_CANCELLED

CUT_OFF = "the answer was cut off: the model reached its output token limit (stopReason \"length\")"
CONTEXT_CUT_OFF = "the answer was cut off: the model's context window is full (stopReason \"length\")"
CONTEXT_LIMIT_STOPS = frozenset({"model_context_window_exceeded", "model_length"})
"""`rawStopReason`s of a "length" stop at the context window rather than the output limit (Anthropic, Mistral)."""
NO_TEXT = "the model returned no text"


class RunWatch:
    """Session listener: the last assistant message of the current run and the automatic retry in progress."""

    def __init__(self) -> None:
        self.last: AgentMessage | None = None
        self.retry: AutoRetryStart | None = None  # the `auto_retry_start` of a retry not (yet) successful
        self.final_error: str | None = None  # `finalError` of a retry chain that gave up: says how many attempts
        self.aborted = False

    def start(self) -> None:
        """Forget the previous prompt's run."""
        self.last, self.retry, self.final_error, self.aborted = None, None, None, False

    def __call__(self, event: SessionEvent) -> None:
        kind = event.get("type")
        message = event.get("message")
        if kind == "message_end" and isinstance(message, dict) and message.get("role") == "assistant":
            self.last = message
        elif kind == "auto_retry_start":
            self.retry = event
        elif kind == "auto_retry_end" and event.get("finalError") != RETRY_CANCELLED:
            self.retry = None  # it succeeded, or gave up: then the last message holds the final error
            self.final_error = event.get("finalError") if not event.get("success") else None
        elif kind == "agent_settled":
            self.aborted = bool(event.get("aborted"))


def run_problem(watch: RunWatch, stopped_by: str | None) -> str | None:
    """Why the watched run did not end with an answer, or None when it did; `stopped_by`: the signal's name
    (`SIGTERM`) when one stopped the mode."""
    last = watch.last
    reason = last.get("stopReason") if last else None
    if watch.retry is not None and reason in (None, "error", "aborted"):
        return _retry_problem(watch.retry, stopped_by)
    if stopped_by is not None:
        if last is None or (reason == "aborted" and not _text_of(last)):
            return f"Stopped by {stopped_by} before the model answered."
        if reason == "toolUse":  # the model was done: its tool calls were running
            return f"Stopped by {stopped_by} while the model's tool calls ran, before it answered."
        if reason in ("error", "aborted"):
            detail = f" (last error: {last.get('errorMessage')})" if reason == "error" else ""
            return f"Stopped by {stopped_by} before the model finished its answer{detail}."
        return None
    if last is None:
        return ("The run ended without an answer: it was aborted before the model replied." if watch.aborted
                else "The run ended without an answer: the model was never asked (a plugin may have stopped it).")
    if reason == "aborted":
        return last.get("errorMessage") or "The run was aborted."
    if reason == "error":
        error = watch.final_error or last.get("errorMessage") or "The run ended with an error."
        return error + _retry_after(last)
    if reason == "toolUse" and not _has_tool_calls(last):
        raw = f" (stop reason: {last.get('rawStopReason')})" if last.get("rawStopReason") else ""
        return f"The model stopped for tool use{raw} but sent no tool call, so there is no answer."
    if reason == "toolUse":
        return ("The run ended after the model's tool calls, before it answered"
                + (" (it was aborted)." if watch.aborted else "."))
    return None


def _retry_after(message: AgentMessage) -> str:
    """` (the server asks to retry in 3600 s)` when the failed answer carried a `retry-after` hint; a hint at the
    cap it is read with (`MAX_RETRY_AFTER_MS`: longer ones are cut to it) says ` in a day or more`."""
    from ..ai.providers._response_body import MAX_RETRY_AFTER_MS

    hint = message.get("retryAfterMs")
    if not isinstance(hint, int) or isinstance(hint, bool) or hint <= 0:
        return ""
    if hint >= MAX_RETRY_AFTER_MS:
        return " (the server asks to retry in a day or more)"
    seconds = hint / 1000
    return f" (the server asks to retry in {seconds:.0f} s)" if seconds >= 10 else \
        f" (the server asks to retry in {seconds:g} s)"


def _has_tool_calls(message: AgentMessage) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "toolCall" for b in content)


def _retry_problem(retry: AutoRetryStart, stopped_by: str | None) -> str:
    error = retry.get("errorMessage") or "an error"
    attempt = f"{retry.get('attempt')} of {retry.get('maxAttempts')}"  # retries: "attempts" count requests
    cause = f"by {stopped_by}" if stopped_by else "(the run was aborted)"
    return f"The request failed: {error}; the automatic retry {attempt} was cancelled {cause}, so there is no answer."


def answer_notices(watch: RunWatch, text: str | None) -> list[str]:
    """Notices for stderr about the run's answer (see the module docstring); `text`: the answer's text."""
    notices = [_cut_off(watch.last)] if watch.last and watch.last.get("stopReason") == "length" else []
    if not (text or "").strip():
        notices.append(NO_TEXT + _no_text_detail(watch.last))
    return notices


def _cut_off(message: AgentMessage) -> str:
    return CONTEXT_CUT_OFF if message.get("rawStopReason") in CONTEXT_LIMIT_STOPS else CUT_OFF


def _text_of(message: AgentMessage) -> str:
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    return "".join(b.get("text") or "" for b in blocks if isinstance(b, dict) and b.get("type") == "text").strip()


def _no_text_detail(message: AgentMessage | None) -> str:
    content = message.get("content") if message else None
    blocks = content if isinstance(content, list) else []
    if any(isinstance(b, dict) and b.get("type") == "thinking" for b in blocks):
        return " (only thinking)"
    return ""


NO_RESTART_WAIT = " (print mode does not wait for it to restart)"
NO_START_WAIT = " (print mode does not wait longer for it to start)"
"""How print mode ends a notice: a server still on its first attempt has no restart to wait for."""


class McpNotices:
    """Session listener for print mode, which shows no events: an MCP server a prompt runs without is said on
    stderr, once per server, in the words of its `mcp_server_changed` event (`MCP server <name> is not ready
    (...); this prompt runs without its tools`), and so is a connected server that fails later (`MCP server
    <name> failed: <lastError>`). The `; restarting in N s` of the error is left out: print mode waits for no
    restart, and says so (`NO_RESTART_WAIT`; `NO_START_WAIT` for a server still starting). `say(text)` prints one
    line."""

    def __init__(self, say: Callable[[str], object]) -> None:
        self._say = say
        self._connected: set[str] = set()
        self._told: set[str] = set()

    def __call__(self, event: SessionEvent) -> None:
        if event.get("type") != "mcp_server_changed":
            return
        name, state = str(event.get("name")), event.get("state")
        if state == "connected":
            self._connected.add(name)
            return
        if name in self._told:  # a server retried every minute must not fill stderr
            return
        if event.get("message"):
            text = str(event["message"])
        elif state == "failed" and name in self._connected:
            text = f"MCP server {name} failed: {event.get('lastError') or 'no reason given'}"
        else:
            return
        self._told.add(name)
        ending = NO_START_WAIT if state == "starting" else NO_RESTART_WAIT
        self._say(without_restart_delay(text) + ending)  # the event's "restarting in 1 s" is for clients
