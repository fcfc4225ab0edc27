"""Compact blocks for tool calls, printed into the scrollback when a call ends.

read: the path and line range; write: the new content as added lines; edit: the coloured diff; bash: the
command, the tail of its output, the exit status and the duration; other tools: name, arguments, output tail.
`expanded` (Ctrl+O) shows every line instead of the tail. Everything shown is cleaned (`render.clean`).
"""

from __future__ import annotations

import json
import re
import time
from typing import TYPE_CHECKING, Any

from . import theme
from ...coding.paths import path_text
from ...coding.approvals import REJECTED, rejection_reason
from ...coding.tools.truncate import count_lines
from .keymap import key_hint
from .render import clean, fit
from ...words import counted

if TYPE_CHECKING:  # rich loads with the first block rendered, after the first paint
    from rich.padding import Padding
    from rich.text import Text


def EXPAND() -> str:  # noqa: N802 (reads as the constant it stands for)
    """` (ctrl+o to expand)` with the key the keymap gives (nothing when unbound)."""
    return key_hint("app.tools.expand", " ({} to expand)")

TAIL_LINES = 5
"""Output lines shown of a collapsed block."""
DIFF_LINES = 20
"""Diff (or written content) lines shown of a collapsed write/edit block."""
MAX_EXPANDED_LINES = 2000
"""Even expanded, a block stops here: a 10,000-line output would bury the conversation."""
_EXIT = re.compile(r"Command exited with code (\d+)")
_STOPPED = re.compile(r"Command timed out|aborted|cancelled|interrupted", re.IGNORECASE)
_NOTE = re.compile(r"\[Showing (the )?last [^\n]*\]|Command exited with code \d+|Command timed out after [^\n]*")
"""A note the bash tool appends to its output after a blank line (`truncate.append_notice`)."""


class ToolCall:
    """One running tool call: its name, arguments and start time (monotonic seconds). `timed` False: a call
    read back from the session file, whose duration no entry records (its block shows none)."""

    def __init__(self, name: str, args: dict[str, Any], *, timed: bool = True):
        self.name, self.args, self.started = name, args if isinstance(args, dict) else {}, time.monotonic()
        self.timed = timed
        self.ended: float | None = None
        self.waited, self._waiting = 0.0, None  # seconds spent on approval questions; since when, while asked
        self.rejected = False  # its approval question was answered "reject", cancelled or timed out
        self.partial = ""  # the output's tail while it runs
        self.lines = 0  # newlines of output streamed so far (a `!` command's total, when its output is cut)

    def title(self) -> str:
        """One line naming the call: `$ command`, `read path:1-20`, `edit path`, or `name {args}`."""
        args = self.args
        if self.name == "bash":
            command = args.get("command")  # none: arguments that were no JSON object with a command
            return f"$ {clean(command)}" if isinstance(command, str) and command.strip() else "bash (no command)"
        if self.name == "read":
            return f"read {path_text(args.get('path', ''))}{_line_range(args)}"
        if self.name in ("write", "edit"):
            return f"{self.name} {path_text(args.get('path', ''))}"
        return f"{path_text(self.name)} {clean(_short_json(args))}"  # a model may send any name

    def elapsed(self) -> float | None:
        """Seconds from the start to now, or to `finish` (a block built again later shows the same time), less
        the time its approval questions were open: the tool's own time; None for a call that is not `timed`."""
        if not self.timed:
            return None
        end = self.ended or time.monotonic()
        asked = end - self._waiting if self._waiting is not None else 0.0
        return max(0.0, end - self.started - self.waited - asked)

    @property
    def waiting(self) -> bool:
        """Whether an approval question about it is open."""
        return self._waiting is not None

    def pause(self) -> None:
        """An approval question about it opened: that wait is not the tool's time."""
        if self._waiting is None:
            self._waiting = time.monotonic()

    def resume(self) -> None:
        if self._waiting is not None:
            self.waited += time.monotonic() - self._waiting
            self._waiting = None

    def finish(self) -> None:
        self.resume()
        self.ended = time.monotonic()


