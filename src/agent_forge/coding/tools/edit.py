"""The `edit` tool: exact-text replacements in an existing file, reported with a unified diff."""

from __future__ import annotations

import asyncio
import json
import os
from typing import TYPE_CHECKING, NamedTuple

from ...agent.types import ToolError, ToolResult, ToolUpdate, text_result
from ...ai.types import JsonValue
from .args import check_object, json_type, require_string
from .file_access import LOCAL, FileAccess
from .file_kinds import open_regular
from .file_queue import hold
from .paths import resolve_tool_path
from .write import write_bytes
from ..paths import path_text
from ...words import counted

if TYPE_CHECKING:
    from .edit_apply import Replacement

_BOM = b"\xef\xbb\xbf"

DESCRIPTION = (
    "Edit a file by exact text replacement. Each `edits[i].oldText` must match the current file exactly "
    "(whitespace and indentation included) and occur exactly once; only when there is no exact match, "
    "trailing whitespace and then curly quotes, dashes and non-breaking spaces are forgiven (the result says "
    "so). All edits are matched against the file as it was before this call and must not overlap. Merge "
    "nearby changes into one edit. Line endings and a UTF-8 BOM are kept. Read the file first if unsure of "
    "its exact text."
)

PARAMETERS: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File to edit, relative to the working directory or absolute"},
        "edits": {
            "type": "array",
            "description": "Replacements, each matched against the original file; they must not overlap",
            "items": {
                "type": "object",
                "properties": {
                    "oldText": {"type": "string", "description": "Exact text to replace; unique in the file"},
                    "newText": {"type": "string", "description": "Text to put in its place"},
                },
                "required": ["oldText", "newText"],
            },
        },
    },
    "required": ["path", "edits"],
}


class EditTool:
    """`edit(path, edits=[{oldText, newText}, ...])`; the legacy top-level `oldText`/`newText` also works.

    Edits and writes of one file run one after another, in call order (`file_queue.py`). Just before
    writing, the file is read again: if another writer changed it meanwhile, the edits are applied to its new
    content (a note in the result says so), or fail with `<path> changed while it was being edited, ...
    Nothing was written.`

    Result text `Successfully replaced N blocks in <path>.` (`1 block`), followed by a note for each edit that matched
    only tolerantly (`edit_match.py`); `details` is
    `{"diff": <unified diff>, "firstChangedLine": <1-based line in the new file>}`.
    Errors (`ToolError`): missing file, directory, FIFO, device or socket, bad arguments, an `oldText`
    missing or not unique, overlapping edits, edits that change nothing, a failed write (which leaves the file
    as it was: `write.write_bytes`). Bytes that are not valid UTF-8 are preserved untouched.
    """

    name = "edit"
    label = "Edit"
    description = DESCRIPTION
    parameters = PARAMETERS

    files: FileAccess = LOCAL  # where text comes from and goes (`file_access.py`): the disk, or an editor's

    def __init__(self, cwd: str):
        self.cwd = cwd

    async def execute(self, tool_call_id: str, args: dict[str, JsonValue],
                      on_update: ToolUpdate | None = None) -> ToolResult:
        args = check_object(args)
        given = require_string(args, "path")
        edits = parse_edits(args)
        path = resolve_tool_path(given, self.cwd)
        async with hold(path):  # before the first await: edits and writes of one file apply in call order
            with self.files.changing(tool_call_id, path):
                return await self._edit(path, given, edits)

    async def _edit(self, path: str, given: str, edits: list[Replacement]) -> ToolResult:
        # Matching and diffing are imported by the first edit: start-up (the first response) does not pay.
        from .diff import first_changed_line, unified_diff
        from .edit_apply import normalise_newlines

        shown = path_text(given)  # every message naming the file: one line, no control bytes (`path_text`)
        seen = await self._load(path)
        updated, notes = _apply(seen, edits, shown)
        now = await self._changed_since(path, seen, shown)
        if now is not None:  # another writer (a `bash` `sed -i` of the same message, the editor's user)
            seen, (updated, notes) = now, _reapply(now, edits, shown)
        await self._store(path, seen, updated)
        before, after = normalise_newlines(seen.text), normalise_newlines(updated)
        details = {"diff": unified_diff(before, after, given), "firstChangedLine": first_changed_line(before, after)}
        text = " ".join([f"Successfully replaced {counted(len(edits), 'block')} in {shown}.", *notes])
        return text_result(text, details)

    async def _load(self, path: str) -> _Content:
        """The file as it is now: the editor's version (unsaved changes included), else the disk's."""
        served = await self.files.read_text(path)
        if served is not None:
            return _Content(b"", served, True)
        # File I/O in a thread: a slow disk must not stall the event loop (and with it abort and get_state).
        return await asyncio.to_thread(_read_text, path)

    async def _changed_since(self, path: str, seen: _Content, shown: str) -> _Content | None:
        """The file's content if it is no longer `seen` (read again just before writing), else None. Raises
        `ToolError` when it cannot be read any more (deleted, replaced by a directory)."""
        try:
            now = await self._load(path)
        except ToolError as exc:
            gone = f"{shown} changed while it was being edited: {_sentence(exc)} Nothing was written."
            raise ToolError(gone) from None
        return None if now == seen else now

    async def _store(self, path: str, seen: _Content, updated: str) -> None:
        data = _encode(updated)
        if not seen.served or not await self.files.write_text(path, data.decode("utf-8", "replace")):
            await asyncio.to_thread(write_bytes, path, seen.bom + data)


