"""The bytes of a session file: reading and parsing it (tolerating a torn tail and damaged lines) and encoding
its lines. Writing it crash-safely is `durable.py`.

A process killed mid-append leaves at worst a torn last line: parsing skips lines that are not JSON objects,
names the damaged ones, and reports a torn tail so the next append starts on a fresh line.
"""

from __future__ import annotations

import gc
import json
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..paths import path_text
from ...ai import json_wire
from ...records import Record, factory
from .entries import SessionEntry, SessionHeader, is_header
from .file_lines import FileLines, Line, LineBatches, line_limit, open_for_reading
from .links import BrokenLinks, find_broken_links
from .migrations import check_version, migrate
from .sharing import shared_and_checked
from ..errors import SessionFileError

class ParsedSession(Record):
    """A file's content, migrated to the current version. `migrated_from` is the file's version when it was
    older (the file must be rewritten before anything is appended), else None. `torn_tail`: the bytes do not
    end with a newline, so an append must start with one. `skipped_lines`: 1-based numbers of the damaged lines
    left out (not JSON objects, or not entries; a torn last line is not counted: a crash leaves one)."""

    header: SessionHeader
    entries: list[SessionEntry]
    migrated_from: int | None
    torn_tail: bool
    skipped_lines: list[int]
    complete_size: int = 0
    """Bytes up to and including the last newline: where a torn tail starts (it is cut before appending)."""
    repeated_lines: list[int] = factory(list)
    """The lines of `skipped_lines` that repeat an earlier entry's id (the first entry with an id is kept)."""
    entry_lines: Sequence[int] = factory(list)
    """The 1-based line number of each of `entries`, in the same order."""
    positions: dict[str, int] = factory(dict)
    """Entry id → its index in `entries` (made while the ids were checked for repeats)."""
    linear: bool = False
    """True when `entries` are one chain in file order (each one's parent is the entry before it, the first has
    none): the active branch of the last entry is then `entries` itself, with no walk of the parents."""
    torn_line: int | None = None
    """The 1-based number of a torn last line that was left out (not a whole entry, not blank), else None."""
    size: int = 0
    """The file's size in bytes (`size - complete_size`: the torn bytes)."""
    long_lines: list[int] = factory(list)
    """The lines of `skipped_lines` longer than `MAX_LINE_BYTES`, skipped unread (the last line too: it is not
    torn, and stays in the file)."""
    broken_links: BrokenLinks = factory(BrokenLinks)
    """Entries whose `parentId` names themselves (already linked to the entry before), no entry, or a cycle."""
    checks: list[object] | None = None
    """`sharing.shared_and_checked` of each of `entries` (a message entry's `context_message`), made while the
    lines were parsed; None when they may no longer hold (a migrated file) or do not line up (lines left out)."""
    unrepaired: list[object] = factory(list)
    """The messages among `checks` whose optional fields are still to be checked (`shapes.repaired`); empty
    when `checks` is None."""


_raw_decode = json.JSONDecoder().raw_decode


def parse_line(line: str | bytes, screened: bool = False) -> Any:
    """The JSON value of one line, or None when it is blank, torn or not JSON at all. Lone-surrogate escapes
    (files written by older versions) read as U+FFFD, as new lines are written. `screened`: see
    `json_wire.fast_loads`."""
    value = json_wire.fast_loads(line, screened=screened)  # it refuses lone-surrogate escapes and lines json reads otherwise
    if value is not json_wire.MISS:
        return value
    value = _parse(line)
    if value is not None and json_wire.may_hold_surrogates(line if isinstance(line, str) else
                                                            line.decode("utf-8", "replace")):
        return json_wire.scrub_in_place(value)
    return value


def _parse(line: str | bytes) -> Any:
    line = _without_bom(line)
    if isinstance(line, str):
        try:  # fast path for the usual line: one JSON value with nothing but an optional CR after it
            value, end = _raw_decode(line)
            if end == len(line) or line[end:].isspace():
                return value
        except (ValueError, RecursionError):
            pass
    if not line or line.isspace():
        return None
    try:
        return json.loads(line)
    except (ValueError, RecursionError):  # ValueError covers invalid JSON and invalid UTF-8
        return None


