"""The interaction API plugins use (`ctx.ui`): dialogs and fire-and-forget requests, headless or over RPC.

Over RPC (seeds 000 and 003, "Plugin Interaction Protocol"), every call writes an `extension_ui_request`
`{type, id, method, ...}` event. Dialogs (`select`, `confirm`, `input`, `editor`) then wait for the client's
`extension_ui_response` with the same `id`; fire-and-forget methods (`notify`, `setStatus`, `setWidget`,
`setTitle`, `set_editor_text`) expect nothing. Timeouts are the agent's: a dialog with `timeout` (seconds here,
milliseconds on the wire) resolves with its default when it expires. Defaults: `None` for select/input/editor,
`False` for confirm; a cancelled dialog, an abort and shutdown resolve with them too. Late answers, unknown
ids and answers to fire-and-forget ids are ignored.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from typing import Callable, Mapping, TypeVar

from ..coding.events import Emit, ExtensionUiRequest

NOTIFY_TYPES = ("info", "warning", "error")
WIDGET_PLACEMENTS = ("aboveEditor", "belowEditor")
Answer = Mapping[str, object]
"""A client's `extension_ui_response` as received: `id`, `value`, `confirmed`, `cancelled`, each checked here."""
Fields = Mapping[str, object]
"""The method's own fields of an `extension_ui_request` (`title`, `options`, ...), JSON-encoded by `emit`."""
_T = TypeVar("_T")


class PluginUI:
    """What `ctx.ui` offers. This base is headless (print and JSON modes): `has_ui` is False, dialogs return
    their defaults at once and fire-and-forget calls do nothing. Arguments are checked in every mode, so a
    plugin's mistake shows up wherever it runs (`TypeError`/`ValueError`)."""

    has_ui = False

    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None:
        """One of `options`, or None (cancelled, timed out, or an answer not among the options)."""
        _check_text("title", title)
        if not isinstance(options, (list, tuple)) or not options or not all(isinstance(o, str) for o in options):
            raise TypeError("select options must be a non-empty list of strings")
        choices = list(options)
        return await self._dialog("select", {"title": title, "options": choices}, timeout, None,
                                  lambda answer: _value(answer) if _value(answer) in choices else None)

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None,
                      default: bool = False) -> bool:
        """True only when the user confirmed; `default=True` preselects Yes (sent as `"default": true`; a
        terminal preselects No otherwise)."""
        _check_text("title", title)
        _check_text("message", message)
        fields = {"title": title, "message": message, **({"default": True} if default is True else {})}
        return await self._dialog("confirm", fields, timeout, False,
                                  lambda answer: answer.get("confirmed") is True and not answer.get("cancelled"))

    async def input(self, title: str, placeholder: str | None = None, *,
                    timeout: float | None = None) -> str | None:
        """The entered text, or None."""
        _check_text("title", title)
        fields = {"title": title, **({"placeholder": _text("placeholder", placeholder)} if placeholder else {})}
        return await self._dialog("input", fields, timeout, None, _value)

    async def editor(self, title: str, prefill: str | None = None, *, timeout: float | None = None) -> str | None:
        """The edited (multi-line) text, or None."""
        _check_text("title", title)
        fields = {"title": title, **({"prefill": _text("prefill", prefill)} if prefill is not None else {})}
        return await self._dialog("editor", fields, timeout, None, _value)

    async def agent_dialog(self, method: str, fields: Fields, *, timeout: float | None = None) -> str | None:
        """The agent's own question (an approval, `modes/approvals.py`): a `select` or `input` request with
        any extra `fields` (`toolCallId`, ...); the answer's `value`, or None (cancelled, timed out, closed)."""
        return await self._dialog(method, fields, timeout, None, _value)

    def notify(self, message: str, notify_type: str = "info") -> None:
        """Show a notification; `notify_type` is "info", "warning" or "error"."""
        _check_text("message", message)
        if notify_type not in NOTIFY_TYPES:
            raise ValueError(f"notify_type must be one of {', '.join(NOTIFY_TYPES)}")
        self._fire("notify", {"message": message, "notifyType": notify_type})

    def set_status(self, key: str, text: str | None = None) -> None:
        """Set the status entry `key`; None clears it."""
        _check_text("key", key)
        self._fire("setStatus", {"statusKey": key, **({"statusText": _text("text", text)} if text is not None else {})})

    def set_widget(self, key: str, lines: list[str] | None = None, *, placement: str = "aboveEditor") -> None:
        """Show lines of text as widget `key` above or below the editor; None clears it."""
        _check_text("key", key)
        if placement not in WIDGET_PLACEMENTS:
            raise ValueError(f"placement must be one of {', '.join(WIDGET_PLACEMENTS)}")
        fields: dict[str, object] = {"widgetKey": key, "widgetPlacement": placement}
        if lines is not None:
            if not isinstance(lines, (list, tuple)) or not all(isinstance(line, str) for line in lines):
                raise TypeError("widget lines must be a list of strings")
            fields["widgetLines"] = list(lines)
        self._fire("setWidget", fields)

    def set_title(self, title: str) -> None:
        """Set the window or tab title."""
        _check_text("title", title)
        self._fire("setTitle", {"title": title})

    def set_editor_text(self, text: str) -> None:
        """Put `text` into the client's input editor."""
        _check_text("text", text)
        self._fire("set_editor_text", {"text": text})

    # -- implementation ------------------------------------------------------------------------------

    async def _dialog(self, method: str, fields: Fields, timeout: float | None, default: _T,
                      parse: Callable[[Answer], _T]) -> _T:
        _check_timeout(timeout)
        return default

    def _fire(self, method: str, fields: Fields) -> None:
        pass

    def resolve(self, answer: Answer) -> bool:
        """Deliver a client's answer; True when it resolved a pending dialog."""
        return False

    def close(self) -> None:
        """Resolve pending dialogs with their defaults; later dialogs return their defaults at once."""

    def cancel_pending(self) -> None:
        """Resolve pending dialogs with their defaults (abort)."""

    def has_pending(self) -> bool:
        """True while a dialog waits for the client's answer."""
        return False