class _Content(NamedTuple):
    """A file's content as an edit read it: `bom` (a UTF-8 BOM or b"") and `text` (undecodable bytes as
    surrogate escapes, so equal texts are equal bytes), `served` by the editor (`file_access.py`) or the disk."""

    bom: bytes
    text: str
    served: bool


def _apply(content: _Content, edits: list[Replacement], shown: str) -> tuple[str, list[str]]:
    """The edited text and the notes of tolerant matches. Raises `ToolError`."""
    from .edit_apply import apply_replacements

    updated, notes = apply_replacements(content.text, edits, shown)
    if updated == content.text:
        raise ToolError(f"No changes made to {shown}: the replacements leave the file identical.")
    return updated, notes


def _reapply(content: _Content, edits: list[Replacement], shown: str) -> tuple[str, list[str]]:
    """`_apply` to the content another writer left, with a note saying so; a `ToolError` that says the file
    changed when the edits no longer apply to it."""
    try:
        updated, notes = _apply(content, edits, shown)
    except ToolError as exc:
        raise ToolError(f"{shown} changed while it was being edited, and the edits no longer apply to its new "
                        f"content: {_sentence(exc)} Nothing was written.") from None
    return updated, [*notes, f"{shown} changed while it was being edited; the edits were applied to its new "
                             "content."]


def _sentence(exc: ToolError) -> str:
    return str(exc).rstrip(".") + "."


def parse_edits(args: dict[str, JsonValue]) -> list[Replacement]:
    """The edits of `args`: `edits` (an array, or that array as a JSON string) plus a legacy top-level
    `oldText`/`newText` pair. Raises `ToolError` naming the first malformed field."""
    from .edit_apply import Replacement

    raw = args.get("edits")
    if isinstance(raw, str):
        raw = _parse_json_array(raw)
    if raw is not None and not isinstance(raw, list):
        raise ToolError(f"Parameter 'edits' must be an array, got {json_type(raw)}")
    edits = [_parse_edit(item, f"edits[{i}]") for i, item in enumerate(raw or [])]
    if "oldText" in args or "newText" in args:
        edits.append(Replacement(require_string(args, "oldText"), require_string(args, "newText")))
    if not edits:
        raise ToolError("Missing required parameter 'edits' (an array of {oldText, newText})")
    return edits


def _parse_edit(item: JsonValue, label: str) -> Replacement:
    if not isinstance(item, dict):
        raise ToolError(f"{label} must be an object with oldText and newText, got {json_type(item)}")
    fields = []
    for name in ("oldText", "newText"):
        value = item.get(name)
        if not isinstance(value, str):
            problem = "is missing" if value is None else f"must be a string, got {json_type(value)}"
            raise ToolError(f"{label}.{name} {problem}")
        fields.append(value)
    from .edit_apply import Replacement

    return Replacement(*fields)


def _parse_json_array(text: str) -> JsonValue:
    try:
        return json.loads(text)
    except ValueError:
        raise ToolError("Parameter 'edits' must be an array of {oldText, newText}, got a string") from None


def _read_text(path: str) -> _Content:
    """The file on the disk; undecodable bytes become surrogate escapes so they are written back as they were."""
    try:
        with open(open_regular(path, os.O_RDONLY), "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise ToolError(f"File not found: {path_text(path)}") from None
    except OSError as exc:
        raise ToolError(f"Cannot read {path_text(path)}: {exc.strerror or exc}") from None
    bom = _BOM if raw.startswith(_BOM) else b""
    return _Content(bom, raw[len(bom):].decode("utf-8", "surrogateescape"), False)


def _encode(text: str) -> bytes:
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raise ToolError("newText contains characters UTF-8 cannot encode (lone surrogates).") from None