def _without_bom(line: str | bytes) -> str | bytes:
    """`line` without a leading UTF-8 byte order mark: editors on Windows (Notepad) put one at the start of a
    file they save, and JSON parsers refuse it; it is read as if absent (the bytes on disk stay)."""
    if isinstance(line, str):
        return line[1:] if line.startswith("\ufeff") else line
    return line[3:] if line.startswith(b"\xef\xbb\xbf") else line


def read_session(path: Path) -> ParsedSession:
    """Read and parse a session file in one linear pass.

    Invalid UTF-8 is decoded with U+FFFD, so an entry with a damaged character survives. A line that is still
    unusable is skipped (`ParsedSession.skipped_lines`) without losing what came before it: an entry whose
    parent is missing after a skipped line is linked to the last entry before that line in file order (the
    parent most likely lost with it), so the history stays one chain; so is an entry naming itself as its
    parent (`links.py`; the other broken links are only found). A line over `MAX_LINE_BYTES` is skipped unread
    (`ParsedSession.long_lines`). Raises SessionFileError when the file is
    missing, not a regular file, unreadable, empty, has no valid header or an unsupported version (see
    `session_migrations.migrate`). A UTF-8 byte order mark at the start of a line is ignored (`_without_bom`).
    """
    with open_for_reading(path) as handle, gc_paused():
        body = _usual_body(handle, path)
        if body is None:
            handle.seek(0)
            body = _any_body(handle, path)
    header, objects, numbers, damaged, checks, unrepaired = (body.header, body.objects, body.numbers, body.damaged,
                                                             body.checks, body.unrepaired)
    version = migrate(header, objects)  # the version was checked with the header: this cannot raise
    if version is None and body.positions is not None:  # one chain of entries, as `_unique_entries` finds it
        entries, entry_lines, repeated, positions, linear, links = (objects, numbers, [], body.positions, True,
                                                                   BrokenLinks())
    else:
        entries, entry_lines, repeated, positions, linear, links = _unique_entries(objects, numbers, damaged)
    if version is not None or len(entries) != len(objects):  # a migration edits messages; or checks misalign
        checks, unrepaired = None, []
    size, whole, tail = body.size, body.whole, body.tail
    # A tail (text after the last newline) that is an object is whole; one over the cap is kept as it is (a
    # skipped line, not a torn one: nothing is cut back).
    complete = size if tail is None or tail and isinstance(_parse_file_line(tail), dict) else whole
    left_out = complete < size and not bytes(tail or b"").decode("utf-8", "replace").isspace()
    return ParsedSession(header, entries, version, size > whole, sorted(damaged), complete, repeated,
                         entry_lines, positions, linear, body.tail_number if left_out else None, size,
                         body.too_long, links, checks, unrepaired)


class _Body(Record):
    """A session file's lines as read, before its entries are told apart (`read_session`): the header, the other
    lines' objects and their 1-based numbers, the damaged lines' numbers, `sharing.shared_and_checked` of each
    object and the messages it left unrepaired; the file's `size`, `whole` (bytes up to and including the last
    LF), `tail` (the text after it, None when over the cap) and its number, the lines after the header over the
    cap (`too_long`). `positions`: id → index when the objects are entries making one chain in file order,
    each the child of the one before (`ParsedSession.linear`; no id repeated), else None."""

    header: SessionHeader
    objects: list[dict[str, Any]]
    numbers: Sequence[int]
    damaged: list[int]
    checks: list[object]
    unrepaired: list[object]
    size: int
    whole: int
    tail: bytes | None
    tail_number: int
    too_long: list[int]
    positions: dict[str, int] | None = None


def _usual_body(handle: Any, path: Path) -> _Body | None:
    """The `_Body` of the usual session file, read in one pass over whole chunks of lines (no per-line
    bookkeeping of `FileLines`): its header on line 1, then one JSON object a line that the fast backend reads
    (as `_parse_body` would), ending with a newline. None for any other file (a blank, damaged or overlong line,
    a torn tail, no fast backend): `_any_body` reads it again from its start (only the objects read here, which
    are dropped, were made). Raises SessionFileError for an unreadable file or a first line that is an object
    but not a valid header, as `_any_body` does."""
    fast = json_wire.fast_backend()
    if fast is None:
        return None
    batches, usual = LineBatches(handle, path), _UsualLines(fast, path)
    if not all(usual.add(lines, screened) for lines, screened in batches) or not batches.usual or usual.header is None:
        return None
    count = len(usual.objects)
    return _Body(usual.header, usual.objects, array("L", range(2, count + 2)), [], usual.checks, usual.unrepaired,
                 batches.size, batches.size, b"", count + 2, [], usual.positions)


