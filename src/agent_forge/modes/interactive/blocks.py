"""Transcript renderables for the scrollback (the header: `header.py`): user messages, assistant messages
(Markdown, dimmed thinking, stop reasons) and one-line notices (errors, retries, compaction). Pure functions of
their inputs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...coding.tools.truncate import count_lines
from . import theme
from .keymap import key_hint
from .render import markdown, plain
from ...words import counted

if TYPE_CHECKING:  # rich loads with the first block rendered, after the first paint
    from rich.console import Group
    from rich.padding import Padding
    from rich.text import Text

NOTICE_STYLES = {"info": "grey62", "warning": "yellow", "error": "bold red", "success": "green"}


USER_SHOWN_LINES = 40
USER_SHOWN_CHARS = 8000
"""A user message longer than this (a 5 MB paste) shows its start and how much more was sent: rendering and
writing all of it would take the terminal a minute and bury the conversation."""
USER_EXPANDED_LINES, USER_EXPANDED_CHARS = 2000, 200_000
"""The same limits once Ctrl+O expanded the blocks."""


def user_block(text: str, *, expanded: bool = False, attached: list[str] | None = None) -> Padding:
    """A user message: its text on a shaded band; only its first `USER_SHOWN_LINES` lines (at most
    `USER_SHOWN_CHARS` characters; `expanded`: the larger limits) of a long one, then `… 5,000 more characters
    (80 more lines) not shown`; then the `attached` lines (`user_parts`), dimmed."""
    from rich.padding import Padding

    lines, chars = (USER_EXPANDED_LINES, USER_EXPANDED_CHARS) if expanded else (USER_SHOWN_LINES, USER_SHOWN_CHARS)
    text = text.rstrip("\n")  # trailing line breaks show nothing
    head = "\n".join(text.split("\n", lines)[:lines])[:chars]
    body = plain(head)
    if len(head) < len(text):
        rest = text[len(head):]
        more = _lines_after(head, rest)
        lines_note = f" ({counted(more, 'more line', grouped=True)})" if more else ""
        body.append(f"\n… {len(rest):,} more characters{lines_note} not shown"
                    f"{'' if expanded else key_hint('app.tools.expand', ' ({} to expand)')}; all of it was sent",
                    style="grey50")
    for line in attached or []:
        body.append(f"\n{line}", style="grey50")
    return Padding(body, (0, 1), style=theme.current.user, expand=True)


def custom_block(message: dict[str, Any], *, expanded: bool = False) -> Text | None:
    """A plugin's message meant to be seen (`messages.shown_custom_text`), dimmed and cut as a user message is;
    None for one that is not (`display: false`)."""
    from ...coding.messages import shown_custom_text

    shown = shown_custom_text(message)
    if shown is None:
        return None
    lines, chars = (USER_EXPANDED_LINES, USER_EXPANDED_CHARS) if expanded else (USER_SHOWN_LINES, USER_SHOWN_CHARS)
    head = "\n".join(shown.split("\n", lines)[:lines])[:chars]
    more = f"\n… {len(shown) - len(head):,} more characters not shown" if len(head) < len(shown) else ""
    return plain(head + more, "grey50")


def user_parts(message: dict[str, Any]) -> tuple[str, list[str]]:
    """A user message as shown: the text the user typed, and one line per file its `@` references attached
    (`attached: notes.txt (30 lines)`) and per image (`attached: an image`): the model got the files' text,
    the transcript names them (`completion.attached_files`)."""
    from .completion import attached_files
    from ...coding.paths import path_text

    content = message.get("content")
    parts = [content] if isinstance(content, str) else [p for p in content or [] if isinstance(p, dict)]
    texts = [p if isinstance(p, str) else p.get("text", "") for p in parts
             if isinstance(p, str) or p.get("type") == "text"]
    text, files = attached_files("".join(str(t) for t in texts))
    lines = [f"attached: {path_text(name)} ({counted(count_lines(body), 'line', grouped=True)})"
             for name, body in files]
    return text, lines + ["attached: an image"] * (len(parts) - len(texts))


def _lines_after(head: str, rest: str) -> int:
    """The lines of `rest` (what follows `head`, the part shown) that start after it: a break that ends `head`
    or begins `rest` ends the last line shown; else `rest` begins in the middle of that line, no line more."""
    if head.endswith("\n"):
        return count_lines(rest)
    if rest.startswith("\n"):
        return count_lines(rest[1:])
    return max(0, count_lines(rest) - 1)


def is_long(text: str) -> bool:
    """Whether `user_block` shows only part of `text` (so Ctrl+O has something to expand)."""
    text = text.rstrip("\n")
    return len(text) > USER_SHOWN_CHARS or text.count("\n") >= USER_SHOWN_LINES


def message_text(message: dict[str, Any]) -> str:
    """The text of a user-side message (string content or text blocks); images count as `[image]`."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if isinstance(block, dict):
            parts.append(block.get("text", "") if block.get("type") == "text" else "[image]")
    return "".join(parts)


