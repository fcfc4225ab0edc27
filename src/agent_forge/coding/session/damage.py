"""What opening a session file found wrong with it: one `SessionWarning` per kind of damage, made where the file
is read (`SessionStore.open`) and given, in the same words, to every reader: stderr (`Warning: <message>`),
the RPC `switch_session` response and `get_state` (`sessionWarnings`), the terminal UI and ACP logs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypedDict

from ..paths import path_text
from .file_lines import line_limit

if TYPE_CHECKING:
    from .reading import ParsedSession

MAX_LINES = 100
"""Line numbers a warning lists (`lines`); `count` has them all. Its message names at most 10."""

WarningKind = Literal["damaged_lines", "torn_line", "broken_links"]


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
    to the context, `lines` naming them, 1-based), `"torn_line"` (the last line was cut off mid-write: left
    out, and cut back before the next write; `lines` is its number) or `"broken_links"` (entries kept whose
    `parentId` names themselves, no entry, or a cycle: `links.py`; `lines` are theirs, the message names their
    ids). `message`: one line, as stderr shows it after `Warning: `."""

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
    from ...words import counted  # only a damaged file needs it: not on start-up's path

    warnings = _damaged(path, parsed.skipped_lines, parsed.repeated_lines, parsed.long_lines, unusable)
    warnings.extend(_broken_links(path, parsed))
    if parsed.torn_line is not None:
        torn = parsed.size - parsed.complete_size
        size = counted(torn, "byte", grouped=True)
        warnings.append(SessionWarning("torn_line", str(path), (parsed.torn_line,),
                                       f"session file {path_text(path)}: the last line "
                                       f"({path_text(path)}:{parsed.torn_line}, {size}) was "
                                       "cut off mid-write (a crash?); it is left out and cut back before the next "
                                       "entry is written"))
    return warnings


def _damaged(path: Path, lines: Sequence[int], repeated: Sequence[int], long: Sequence[int],
             unusable: Sequence[tuple[int, tuple[str, str]]]) -> list[SessionWarning]:
    from ...words import counted  # only a damaged file needs it: not on start-up's path

    every = sorted({*lines, *(line for line, _ in unusable)})
    if not every:
        return []
    count = counted(len(every), "damaged line")
    groups: dict[tuple[str, str], list[int]] = {}
    if repeated:
        groups[("repeats an earlier entry's id (the first is kept)",
                "repeat an earlier entry's id (the first is kept)")] = list(repeated)
    if long:
        limit = f"longer than the {line_limit()} line limit (skipped unread, left in the file)"
        groups[(f"is {limit}", f"are {limit}")] = list(long)
    for line, phrase in unusable:
        groups.setdefault(phrase, []).append(line)
    reasons = [f"{_where(path, found)} {phrase[len(found) > 1]}" for phrase, found in groups.items()]
    if set(lines) - set(repeated):
        reasons.append("the entries after a skipped line continue from the entry before it")
    message = (f"session file {path_text(path)}: skipped {count} ({_where(path, every)})"
               + "".join(f"; {r}" for r in reasons))
    return [SessionWarning("damaged_lines", str(path), tuple(every), message)]


def _broken_links(path: Path, parsed: ParsedSession) -> list[SessionWarning]:
    """One warning naming the entries of `parsed.broken_links` (ids and lines), grouped by what is wrong."""
    from ...words import counted  # only a damaged file needs it: not on start-up's path

    links = parsed.broken_links
    if not links:
        return []
    entries, numbers = parsed.entries, parsed.entry_lines

    def named(indexes: Sequence[int]) -> str:
        shown = ", ".join(_entry_id(entries[i]["id"]) for i in indexes[:10]) + (", ..." if len(indexes) > 10 else "")
        return f"{shown} ({_where(path, [numbers[i] for i in indexes])})"

    reasons = []
    if links.self_parented:
        plural = len(links.self_parented) > 1
        reasons.append(f"{named(links.self_parented)} name{'' if plural else 's'} {'themselves' if plural else 'itself'}"
                       f" as parent ({'each' if plural else 'it'} continues from the entry before it in the file)")
    if links.missing:
        plural = len(links.missing) > 1
        reasons.append(f"{named(links.missing)} name{'' if plural else 's'} a parent no entry has "
                       f"({'each' if plural else 'it'} starts a branch of its own)")
    reasons.extend(f"{named(cycle)} form a parent cycle (cut at {_entry_id(entries[cycle[0]]['id'])}, the first in "
                   "the file, which starts a branch of its own)" for cycle in links.cycles[:10])
    every = sorted({numbers[i] for i in [*links.self_parented, *links.missing, *(i for c in links.cycles for i in c)]})
    count = counted(len(every), "entry", "entries")
    message = (f"session file {path_text(path)}: {count} with a broken parent link (the file is left as it is): "
               + "; ".join(reasons))
    return [SessionWarning("broken_links", str(path), tuple(every), message)]


def _entry_id(entry_id: str) -> str:
    """An entry id as a message shows it: quoted and escaped (one line whatever it holds), cut at 40 characters."""
    return json.dumps(entry_id if len(entry_id) <= 40 else entry_id[:40] + "…", ensure_ascii=False)


def _where(path: Path, lines: Sequence[int]) -> str:
    return ", ".join(f"{path_text(path)}:{line}" for line in lines[:10]) + (", ..." if len(lines) > 10 else "")
