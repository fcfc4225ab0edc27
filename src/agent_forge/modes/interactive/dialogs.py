"""Plugin dialogs (`select`, `confirm`, `input`, `editor`) shown in the live region and answered from the
editor: for `select` and `confirm` the editor's text filters the options, Up/Down move, Enter picks; for
`input` and `editor` Enter sends the editor's text (prefilled). Escape cancels. Dialogs queue: one at a time,
in arrival order. A dialog whose `timeout` (ms) passes is closed here as the plugin side resolves it."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from typing import Any, Callable, Iterator


from .editor import expand_pastes
from .graphemes import cells
from .keymap import key_hint, with_keys
from .render import clean, fit
from ...words import counted

Fragments = list[tuple[str, str]]
CUT = "class:dim,dialog-cut"
"""The style of the mark standing for a message's rows not shown."""


HINTS = {"choose": ("type to filter · ↑↓ move · enter choose · esc cancel", "↑↓ move · enter choose · esc cancel"),
         "type": ("enter send · {editor.newline} new line · esc cancel", "enter send · esc cancel"),
         "line": ("enter send · esc cancel", "enter send · esc cancel")}
"""The key hint under a dialog, and its shorter form for a narrow terminal."""

APPROVAL_MESSAGE = 100_000
"""An approval question shows the call's own arguments (the request's `message` keeps only 20,000 characters
for protocol clients) up to this many characters; Ctrl+O prints them. A longer call keeps its first and last
halves around a line saying how many characters are not shown (printing 100,000 takes about a second)."""

_OMITTED = re.compile(r"\[… ([\d,]+) characters not shown …\]$")
"""The line standing for the middle of a call longer than `APPROVAL_MESSAGE` (`approvals.call_message`)."""

HOLD_S = 0.3
"""A dialog that opens by itself (a plugin's, an approval question) over a draft ignores Enter this long: no one
answers a question that fast, so that Enter was meant for the message being typed, and so was the text typed
into a select meanwhile: it joins the draft, which comes back when the dialog closes."""


class Dialog:
    """One pending request: `method`, `title`, `options` (select/confirm), the selected `index` (at first the
    option equal to `selected`, when the request gives one)."""

    def __init__(self, request: dict[str, Any], reply: Callable[[dict[str, Any]], None] | None = None):
        self.id = request.get("id")
        self.tool_call_id = request.get("toolCallId")  # an approval question's call (its time is not the call's)
        self.reply = reply  # the mode's own dialogs (`/resume`, `/fork`) answer here, not to a plugin
        self.method = str(request.get("method"))
        self.title = clean(request.get("title", "")) or self.method
        self.message = clean(_message(request))
        options = request.get("options") if self.method == "select" else ["Yes", "No"]
        self.options = [str(o) for o in options or []]
        self.prefill = str(request.get("prefill", "") or "")
        self.placeholder = clean(request.get("placeholder", "") or "")  # `input`: shown dimmed in an empty editor
        self.held_until = 0.0  # monotonic seconds: Enter before then was meant for the draft (`Dialogs.open`)
        self.secret = request.get("secret") is True  # the mode's own `/login`: the editor shows `*`s
        self.shown_all = False  # Ctrl+O printed the whole message above (`Dialogs.show_all`)
        self.cut = False  # the last drawing showed only the message's start and end
        self._wrapped: tuple[int, list[tuple[str, str]]] | None = None  # (width, the message's rows)
        # a confirm highlights No unless the plugin asks for Yes (`default: true`): Enter alone must not delete
        self.index = 1 if self.method == "confirm" and request.get("default") is not True else 0
        if request.get("selected") in self.options:  # a menu of values opens on the current one
            self.index = self.options.index(request["selected"])

    def wrapped(self, width: int) -> list[tuple[str, str]]:
        """The message's rows at `width` (`wrap`), kept for the next redraw at the same width: a long command
        is wrapped once, not on every keystroke."""
        if self._wrapped is None or self._wrapped[0] != width:
            self._wrapped = (width, wrap(self.message, width) if self.message else [])
        return self._wrapped[1]

    @property
    def chooses(self) -> bool:
        return self.method in ("select", "confirm")

    def matches(self, needle: str) -> list[str]:
        needle = needle.strip().lower()
        return [o for o in self.options if needle in o.lower()] if needle else self.options