ANSWER_SHOWN_CHARS = 200_000
"""Of an assistant message's text or thinking block, the characters the scrollback shows; the rest is said in
one line. Wrapping one huge line costs the renderer time that grows faster than its length (a 30 MB answer in
a session file kept the terminal UI loading for minutes); the session keeps it all (`/export` shows it)."""


def assistant_block(message: dict[str, Any], *, show_thinking: bool, with_error: bool = True) -> Group | None:
    """An assistant message: thinking (dimmed, or a one-line marker when hidden), text as Markdown (each at
    most `ANSWER_SHOWN_CHARS`, then how much more there is), and the stop reason when it is an error (unless
    not `with_error`: the live view says it once, with the retry) or an abort. None when there is nothing to
    show."""
    from rich.console import Group

    parts: list[Any] = []
    for block in message.get("content") or []:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "thinking" and str(block.get("thinking", "")).strip():
            shown, more = _shown_part(str(block["thinking"]))
            parts += [_thinking(shown, show_thinking), *(more if show_thinking else [])]
        elif kind == "text" and str(block.get("text", "")).strip():
            shown, more = _shown_part(str(block["text"]))
            parts += [markdown(shown), *more]
    stop = message.get("stopReason")
    if stop == "error" and with_error:
        parts.append(error_notice(message))
    elif stop == "aborted":
        parts.append(notice("aborted", "warning"))
    elif stop == "length":
        parts.append(notice("the answer was cut off at the model's output limit", "warning"))
    return Group(*parts) if parts else None


def _shown_part(text: str) -> tuple[str, list[Text]]:
    """(`text` cut at `ANSWER_SHOWN_CHARS`, [the line saying how much more there is] when it was cut, else [])."""
    if len(text) <= ANSWER_SHOWN_CHARS:
        return text, []
    more = plain(f"… {len(text) - ANSWER_SHOWN_CHARS:,} more characters not shown (the session holds them all; "
                 "/export shows them)", "grey50")
    return text[:ANSWER_SHOWN_CHARS], [more]


def thinking_text(message: dict[str, Any]) -> str:
    """The text of an assistant message's thinking blocks, blank-line separated ("" when it has none)."""
    texts = [str(block.get("thinking", "")).strip() for block in message.get("content") or []
             if isinstance(block, dict) and block.get("type") == "thinking"]
    return "\n\n".join(text for text in texts if text)


def thinking_block(text: str) -> Text:
    """Thinking as shown (dimmed, cleaned)."""
    return _thinking(text, True)


def _thinking(text: str, shown: bool) -> Text:
    from rich.text import Text

    if shown:
        return plain(text.strip(), "italic grey50")
    return Text(f"thinking…{key_hint('app.thinking.toggle', ' ({} to show)')}", style="italic grey50")


def notice(text: str, kind: str = "info") -> Text:
    """One notice line (`kind`: info, warning, error, success), cleaned."""
    return plain(text, NOTICE_STYLES.get(kind, ""))


def whole_message(title: str, message: str) -> list[Text]:
    """A dialog's whole message (Ctrl+O on one shown cut): a dim line naming the dialog, then every line of
    the text, wrapped by the terminal's width, nothing left out."""
    return [notice(f"the whole text of the open question \"{title}\":"), *([plain(message)] if message else [])]


