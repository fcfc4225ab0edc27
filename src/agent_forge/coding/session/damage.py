"""What opening a session file found wrong with it: one `SessionWarning` per kind of damage, made where the file
is read (`SessionStore.open`) and given, in the same words, to every reader: stderr (`Warning: <message>`),
the RPC `switch_session` response and `get_state` (`sessionWarnings`), the terminal UI and ACP logs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypedDict

from .reading import MAX_LINE_BYTES

if TYPE_CHECKING:
    from .reading import ParsedSession

MAX_LINES = 100
"""Line numbers a warning lists (`lines`); `count` has them all. Its message names at most 10."""

WarningKind = Literal["damaged_lines", "torn_line"]


class WarningJson(TypedDict):
    """The wire shape of a `SessionWarning` (docs/rpc.md, "Opening session files")."""

    kind: WarningKind
    path: str
    count: int
    lines: list[int]
    message: str


@dataclass(frozen=True)
class SessionWarning:
    """Damage found in the session file `path`. `kind`: `"damaged_lines"` (lines left out or entries of no use
    to the context, `lines` naming them, 1-based) or `"torn_line"` (the last line was cut off mid-write: left
    out, and cut back before the next write; `lines` is its number). `message`: one line, as stderr shows it
    after `Warning: `."""

    kind: WarningKind
    path: str
    lines: tuple[int, ...]
    message: str

    def __str__(self) -> str:
        return self.message

    def to_json(self) -> WarningJson:
        return {"kind": self.kind, "path": self.path, "count": len(self.lines),
                "lines": list(self.lines[:MAX_LINES]), "message": self.message}


def load_warnings(path: Path, parsed: ParsedSession,
                  unusable: Sequence[tuple[int, tuple[str, str]]] = ()) -> list[SessionWarning]:
    """The warnings of the file at `path` as `read_session` parsed it: its skipped lines (repeated entry ids
    among them) and `unusable` (entries kept but of no use to the context, each with what is wrong in the
    singular and the plural: `session_context.unusable_entry`) in one warning, a torn last line left out in
    another. Empty when the file was intact."""
    warnings = _damaged(path, parsed.skipped_lines, parsed.repeated_lines, parsed.long_lines, unusable)
    if parsed.torn_line is not None:
        torn = parsed.size - parsed.complete_size
        size = f"{torn:,} byte{'s' if torn != 1 else ''}"
        warnings.append(SessionWarning("torn_line", str(path), (parsed.torn_line,),
                                       f"session file {path}: the last line ({path}:{parsed.torn_line}, {size}) was "
                                       "cut off mid-write (a crash?); it is left out and cut back before the next "
                                       "entry is written"))
    return warnings


def _damaged(path: Path, lines: Sequence[int], repeated: Sequence[int], long: Sequence[int],
             unusable: Sequence[tuple[int, tuple[str, str]]]) -> list[SessionWarning]:
    every = sorted({*lines, *(line for line, _ in unusable)})
    if not every:
        return []
    count = f"{len(every)} damaged line{'s' if len(every) != 1 else ''}"
    groups: dict[tuple[str, str], list[int]] = {}
    if repeated:
        groups[("repeats an earlier entry's id (the first is kept)",
                "repeat an earlier entry's id (the first is kept)")] = list(repeated)
    if long:
        limit = f"longer than the {MAX_LINE_BYTES >> 20} MiB line limit (skipped unread, left in the file)"
        groups[(f"is {limit}", f"are {limit}")] = list(long)
    for line, phrase in unusable:
        groups.setdefault(phrase, []).append(line)
    reasons = [f"{_where(path, found)} {phrase[len(found) > 1]}" for phrase, found in groups.items()]
    if set(lines) - set(repeated):
        reasons.append("the entries after a skipped line continue from the entry before it")
    message = f"session file {path}: skipped {count} ({_where(path, every)})" + "".join(f"; {r}" for r in reasons)
    return [SessionWarning("damaged_lines", str(path), tuple(every), message)]


def _where(path: Path, lines: Sequence[int]) -> str:
    return ", ".join(f"{path}:{line}" for line in lines[:10]) + (", ..." if len(lines) > 10 else "")