class Dialogs:
    """The queue of open dialogs; `answer(fields)` sends an `extension_ui_response` (`hooks.ui_response`)."""

    def __init__(self, answer: Callable[[dict[str, Any]], None], editor: Any, changed: Callable[[], None]):
        self._answer, self._editor, self._changed = answer, editor, changed
        self.queue: list[Dialog] = []
        # What the editor held when the first dialog opened (a dialog may open by itself, mid-typing: an
        # approval question, a plugin's select): given back when the last one closes.
        self._draft: tuple[str, dict[str, str]] | None = None
        # Told of each dialog that closes, with its answer's fields (None: withdrawn or timed out).
        self.on_close: Callable[[Dialog, dict[str, Any] | None], None] = lambda dialog, fields: None
        # Commands running whose dialog may open (`expecting`): the editor was emptied when the command was sent,
        # so what it holds when the dialog opens was typed for the dialog (an API key typed fast after /login)
        self._expected = 0
        # Prints a dialog's whole message above the live region (Ctrl+O on a message too long for the rows).
        self.print_message: Callable[[Dialog], None] = lambda dialog: None

    @property
    def current(self) -> Dialog | None:
        return self.queue[0] if self.queue else None

    def open(self, request: dict[str, Any] | Dialog, reply: Callable[[dict[str, Any]], None] | None = None) -> None:
        """Queue a dialog: a plugin's `extension_ui_request`, or the mode's own with `reply` getting the
        answer's fields (`value`, `confirmed` or `cancelled`); or a ready `Dialog` (one that draws itself:
        `/tree`'s `tree_view.TreeDialog`)."""
        dialog = request if isinstance(request, Dialog) else Dialog(request, reply)
        unasked = dialog.reply is None and not isinstance(request, Dialog)  # a plugin's or an approval question
        request = {} if isinstance(request, Dialog) else request
        self.queue.append(dialog)
        timeout = request.get("timeout")
        if isinstance(timeout, (int, float)) and timeout > 0:
            asyncio.get_running_loop().call_later(timeout / 1000, self._expire, dialog)
        if len(self.queue) == 1:
            # the mode's own dialog of a running command (not a plugin's question arriving meanwhile)
            typed = self._editor.buffer.text if self._expected and not unasked else ""
            self._draft = ("", {}) if typed else self._editor.snapshot()
            now = time.monotonic()
            if unasked and self._draft[0]:  # it opened by itself while the user was writing a message
                dialog.held_until = now + HOLD_S
                asyncio.get_running_loop().call_later(HOLD_S, self._release, dialog)
            self._show(dialog, typed)

    def keep(self, draft: tuple[str, dict[str, str]]) -> bool:
        """While a dialog holds the editor, `draft` (a refused prompt given back) goes above what the editor
        gets back when the last dialog closes, its pastes inline; False when none is open."""
        if not self.queue or self._draft is None:
            return False
        text = expand_pastes(*draft)
        self._draft = ("\n".join(part for part in (text, self._draft[0]) if part), self._draft[1])
        return True

    def set_editor_text(self, text: str) -> None:
        """A plugin's `set_editor_text`: the editor's text now, or, while a dialog holds the editor, what the
        editor gets back when the last dialog closes."""
        if self.queue and self._draft is not None:
            self._draft = (text, {})
        else:
            self._editor.set_text(text)

    @contextlib.contextmanager
    def expecting(self) -> Iterator[None]:
        """Within `with` (a command that may open a dialog runs): keys typed since it was sent are the dialog's,
        never the draft that comes back into the editor (nor, sent, the history)."""
        self._expected += 1
        try:
            yield
        finally:
            self._expected -= 1

    def _release(self, dialog: Dialog) -> None:
        """The hold is over: what was typed into a select during it was the message's end, not a filter."""
        typed = self._editor.buffer.text
        if self.current is dialog and dialog.chooses and typed and self._draft is not None:
            self._draft = (self._draft[0] + typed, self._draft[1])
            self._editor.set_text("")
            self._changed()

    def _show(self, dialog: Dialog, typed: str = "") -> None:
        """Put `dialog`'s starting text into the editor (a select's filter, an input's prefill), then `typed`."""
        self._editor.set_text(("" if dialog.chooses else dialog.prefill) + typed)
        self._changed()

    def _expire(self, dialog: Dialog) -> None:
        if dialog in self.queue:
            self._close(dialog)
            self.on_close(dialog, None)

    def _close(self, dialog: Dialog) -> None:
        first = self.queue and self.queue[0] is dialog
        self.queue.remove(dialog)
        if first:
            self._editor.clear()
            if self.queue:
                self._show(self.queue[0])
            elif self._draft is not None:
                self._editor.restore(self._draft)
                self._draft = None
        self._changed()

    def withdraw(self, request_id: object) -> None:
        """Close the dialogs of `request_id` without answering (the question is gone: its tool call ended)."""
        for dialog in [d for d in self.queue if d.id == request_id]:
            self._close(dialog)
            self.on_close(dialog, None)

    def show_all(self) -> bool:
        """Ctrl+O: when the current dialog's message was last drawn cut (its start and end around a mark),
        print all of it above the live region, where the terminal's scrollback keeps it to read before
        answering. False (nothing done) when no message is cut: Ctrl+O then does its usual toggle."""
        dialog = self.current
        if dialog is None or not dialog.cut:
            return False
        dialog.shown_all = True
        self.print_message(dialog)
        self._changed()
        return True

    def move(self, step: int) -> None:
        dialog = self.current
        if dialog is not None:
            count = len(dialog.matches(self._editor.buffer.text))
            dialog.index = (dialog.index + step) % count if count else 0
            self._changed()

    def submit(self) -> None:
        """Enter: answer the current dialog with the highlighted option or the editor's text."""
        dialog = self.current
        if dialog is None or time.monotonic() < dialog.held_until:
            return
        if dialog.chooses:
            matches = dialog.matches(self._editor.buffer.text)
            if not matches:
                return
            choice = matches[min(dialog.index, len(matches) - 1)]
            fields = {"confirmed": choice == "Yes"} if dialog.method == "confirm" else {"value": choice}
        else:
            fields = {"value": self._editor.text()}  # a large prefill or paste is a marker in the buffer
        self._close(dialog)
        self._send(dialog, fields)

    def cancel(self) -> None:
        dialog = self.current
        if dialog is not None:
            self._close(dialog)
            self._send(dialog, {"cancelled": True})

    def _send(self, dialog: Dialog, fields: dict[str, Any]) -> None:
        self.on_close(dialog, fields)
        if dialog.reply is not None:
            dialog.reply(fields)
        else:
            self._answer({"type": "extension_ui_response", "id": dialog.id, **fields})

    def short_hint(self) -> str | None:
        """The open dialog's short key hint (`↑↓ move · enter choose · esc cancel`), or None when none is open:
        while one is, Escape answers it (the spinner shows this instead of its abort hint)."""
        dialog = self.current
        if dialog is None:
            return None
        return "esc cancel" if getattr(dialog, "draw", None) is not None else _hints(dialog)[1]

    def fragments(self, width: int, height: int) -> Fragments:
        """The dialog in at most `height` rows of `width` columns: title, message, the filtered options with
        the highlighted one marked (scrolled to keep it in view, `(3/7)` after the title when not all fit),
        the key hint. Short of rows, the message, then the hint go; in one or two rows the title and the
        highlighted option share one, so a dialog stays usable in any terminal."""
        dialog = self.current
        if dialog is None:
            return []
        draw = getattr(dialog, "draw", None)
        if draw is not None:  # a dialog that draws itself (`/tree`)
            return draw(self._editor.buffer.text, max(width, 1), max(height, 1))
        height, width = max(height, 1), max(width, 1)
        matches = dialog.matches(self._editor.buffer.text) if dialog.chooses else []
        dialog.index = min(dialog.index, max(len(matches) - 1, 0))
        hints = _hints(dialog)
        hint = [("class:dim", hints[0] if len(hints[0]) <= width else hints[1])] if height >= 4 else []
        if dialog.chooses and height < 3:
            dialog.cut = True  # the message has no row, and the title shares one with the choice
            return _rows([_joined_title(dialog, matches, width), *(hint or [("class:dim", hints[1])])][:height],
                         width)
        room = height - 1 - len(hint)
        message = dialog.wrapped(width)
        whole = len(message)
        if dialog.chooses:  # up to 3 options come before the message
            message = head_and_tail(message, max(0, room - min(len(matches), 3)), dialog.shown_all) \
                if height >= 5 else []
        else:
            message = head_and_tail(message, room, dialog.shown_all)
        # Ctrl+O prints it all when any of it is not on screen: rows left out, or a title cut to the width
        dialog.cut = len(message) < whole or any(style == CUT for style, _ in message) \
            or cells(dialog.title) > width
        count = max(min(len(matches), room - len(message)), 0)
        start = max(0, min(dialog.index - count // 2, len(matches) - count))
        options = [("class:dialog-chosen" if at == dialog.index else "", f"{'→' if at == dialog.index else ' '} "
                    f"{clean(option)}") for at, option in enumerate(matches[start:start + count], start)]
        if dialog.chooses and not matches:
            options = [("class:dim", "  (no match)")]
        return _rows([_title(dialog, matches, count), *message, *options, *hint][:height],
                     width)


def _hints(dialog: Dialog) -> tuple[str, str]:
    """`dialog`'s key hint (with the keymap's keys) and its short form (`HINTS`)."""
    hints = HINTS["choose" if dialog.chooses else "line" if dialog.method == "input" else "type"]
    return with_keys(hints[0]).replace(" · (unbound) new line", ""), hints[1]


def _message(request: dict[str, Any]) -> str:
    """The dialog's message: an approval question's call in full (to `APPROVAL_MESSAGE`), else the request's."""
    args = request.get("args")
    if request.get("toolCallId") is None or not isinstance(args, dict):
        return str(request.get("message", "") or "")
    from ..approvals import call_message

    return call_message(request.get("toolName"), args, APPROVAL_MESSAGE)


def _title(dialog: Dialog, matches: list[str], shown: int) -> tuple[str, str]:
    """The title row: `(3/7)` when not every match is shown."""
    position = f" ({dialog.index + 1}/{len(matches)})" if matches and shown < len(matches) else ""
    return ("class:dialog-title", f"{dialog.title}{position}")


def _joined_title(dialog: Dialog, matches: list[str], width: int) -> tuple[str, str]:
    """The title and the highlighted option on one row of `width` columns: `Title (2/4): → No`. The title is
    cut, never the choice: the row must say what Enter picks; with no room for a title, `(2/4) → No` alone."""
    position = f" ({dialog.index + 1}/{len(matches)})" if len(matches) > 1 else ""
    choice = f"→ {clean(matches[dialog.index]) if matches else '(no match)'}"
    suffix = f"{position}: {choice}"
    room = width - cells(suffix)
    if room >= 2 or (room >= 0 and cells(dialog.title) <= room):  # `T…` at least, or the whole title
        return ("class:dialog-title", f"{fit(dialog.title, room)}{suffix}")
    return ("class:dialog-title", f"{position.lstrip()} {choice}".lstrip())


def wrap(text: str, width: int) -> list[tuple[str, str]]:
    """`text`'s lines wrapped to rows of at most `width` terminal columns (wide characters count 2), nothing
    cut: a row per line, more for a long one; measured as prompt_toolkit parts draw it (`graphemes.cells`),
    never broken inside a cluster."""
    from wcwidth import iter_graphemes

    rows: list[tuple[str, str]] = []
    for line in text.split("\n"):
        if line.isascii() and line.isprintable():  # one column a character: cut, not measured (a 100 KB command)
            rows += [("", line[at:at + width]) for at in range(0, max(len(line), 1), width)]
            continue
        row, used = [], 0
        for cluster in iter_graphemes(line):
            size = cells(cluster)
            if row and used + size > width:
                rows.append(("", "".join(row)))
                row, used = [], 0
            row.append(cluster)
            used += size
        rows.append(("", "".join(row)))
    return rows


def head_and_tail(rows: list[tuple[str, str]], room: int, shown_all: bool) -> list[tuple[str, str]]:
    """`rows` in `room` rows: all when they fit, else their start and end around a mark saying how many rows
    are not shown and that Ctrl+O shows them (`shown_all`: that they were printed above). With fewer than 3
    rows, the mark and the end (the title gives the start): what a command does last is never hidden."""
    if len(rows) <= room or room <= 0:
        return rows[:max(room, 0)]
    head = (room - 1) // 2
    tail = room - 1 - head
    hidden = len(rows) - head - tail
    where = "printed in full above" if shown_all else (key_hint("app.tools.expand", "{} shows all") or "not shown")
    chars = sum(int(found.group(1).replace(",", "")) if (found := _OMITTED.match(text)) else len(text)
                for _, text in rows[head:len(rows) - tail])  # a call cut at `APPROVAL_MESSAGE`: its middle too
    mark = (CUT, f"… {counted(hidden, 'more line', grouped=True)}, {counted(chars, 'character', grouped=True)} "
                 f"({where})")
    return [*rows[:head], mark, *rows[len(rows) - tail:]]


def _rows(rows: list[tuple[str, str]], width: int) -> Fragments:
    return [(style, fit(text, width) + "\n") for style, text in rows]