def error_notice(message: dict[str, Any]) -> Text:
    """`error: <the error's message>` for a failed assistant message (`error_summary`)."""
    return notice(f"error: {error_summary(message.get('errorMessage') or 'the request failed')}", "error")


def retry_notice(event: dict[str, Any], hint_ms: object = None) -> Text:
    """`retrying in 2 s, retry 1/3: <error>` for an `auto_retry_start` event (`error_summary`; "attempts"
    count requests, as in `retries ended: <error> (after 4 attempts)`). `hint_ms`, the failed answer's
    `retryAfterMs`, is named when the wait differs from it (the wait is the longer of it and the backoff, or
    the cap): `retrying in 2 s (the server asked for 1 s), ...`."""
    delay_ms = max(0, int(event.get("delayMs", 0)))
    asked = ""
    if isinstance(hint_ms, int) and not isinstance(hint_ms, bool) and hint_ms >= 0 and hint_ms != delay_ms:
        asked = f" (the server asked for {_seconds(hint_ms)})"
    return notice(f"retrying in {_seconds(delay_ms)}{asked}, retry {event.get('attempt')}/"
                  f"{event.get('maxAttempts')}: {error_summary(str(event.get('errorMessage', '')))}", "warning")


def _seconds(ms: int) -> str:
    """`2 s`, `0.5 s`, `0 s`: a wait in milliseconds as shown."""
    seconds = ms / 1000
    return f"{seconds:.0f} s" if seconds >= 1 or seconds == 0 else f"{seconds:.1f} s"


ERROR_SHOWN_CHARS = 300
"""An error notice is one line of at most this many characters (the session keeps the whole text)."""


def error_summary(text: str) -> str:
    """A provider error on one line: `HTTP 500 from <url>: boom (api_error)` → `500 boom (api_error)` (the URL
    is in the session), and as older sessions hold it `500 {"error": {"message": "boom", ...}}` → `500 boom` (the
    JSON body's `error.message`, `message`, `error` or `detail`), whitespace runs joined, cut to
    `ERROR_SHOWN_CHARS`."""
    import re

    from ...ai.overflow import without_http_origin

    text = without_http_origin(text)
    head = re.match(r"(\d{3}) ([{\[].*)\Z", text.strip(), re.S)
    if head is not None:
        found = _body_message(head.group(2))
        if found:
            text = f"{head.group(1)} {found}"
    text = " ".join(text.split())
    return text if len(text) <= ERROR_SHOWN_CHARS else text[:ERROR_SHOWN_CHARS - 1] + "…"


def _body_message(body: str) -> str | None:
    import json

    try:
        data = json.loads(body)
    except ValueError:
        return None
    data = data[0] if isinstance(data, list) and data else data
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    for value in ((error or {}).get("message") if isinstance(error, dict) else error, data.get("message"),
                  data.get("detail")):
        if isinstance(value, str) and value.strip():
            return value
    return None


def compaction_failure(message: str, unresolved_overflow: bool = False) -> str:
    """`Compaction failed: <cause>` (or the bare cause) as the one-line notice `compaction failed: <summary>`."""
    prefix = "Compaction failed: "
    if unresolved_overflow or (message.startswith("Compaction ") and not message.startswith(prefix)):
        return message  # an overflow's advice matters more than one line; `Compaction aborted` says it all
    cause = message[len(prefix):] if message.startswith(prefix) else message
    return f"compaction failed: {error_summary(cause)}"


def compaction_notice(event: dict[str, Any]) -> Text:
    """What a `compaction_end` event did: tokens before, or why it failed (one sentence: `compaction failed:
    500 boom`, the provider's error as `error_summary` shows it; an unresolved overflow's advice in full)."""
    result = event.get("result")
    if event.get("aborted"):
        return notice("compaction aborted", "warning")
    if not result:
        return notice(compaction_failure(str(event.get("errorMessage") or "Compaction failed: unknown error"),
                                          bool(event.get("unresolvedOverflow"))), "error")
    before = result.get("tokensBefore")
    size = f"; {before:,} tokens before" if isinstance(before, int) else ""
    return notice(f"context compacted ({event.get('reason', 'manual')}{size})", "success")