def _line_range(args: dict[str, Any]) -> str:
    offset, limit = args.get("offset"), args.get("limit")
    if not isinstance(offset, (int, float)) and not isinstance(limit, (int, float)):
        return ""
    first = int(offset) if isinstance(offset, (int, float)) else 1
    return f":{first}-{first + int(limit) - 1}" if isinstance(limit, (int, float)) else f":{first}-"


def _short_json(args: dict[str, Any], limit: int = 120) -> str:
    text = json.dumps(args, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def result_text(result: Any) -> str:
    """The text blocks of a tool result payload, joined (images count as `[image]`)."""
    content = result.get("content") if isinstance(result, dict) else None
    parts = []
    for block in content or []:
        if isinstance(block, dict):
            parts.append(str(block.get("text", "")) if block.get("type") == "text" else "[image]")
    return "\n".join(parts)


def tool_block(call: ToolCall, result: Any, is_error: bool, *, expanded: bool) -> Padding:
    """The finished block for `call` (see the module docstring)."""
    from rich.text import Text

    lines: list[Text] = [Text(call.title(), style="bold")]
    output = clean(result_text(result))
    details = result.get("details") if isinstance(result, dict) else None
    blocked = is_error and isinstance(details, dict) and details.get("blocked") is True
    # a resumed session's rejected call: no dialog said so, its stored result does
    rejected = call.rejected or (blocked and output.startswith(REJECTED))
    if call.name == "edit" and not is_error and isinstance(details, dict) and details.get("diff"):
        lines += _diff_lines(clean(details["diff"]), expanded)
    elif call.name == "write" and not is_error:
        lines += _added_lines(clean(call.args.get("content", "")), expanded)
    elif call.name == "read" and not is_error:
        size = counted(count_lines(output), "line", grouped=True)
        lines.append(Text(f"{size}{key_hint('app.tools.expand', ' ({} to expand)')}"
                          if not expanded else output, style="grey62"))
    elif rejected:
        pass  # the rejection text is the model's; the user answered it, `rejected` below says it
    elif output:
        body, notes = split_notes(output)
        lines += [*(_tail(body, expanded, _cut_lines(details)) if body.strip() else []),
                  *(Text(note, style="yellow") for note in notes)]
    if rejected or blocked:  # it never ran: no exit status, no duration
        said = rejection_reason(output) if rejected else None
        lines.append(Text(("rejected" if rejected else "blocked") + (f": {said}" if said else ""), style="red"))
    elif call.name == "bash":
        found = _EXIT.findall(output)
        stopped = not found and _STOPPED.search(output) is not None  # else it never ran: its error says why
        lines.append(status_line(0 if not is_error else (int(found[-1]) if found else None), call.elapsed(),
                                 None if not is_error or found or stopped else "failed"))
    return _band(lines, failed=is_error)  # a failed read, write or edit: its error is the `output` shown above


def split_notes(output: str) -> tuple[str, list[str]]:
    """`output` without the notes the bash tool appended to it (a truncation, the exit code), and those notes
    in order: the collapsed tail is the command's own last lines, the notes follow it whole."""
    notes: list[str] = []
    while True:
        body, blank, last = output.rpartition("\n\n")
        if not _NOTE.fullmatch(last.strip()):
            return output, notes
        notes.insert(0, last.strip())
        output = body if blank else ""
        if not output:
            return output, notes


def _tail(text: str, expanded: bool, earlier: int = 0) -> list[Any]:
    """The output's last lines: every line (up to `MAX_EXPANDED_LINES`) when `expanded`, else `TailRows`.
    `earlier` counts lines cut before `text` began (a truncated output's), so the hint says how many are
    really hidden."""
    from rich.text import Text

    rows = text.rstrip("\n").split("\n")
    if not expanded:
        return [TailRows(rows, earlier)]
    shown: list[Any] = [Text(row, style="grey70") for row in rows[-MAX_EXPANDED_LINES:]]
    hidden = earlier + max(0, len(rows) - MAX_EXPANDED_LINES)
    if hidden:
        shown.insert(0, Text(f"… {hidden} earlier {_lines(hidden)}", style="grey50"))
    return shown


class TailRows:
    """The last `TAIL_LINES` *screen rows* of `lines` at the width the block is drawn in: a long line counts as
    the rows it wraps into, so a collapsed block stays `TAIL_LINES` rows high whatever its lines hold. Above
    them, when anything is hidden: `… N earlier lines (ctrl+o to expand)`."""

    def __init__(self, lines: list[str], earlier: int = 0):
        self.lines, self.earlier = lines, earlier

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.text import Text

        from .stream import wrap

        width, rows, used, cut = max(options.max_width, 1), [], 0, False
        for line in reversed(self.lines):
            room = TAIL_LINES - len(rows)
            wrapped = wrap(line, width, room + 1)
            cut = len(wrapped) > room  # only the line's end fits
            rows[:0] = wrapped[-room:]
            used += 1
            if len(rows) >= TAIL_LINES or cut:
                break
        hidden = self.earlier + len(self.lines) - used
        if hidden or cut:
            part = "the start of a long line" if cut else ""
            count = f"{hidden} earlier {_lines(hidden)}" if hidden else ""
            yield Text(f"… {' and '.join(p for p in (count, part) if p)}{EXPAND()}", style="grey50")
        yield from (Text(row, style="grey70") for row in rows)


class HeadRows:
    """The first `keep` *screen rows* of `lines` ((text, style) pairs) at the width the block is drawn in,
    then, when anything is left out: `… N more lines (ctrl+o to expand)` (a diff, written content)."""

    def __init__(self, lines: list[tuple[str, str]], keep: int):
        self.lines, self.keep = lines, keep

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.text import Text

        from .stream import wrap

        width, shown, consumed, cut = max(options.max_width, 1), 0, 0, False
        for line, style in self.lines:
            if shown >= self.keep:
                break
            room = self.keep - shown
            start = line[:width * (room + 1)]  # a cell is at least one character
            wrapped = wrap(start, width, len(start) + 1)
            cut = len(wrapped) > room
            yield from (Text(row, style=style) for row in wrapped[:room])
            shown, consumed = shown + min(len(wrapped), room), consumed + 1
        left = len(self.lines) - consumed
        parts = [p for p in ("the rest of a long line" if cut else "",
                             f"{left} more {_lines(left)}" if left > 0 else "") if p]
        if parts:
            yield Text(f"… {' and '.join(parts)}{EXPAND()}", style="grey50")


def _lines(count: int) -> str:
    return "line" if count == 1 else "lines"


def _cut_lines(details: Any) -> int:
    """Lines a truncated bash output lost before its kept tail (`details.truncation`), else 0."""
    truncation = details.get("truncation") if isinstance(details, dict) else None
    if not isinstance(truncation, dict):
        return 0
    total, kept = truncation.get("totalLines"), truncation.get("outputLines")
    return max(0, total - kept) if isinstance(total, int) and isinstance(kept, int) else 0


def _diff_lines(diff: str, expanded: bool) -> list[Any]:
    """The diff's rows without its two file-name header rows; a removed `-- note` line (`--- note`) or an added
    `++x` line stays."""
    rows = diff.split("\n")
    if len(rows) >= 2 and rows[0].startswith("--- ") and rows[1].startswith("+++ "):
        rows = rows[2:]
    return _head([(row, _diff_style(row)) for row in rows], expanded)


def _head(lines: list[tuple[str, str]], expanded: bool) -> list[Any]:
    """The first lines: every one (up to `MAX_EXPANDED_LINES`) when `expanded`, else `HeadRows`."""
    from rich.text import Text

    if not expanded:
        return [HeadRows(lines, DIFF_LINES)]
    shown: list[Any] = [Text(row, style=style) for row, style in lines[:MAX_EXPANDED_LINES]]
    if len(lines) > MAX_EXPANDED_LINES:
        shown.append(Text(f"… {(left := len(lines) - MAX_EXPANDED_LINES)} more {_lines(left)}", style="grey50"))
    return shown


def _diff_style(row: str) -> str:
    if row.startswith("+"):
        return "green"
    if row.startswith("-"):
        return "red"
    return "cyan" if row.startswith("@@") else "grey62"


def _added_lines(content: str, expanded: bool) -> list[Any]:
    rows = content.rstrip("\n").split("\n") if content else []
    return _head([(f"+{row}", "green") for row in rows], expanded)


def status_line(exit_code: int | None, seconds: float | None, word: str | None = None) -> Text:
    """`exit 0 · 0.2 s` (green), `exit 2 · 1.0 s` or `stopped · 3.0 s` (red) for a code of None; `word`
    replaces the code (`failed · 0.0 s`: a call that could not run). `seconds` None (not known: a block
    read back from the session file) leaves the duration out: `exit 0`."""
    from rich.text import Text

    code = word or ("stopped" if exit_code is None else f"exit {exit_code}")
    shown = code if seconds is None else f"{code} · {seconds:.1f} s"
    return Text(shown, style="green" if exit_code == 0 else "red")


def shell_block(command: str, output: str, exit_code: int | None, seconds: float | None, *, in_context: bool,
                expanded: bool, result: dict[str, Any] | None = None, total_lines: int | None = None) -> Padding:
    """A `!command` (or `!!command`: `in_context` False) run by the user: like a bash tool block. `result` (the
    `bash` result or the stored `bashExecution` message) says whether the output was truncated and where the
    full output is; `total_lines` (counted while it streamed) how many lines the command printed in all."""
    from rich.text import Text

    title = Text(f"$ {clean(command)}", style="bold")
    if not in_context:
        title.append(" (not added to the context)", style="grey50")
    text = clean(output)
    truncated = bool(result and result.get("truncated"))
    shown = count_lines(text)
    earlier = max(0, total_lines - shown) if truncated and total_lines else 0
    lines: list[Any] = [title, *(_tail(text, expanded, earlier) if text.strip() else [])]
    if truncated:
        lines.append(Text(truncation_notice(result or {}, shown, total_lines), style="yellow"))
    return _band([*lines, status_line(exit_code, seconds)], failed=exit_code != 0)


def truncation_notice(result: dict[str, Any], shown: int, total: int | None) -> str:
    """`[Showing last 2000 lines of 10000. Full output: <path>]`, as the bash tool words it."""
    of = f" of {total}" if total and total > shown else ""
    path, error = result.get("fullOutputPath"), result.get("fullOutputError")
    where = f" Full output: {clean(path)}" if path else (f" Full output not saved: {clean(error)}" if error else "")
    return f"[Showing last {counted(shown, 'line')}{of}.{where}]"


def _band(lines: list[Text], *, failed: bool) -> Padding:
    """`lines` on the theme's block background (the error one for a failed call)."""
    from rich.console import Group
    from rich.padding import Padding

    style = theme.current.error_block if failed else theme.current.block
    return Padding(Group(*lines), (0, 1), style=style, expand=True)


def running_line(call: ToolCall, frame: str, width: int = 80) -> str:
    """The live-region row of a running call, at most `width` columns: spinner frame, title, elapsed seconds;
    while its approval question is open, no spinner and no time (it does not run yet, and its time starts at
    the answer). A long or multi-line title (a huge command) shows its first line, cut, and how many lines
    follow: `$ echo one… (+40 lines) (3 s)`; the finished block in the scrollback shows all of it."""
    lead, status = ("·", "(waiting for approval)") if call.waiting else (frame, f"({call.elapsed() or 0.0:.0f} s)")
    return f"{lead} {title_preview(call.title(), width - len(lead) - len(status) - 2)} {status}"


def title_preview(title: str, width: int) -> str:
    """`title`'s first line in at most `width` columns, `… (+N lines)` after it when more follow (just the `…`
    in a narrow terminal). Only the line's start is measured: a 5 MB one-line command costs what a short one
    does."""
    first, _, rest = title.partition("\n")
    lines = rest.count("\n") + 1 if rest else 0
    more = f" (+{lines} line{'s' if lines > 1 else ''})" if lines else ""
    if width - len(more) < 12:  # no room for the count: the `…` says there is more
        more = ""
    head = fit(first[:2 * width + 16], max(width - len(more) - (2 if lines else 0), 4))
    return f"{head}{' …' if lines and not head.endswith('…') else ''}{more}"