class _UsualLines:
    """The header and objects of the lines of a usual file (`_usual_body`), batch by batch; `positions` while
    the objects are entries making one chain (each the child of the entry before, no id repeated), else None."""

    def __init__(self, fast: Any, path: Path) -> None:
        self._fast, self._path = fast, path
        self.header: SessionHeader | None = None
        self.objects: list[dict[str, Any]] = []
        self.checks: list[object] = []
        self.unrepaired: list[object] = []
        self.positions: dict[str, int] | None = {}
        self._shared: dict[str, str] = {}
        self._last_id: str | None = None

    def add(self, lines: list[bytes], screened: bool) -> bool:
        """Read `lines` (`screened`: none holds a long number); False at the first that is not an object."""
        if self.header is None:
            value = self._value(lines[0], screened)
            if type(value) is not dict:
                return False
            self.header = _checked_header(value, "line 1, its first JSON object, is not a session header", self._path)
            lines = lines[1:]
        if not screened:
            return all(self._add_objects([value]) for value in map(_parse_file_line, lines))
        try:
            return self._add_objects(map(self._fast.loads, lines))
        except self._fast.JSONDecodeError:  # `_parse_body` reads it the long way: so does `_any_body`
            return False

    def _value(self, line: bytes, screened: bool) -> Any:
        try:
            return self._fast.loads(line) if screened else _parse_file_line(line)
        except self._fast.JSONDecodeError:
            return None

    def _add_objects(self, values: Iterable[Any]) -> bool:
        """Add `values` (parsed lines); False at the first that is not an object. While they make one chain, each
        entry's `parentId` is made the entry before's id (one string for both, as `_unique_entries` does)."""
        objects, checks, shared, unrepaired = self.objects, self.checks, self._shared, self.unrepaired
        positions, last_id = self.positions, self._last_id
        for value in values:
            if type(value) is not dict:
                return False
            checks.append(shared_and_checked(value, shared, unrepaired))
            if positions is not None:  # `_unique_entries`' usual case, inlined: no second pass over the entries
                entry_id, kind = value.get("id"), value.get("type")
                if (type(entry_id) is str and type(kind) is str and kind != "session"
                        and value.get("parentId") == last_id and entry_id not in positions):
                    value["parentId"], positions[entry_id], last_id = last_id, len(objects), entry_id
                else:
                    positions = None
            objects.append(value)
        self.positions, self._last_id = positions, last_id
        return True


def _any_body(handle: Any, path: Path) -> _Body:
    """The `_Body` of any session file (`FileLines`: blank, damaged, torn and overlong lines too)."""
    lines = FileLines(handle, path)
    header = _checked_header(*_header_of(lines, path), path)
    before_header = len(lines.too_long)  # lines before the header are not entries' (left out unreported)
    objects, numbers, damaged, checks, unrepaired = _parse_body(lines)
    return _Body(header, objects, numbers, damaged, checks, unrepaired, lines.size, lines.whole, lines.tail,
                 lines.tail_number, lines.too_long[before_header:])


def _parse_file_line(line: bytes | memoryview, screened: bool = False) -> Any:
    """`parse_line` of one line of a file's bytes, as if the whole file had been decoded first (invalid UTF-8
    read as U+FFFD): the fast backend reads valid UTF-8 bytes as is, anything else is decoded and parsed."""
    value = json_wire.fast_loads(line, screened=screened)
    return parse_line(bytes(line).decode("utf-8", "replace")) if value is json_wire.MISS else value


