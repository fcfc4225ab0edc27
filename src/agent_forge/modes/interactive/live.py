"""What the live region shows above the editor while the agent works: the streaming message's tail (thinking
dimmed), running tool calls, a spinner with the elapsed time, and the queued steering / follow-up messages.
`fragments` builds prompt_toolkit formatted text from it; its cost is bounded by the screen size."""

from __future__ import annotations

import time
from typing import Any

from .graphemes import drawn
from .keymap import key_hint
from .render import clean, one_line
from .stream import StreamTail, spinner_frame, wrap
from .tool_blocks import ToolCall, running_line

Fragments = list[tuple[str, str]]


WIDGET_LINES = 10
"""Rows one plugin widget may take above the editor (a longer one ends with a `… N more widget lines` row)."""


class LiveState:
    """The live region's model; the event view changes it, the app redraws it (`fragments`)."""

    def __init__(self) -> None:
        self.working = False
        self.started = 0.0  # monotonic seconds when the run began
        self.activity = ""  # "compacting context…", "retrying in 2 s…": shown beside the spinner
        self.text = StreamTail()
        self.thinking = StreamTail(max_lines=8)
        self.tools: dict[str, ToolCall] = {}
        self.shells: dict[int, ToolCall] = {}  # `!` commands: theirs alone to end, never a run's end (`stop`)
        self.steering: list[str] = []
        self.follow_up: list[str] = []
        self.widgets: dict[str, list[str]] = {}  # plugin `setWidget` lines by key
        self.show_thinking = False
        # session calls the UI awaits outside a run (a branch summary): what each waits for, since when
        self.operations: dict[int, tuple[str, float]] = {}
        self.interrupts = 0  # Escape / Ctrl+C presses that aborted something: a call awaited sees one came

    def start(self) -> None:
        self.working, self.started, self.activity = True, time.monotonic(), ""
        self.new_message()

    def stop(self) -> None:
        self.working, self.activity = False, ""
        self.tools.clear()
        self.new_message()

    def begin(self, activity: str) -> int:
        """A session call outside a run starts waiting (`activity`: "summarising the branch left…"); returns the
        token `end` takes. The spinner shows it while no run does."""
        token = max(self.operations, default=0) + 1
        self.operations[token] = (activity, time.monotonic())
        return token

    def end(self, token: int) -> None:
        self.operations.pop(token, None)

    @property
    def busy(self) -> bool:
        """Whether anything runs that Escape stops and the spinner shows: a run, its tools, a `!` command, a
        session call awaited outside a run (`begin`)."""
        return bool(self.working or self.tools or self.shells or self.operations)

    def new_message(self) -> None:
        self.text, self.thinking = StreamTail(), StreamTail(max_lines=8)

    def fragments(self, width: int, height: int) -> Fragments:
        """The region's lines above the editor (at most about `height` rows) for a `width`-column screen: the
        streaming message, running calls, queued messages and plugin widgets (the spinner: `spinner`), each
        row drawn as prompt_toolkit parts must show it (`graphemes.drawn`), once."""
        out: Fragments = []
        if self.show_thinking and not self.thinking.blank():
            _drawn_rows(out, self.thinking.rows(width, min(4, height)), "class:thinking")
        _drawn_rows(out, self.text.rows(width, max(1, height - 4)), "")
        now = time.monotonic()
        for call in [*self.tools.values(), *self.shells.values()]:
            _rows(out, [running_line(call, spinner_frame(now - call.started), width)], "class:tool")
            if call.partial and height > 2:  # a short terminal keeps the call's own row (its time), not its output
                _drawn_rows(out, _last_rows(call.partial, width, min(3, height - 2)), "class:dim")
        for label, texts in (("steer", self.steering), ("follow-up", self.follow_up)):
            _rows(out, [f"{label}: {one_line(t, width - len(label) - 2)}" for t in texts], "class:queued")
        for lines in self.widgets.values():
            shown = lines if len(lines) <= WIDGET_LINES else lines[:WIDGET_LINES - 1]
            _rows(out, [clean(line) for line in shown], "")
            if len(shown) < len(lines):
                _rows(out, [f"… {len(lines) - len(shown)} more widget lines"], "class:dim")
        return out

    def spinner(self, width: int, keys: str | None = None) -> str:
        """The run's spinner, elapsed time and what it waits for (`⠋ thinking… (3 s · esc to interrupt)`, naming
        the key the keymap gives `app.interrupt`, left out when it has none), at most `width` columns, or ""
        when no run waits for the model (running calls show their own); outside a run, the latest session call
        awaited (`begin`: `⠋ summarising the branch left… (3 s · esc to interrupt)`). It is drawn in the rule
        above the editor, not on a row of its own: a row that comes with each run and goes at its end is a blank
        row left under the footer once the screen is full (`resize.InlineApplication`). `keys`: what the keys do
        instead, shown in place of the abort hint (an open dialog's: Escape answers the dialog then)."""
        if self.tools or not (self.working or self.operations):
            return ""
        now = time.monotonic()
        if self.working:
            started, note = self.started, self.activity or ("thinking…" if self.text.blank() else "")
        else:
            note, started = self.operations[max(self.operations)]  # the latest call's
        head = f"{spinner_frame(now - started)} {note + ' ' if note else ''}({now - started:.0f} s"
        key = key_hint("app.interrupt")
        hint = f" · {'esc' if key == 'escape' else key} to interrupt" if key else ""  # short: it shares the rule
        hint = f" · {keys}" if keys else hint
        for tail in (hint + ") ", ") "):
            if len(head) + len(tail) <= width:
                return head + tail
        return one_line(head + ")", width)

    def has_rows(self) -> bool:
        """Whether `fragments` has any row to show (the live region's part above the editor is left out
        when not)."""
        return bool(self.tools or self.shells or self.steering or self.follow_up or self.widgets
                    or not self.text.blank() or (self.show_thinking and not self.thinking.blank()))

    def tool_started(self, event: dict[str, Any]) -> None:
        self.tools[str(event.get("toolCallId"))] = ToolCall(str(event.get("toolName")), event.get("args") or {})

    def tool_updated(self, event: dict[str, Any]) -> None:
        call = self.tools.get(str(event.get("toolCallId")))
        if call is not None:
            from .tool_blocks import result_text

            call.partial = clean(result_text(event.get("partialResult")))[-2000:]


def _rows(out: Fragments, rows: list[str], style: str) -> None:
    _drawn_rows(out, [drawn(row) for row in rows], style)


def _drawn_rows(out: Fragments, rows: list[str], style: str) -> None:
    """`rows` drawn already (`stream.wrap` draws what it measures), one fragment each: no cluster spans two."""
    for row in rows:
        out.append((style, row + "\n"))


def _last_rows(text: str, width: int, count: int) -> list[str]:
    """The last `count` screen rows of `text` wrapped at `width` (a long line is several rows, not one)."""
    rows: list[str] = []
    for line in reversed(text.rstrip("\n").split("\n")[-count:]):
        rows[:0] = wrap(line, width, count - len(rows))
        if len(rows) >= count:
            break
    return rows
