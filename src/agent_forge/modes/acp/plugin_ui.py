"""Plugin dialogs in ACP mode (`ctx.ui`, `plugins/ui.py`): `confirm` and `select` become
`session/request_permission` questions (Yes / No, or one option per choice); `input` and `editor` a one-field
form (`elicitation/create`) when the client takes forms, else they resolve with their defaults (None) and the
user is told so; `notify` is a status line (a
`notice` or a thought), `setTitle` the session's title; the other calls (status, widgets, editor text) have no
place in an editor's agent panel and do nothing. A dialog without an answer (timeout, abort, the client gone)
resolves with its default, as in RPC mode."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any, Awaitable, Callable

from ...plugins.ui import Answer, Fields, PluginUI
from .answers import BadAnswer

Request = Callable[[str, dict[str, Any]], Awaitable[Any]]
_ids = itertools.count(1)


class AcpUI(PluginUI):
    """`ctx.ui` for the plugins of one ACP session; `title(text)` retitles the session in the editor,
    `tell(text, severity)` shows a status line."""

    has_ui = True

    def __init__(self, request: Request, session_id: str, title: Callable[[str], None],
                 tell: Callable[[str, str], None], *, forms: bool = False):
        self._request, self._session_id, self._title, self._tell = request, session_id, title, tell
        self.forms = forms  # the client takes form elicitations (`clientCapabilities.elicitation.form`)
        self._waiting: set[asyncio.Future[Any]] = set()
        self._closed = False

    async def _dialog(self, method: str, fields: Fields, timeout: float | None, default: Any,
                      parse: Callable[[Answer], Any]) -> Any:
        await super()._dialog(method, fields, timeout, default, parse)  # checks `timeout`
        if self._closed:
            return default
        if method not in ("confirm", "select"):
            if not self.forms:
                self._tell(f"A plugin asked for text ({fields.get('title')}); the editor offers no forms "
                           "(elicitation), so it got no answer.", "warning")
                return default
            text = await self._form(fields, timeout)
            return default if text is None else parse({"value": text})
        choices = ([("yes", "Yes", "allow_once"), ("no", "No", "reject_once")] if method == "confirm"
                   else [(f"option-{i}", str(o), "allow_once") for i, o in enumerate(fields.get("options") or [])])
        answer = await self._ask(fields, choices, timeout)
        if answer is None:
            return default
        if method == "confirm":
            return parse({"confirmed": answer == "yes"})
        index = [c[0] for c in choices].index(answer) if answer in [c[0] for c in choices] else -1
        return parse({"value": choices[index][1]}) if index >= 0 else default

    async def _ask(self, fields: Fields, choices: list[tuple[str, str, str]], timeout: float | None) -> str | None:
        """The chosen option id, or None (no answer, cancelled, timed out, dismissed)."""
        message = fields.get("message")
        tool_call = {"toolCallId": f"plugin-dialog-{next(_ids)}", "title": str(fields.get("title")),
                     "kind": "other", "status": "pending",
                     "content": [{"type": "content", "content": {"type": "text", "text": str(message)}}]
                     if message else []}
        asked = asyncio.ensure_future(self._request("session/request_permission", {
            "sessionId": self._session_id, "toolCall": tool_call,
            "options": [{"optionId": i, "name": n, "kind": k} for i, n, k in choices]}))
        return await self._outcome(asked, timeout, _chosen)

    async def _form(self, fields: Fields, timeout: float | None) -> str | None:
        """`input` / `editor` as a one-field form (`elicitation/create`); the text, or None."""
        field: dict[str, Any] = {"type": "string", "title": str(fields.get("title"))}
        if fields.get("placeholder"):
            field["description"] = str(fields["placeholder"])
        if fields.get("prefill") is not None:
            field["default"] = str(fields["prefill"])
        asked = asyncio.ensure_future(self._request("elicitation/create", {
            "mode": "form", "sessionId": self._session_id, "message": str(fields.get("title")),
            "requestedSchema": {"type": "object", "properties": {"text": field}, "required": ["text"]}}))
        answer = await self._outcome(asked, timeout, _form_text)
        return answer

    async def _outcome(self, asked: asyncio.Future[Any], timeout: float | None,
                       read: Callable[[asyncio.Future[Any]], Any]) -> Any:
        """What `read` makes of the client's answer to `asked`; None on timeout or when dismissed."""
        outcome: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        asked.add_done_callback(lambda done: outcome.done() or outcome.set_result(read(done)))
        asked.add_done_callback(self._malformed)
        self._waiting.add(outcome)
        try:
            return await asyncio.wait_for(asyncio.shield(outcome), timeout)
        except asyncio.TimeoutError:
            return None
        finally:
            self._waiting.discard(outcome)

    def _malformed(self, asked: asyncio.Future[Any]) -> None:
        """A malformed answer (`answers.py`) gives the dialog its default, and the user is told why."""
        if not asked.cancelled() and isinstance(asked.exception(), BadAnswer):
            self._tell(f"A plugin's question got its default: {asked.exception()}", "warning")

    def _fire(self, method: str, fields: Fields) -> None:
        if method == "notify":
            self._tell(str(fields.get("message")), str(fields.get("notifyType", "info")))
        elif method == "setTitle":
            self._title(str(fields.get("title")))

    def has_pending(self) -> bool:
        return bool(self._waiting)

    def cancel_pending(self) -> None:
        for outcome in list(self._waiting):
            if not outcome.done():
                outcome.set_result(None)

    def close(self) -> None:
        self._closed = True
        self.cancel_pending()


def _form_text(asked: asyncio.Future[Any]) -> str | None:
    if asked.cancelled() or asked.exception() is not None:
        return None
    answer = asked.result()
    content = answer.get("content") if isinstance(answer, dict) and answer.get("action") == "accept" else None
    text = content.get("text") if isinstance(content, dict) else None
    return text if isinstance(text, str) else None


def _chosen(asked: asyncio.Future[Any]) -> str | None:
    if asked.cancelled() or asked.exception() is not None:
        return None
    answer = asked.result()
    outcome = answer.get("outcome") if isinstance(answer, dict) else None
    if isinstance(outcome, dict) and outcome.get("outcome") == "selected" and isinstance(outcome.get("optionId"), str):
        return outcome["optionId"]
    return None