def _header_of(lines: FileLines, path: Path) -> tuple[Any, str]:
    """The value of the first line holding a JSON object (the lines before it are consumed), unchecked, and
    where it is for an error (`line 3, its first JSON object`; `line 1 ..., nor is any later line` when there
    is none). Raises SessionFileError when the file is blank, and when no line is an object but one was over
    the cap."""
    first = None  # the first line that is not blank
    for number, line, _, _ in lines:
        if line is not None and isinstance(value := _parse_file_line(line), dict):
            return value, f"line {number}, its first JSON object, is not a session header"
        if first is None and (line is None or bytes(line).strip()):
            first = number
    if lines.blank:
        raise SessionFileError(f"session file is empty: {path_text(path)}", detail="it is empty")
    if lines.too_long:
        why = f"line {lines.too_long[0]} is longer than {line_limit()} and was not read"
        detail = f"it has no valid session header ({why})"
        raise SessionFileError(f"session file {path_text(path)}: {detail}", detail=detail)  # as `skip_reason` says it
    return None, f"line {first or 1} is not a JSON object, nor is any later line"


def _parse_body(lines: Iterable[Line]
                ) -> tuple[list[dict[str, Any]], array[int], list[int], list[object], list[object]]:
    """(objects, their 1-based line numbers, numbers of damaged lines, each object's `shared_and_checked`, the
    messages it left unrepaired) of the rest of `lines`. Blank lines and a torn last line (no newline after it)
    are not damage."""
    objects: list[dict[str, Any]] = []
    numbers = array("L")  # 8 bytes a line, not an int object and a list slot (RSS)
    damaged: list[int] = []
    checks: list[object] = []
    unrepaired: list[object] = []
    shared: dict[str, str] = {}
    fast = json_wire.fast_backend()  # called directly: three calls a line fewer (~50 ms at 50,000 lines)
    for number, line, last, screened in lines:
        if fast is not None and screened:
            try:
                value = fast.loads(line)
            except fast.JSONDecodeError:  # what `fast_loads` declines: the long way
                value = parse_line(bytes(line).decode("utf-8", "replace"))
        elif line is None:  # over the cap: never read (`FileLines.too_long`)
            damaged.append(number)
            continue
        else:
            value = _parse_file_line(line, screened)
        if isinstance(value, dict):
            checks.append(shared_and_checked(value, shared, unrepaired))
            objects.append(value)
            numbers.append(number)
        elif line and not last and not bytes(line).decode("utf-8", "replace").isspace():  # as the decoded text has it
            damaged.append(number)
    return objects, numbers, damaged, checks, unrepaired


def read_header(path: Path) -> SessionHeader:
    """The header of a session file, reading only up to it. Raises SessionFileError exactly when `read_session`
    would (missing, not a regular file, unreadable, empty, no valid header, unsupported version), so a file that
    passes here opens.
    """
    with open_for_reading(path) as handle:
        return _checked_header(*_header_of(FileLines(handle, path), path), path)


def first_object(path: Path) -> Any:
    """The value of the first line of `path` holding a JSON object, unchecked (read as `read_session` reads it,
    a line over the cap skipped unread). Raises SessionFileError when the file cannot be read, is blank, or
    holds no object but a line over the cap."""
    with open_for_reading(path) as handle:
        return _header_of(FileLines(handle, path), path)[0]