@dataclass
class _Pending:
    future: asyncio.Future[object]
    parse: Callable[[Answer], object]
    default: object


class RpcUI(PluginUI):
    """The interaction protocol of RPC mode; `emit` writes an event record (the session's `emit`)."""

    has_ui = True

    def __init__(self, emit: Emit):
        self._emit = emit
        self._pending: dict[str, _Pending] = {}
        self._closed = False

    @property
    def pending_ids(self) -> list[str]:
        """Ids of the dialogs waiting for an answer, oldest first."""
        return list(self._pending)

    async def _dialog(self, method: str, fields: Fields, timeout: float | None, default: _T,
                      parse: Callable[[Answer], _T]) -> _T:
        _check_timeout(timeout)
        if self._closed:
            return default
        request_id = _new_id()
        future: asyncio.Future[_T] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = _Pending(future, parse, default)  # type: ignore[arg-type]
        request = ExtensionUiRequest(type="extension_ui_request", id=request_id, method=method, **fields)
        if timeout is not None:
            request["timeout"] = max(1, round(timeout * 1000))
        try:
            self._emit(request)
            return await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            return default
        finally:
            self._pending.pop(request_id, None)

    def _fire(self, method: str, fields: Fields) -> None:
        self._emit(ExtensionUiRequest(type="extension_ui_request", id=_new_id(), method=method, **fields))

    def resolve(self, answer: Answer) -> bool:
        request_id = answer.get("id")
        pending = self._pending.get(request_id) if isinstance(request_id, str) else None
        if pending is None or pending.future.done():
            return False  # unknown, late, or a fire-and-forget id: nothing waits for it
        pending.future.set_result(pending.default if answer.get("cancelled") is True else pending.parse(answer))
        return True

    def has_pending(self) -> bool:
        return bool(self._pending)

    def cancel_pending(self) -> None:
        for pending in list(self._pending.values()):
            if not pending.future.done():
                pending.future.set_result(pending.default)

    def close(self) -> None:
        self._closed = True
        self.cancel_pending()


def _value(answer: Answer) -> str | None:
    value = answer.get("value")
    return value if isinstance(value, str) else None


def _check_text(name: str, value: object) -> None:
    _text(name, value)


def _text(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__}")
    return value


def _check_timeout(timeout: object) -> None:
    if timeout is None:
        return
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) \
            or timeout <= 0:
        raise ValueError("timeout must be a positive number of seconds")


def _new_id() -> str:
    from ..coding.session.entries import uuid4

    return uuid4()