def _checked_header(header: Any, where: str, path: Path) -> SessionHeader:
    """`header` if it is a usable session header: `type: "session"`, string `id` and `cwd`, a supported version.
    `where`: the line it was read from, for the error (`_header_of`)."""
    if not is_header(header) or not isinstance(header.get("cwd"), str):
        detail = f"it has no valid session header ({where})"
        raise SessionFileError(f"session file {path_text(path)}: {detail}", detail=detail)  # as `skip_reason` says it
    try:
        check_version(header)
    except ValueError as exc:
        raise SessionFileError(f"session file {path_text(path)}: {exc}", detail=str(exc)) from None
    return header


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: parsing creates millions of containers that are all kept, and the
    collections they would trigger cost about as much as the parsing itself."""
    end = pause_gc()
    try:
        yield
    finally:
        end()


def pause_gc() -> Callable[[], None]:
    """Pause the cyclic garbage collector until the returned callable (idempotent) is called, then age the young
    objects: a pause whose end belongs to someone else (`switch_session`'s ends after its answer is out)."""
    enabled, ended = gc.isenabled(), False
    gc.disable()

    def end() -> None:
        nonlocal ended
        if enabled and not ended:
            ended = True
            _age_young_objects()
            gc.enable()

    return end


def _age_young_objects() -> None:
    """Move every object the collector tracks to its oldest generation at once (freeze, then unfreeze). The
    parsed entries are all young and all kept: left young, the next two collections would each walk every one
    of them (~0.25 s at 50,000 entries) only to find them alive. Skipped while objects are frozen on purpose
    (a pre-fork server's): unfreezing would release them too."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


def _unique_entries(objects: list[dict[str, Any]], numbers: Sequence[int], damaged: list[int]
                    ) -> tuple[list[SessionEntry], array[int], list[int], dict[str, int], bool, BrokenLinks]:
    """(entries in file order, their line numbers, lines repeating an id, id → index in the entries, whether
    they are one chain in file order: `ParsedSession.linear`, their broken parent links: `links.py`; a
    self-parented entry is linked to the entry before it). A repeated id (hand-edited or
    concatenated file) keeps its first occurrence, since ids are durable cursors and must not be shadowed; the
    repeat is added to `damaged` too, so the warning counts it. An object that is no entry is added to
    `damaged` (by line number); an entry whose parent is missing after damage is linked to the entry before
    the damage."""
    entries: list[SessionEntry] = []
    entry_lines = array("L")
    repeated: list[int] = []
    seen: dict[str, int] = {}  # id -> index in `entries`
    pending = iter(damaged + [0])  # damaged line numbers in file order; 0 ends it
    next_damage = next(pending) or None
    anchor: str | None = None  # the last entry before the latest damaged line
    last_id: str | None = None
    damage_seen = False
    linear = True
    self_parented: list[int] = []
    ahead: list[int] = []  # entries whose parent was not read before them (see `find_broken_links`)
    for obj, number in zip(objects, numbers):
        while next_damage is not None and next_damage < number:
            damage_seen, anchor, next_damage = True, last_id, next(pending) or None
        entry_id, kind, parent = obj.get("id"), obj.get("type"), obj.get("parentId")
        # is_entry(obj), inlined: this loop runs once per line of every file opened or listed
        if not (type(entry_id) is str and type(kind) is str and kind != "session"
                and (parent is None or type(parent) is str)):
            damaged.append(number)
            damage_seen, anchor = True, last_id
            continue
        if entry_id in seen:
            damaged.append(number)
            repeated.append(number)
            continue
        seen[entry_id] = len(entries)
        if parent is not None and parent == last_id:  # the usual entry, the child of the one before: first
            obj["parentId"] = last_id  # one string for an id and the next entry's parentId (RSS)
        else:
            if parent == entry_id:
                obj["parentId"] = last_id  # no entry is its own parent: read as lost, as on a damaged line
                self_parented.append(len(entries))
            elif damage_seen and parent is not None and parent not in seen:
                obj["parentId"] = anchor  # its parent was on a damaged line: keep the chain
            elif parent is None and "parentId" not in obj:
                obj["parentId"] = None  # every reader may rely on the base field being present
            if obj["parentId"] != last_id:
                linear = False
                if obj["parentId"] is not None and obj["parentId"] not in seen:
                    ahead.append(len(entries))  # missing, or further on in the file
            elif last_id is not None:
                obj["parentId"] = last_id
        entries.append(obj)  # type: ignore[arg-type]
        entry_lines.append(number)
        last_id = entry_id
    links = BrokenLinks(self_parented) if linear else find_broken_links(entries, seen, ahead, self_parented)
    return entries, entry_lines, repeated, seen, linear, links


class UnencodableEntry(TypeError, ValueError):
    """An entry JSON cannot hold (a datetime, a set, nesting too deep for the encoder); raised before anything
    is changed. A TypeError and a ValueError, as `json.dumps` raises either."""


def encode_line(obj: dict[str, Any]) -> bytes:
    """One compact JSON line, UTF-8, LF-terminated; non-finite floats are written as null (`NaN` is not JSON,
    and other tools must be able to read the file). Raises `UnencodableEntry` for values JSON cannot hold."""
    # Lone surrogates become U+FFFD: strict JSON readers reject a lone `\ud83d` escape.
    try:  # the fast backend writes the LF into its own buffer: a 64 MiB line is not copied to add it
        return json_wire.fast_encode(obj, newline=True) or json_wire.encode(obj) + b"\n"
    except (TypeError, ValueError, RecursionError) as exc:
        raise UnencodableEntry(f"the entry cannot be written as JSON: {type(exc).__name__}: {exc}") from None
