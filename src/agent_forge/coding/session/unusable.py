"""Why a session id names no session that can be opened, when files with that id exist: their reasons (a newer
version, a damaged header, no permission) are said instead of "No session found" (`listing.resolve_session`,
ACP's `session/load`), each in the one format of a skipped file (`skip_reason`)."""

from __future__ import annotations

from pathlib import Path

from ..errors import SessionFileError
from ..paths import path_text
from .entries import is_header
from .naming import id_in_name
from .reading import first_object, read_header


def skip_reason(path: Path, exc: SessionFileError) -> str:
    """`session file <path>: <why>`: one format for every file a listing or `-c` passes over."""
    return f"session file {path_text(path)}: {exc.detail or exc}"


def explain_unusable_files(wanted: str, files: list[Path]) -> None:
    """Raise why the files of `files` that name session id `wanted` cannot be opened, if any do: files whose
    first line has that id exactly, else those whose first line's id it prefixes, or, unreadable at all (a link
    loop, no permission), whose name does (`<timestamp>_<id>.jsonl`: the name is all that says which session it
    holds). One such file raises its own reason (`read_header`); several raise one error listing each with its
    reason."""
    exact, prefixed = _unusable_candidates(wanted, files)
    candidates = exact or prefixed
    if len(candidates) == 1:
        read_header(candidates[0])  # raises SessionFileError with the reason
        return  # it can be opened now (it changed meanwhile): the caller says nothing matched
    if candidates:
        listing = "\n".join(f"  {skip_reason(path, _open_error(path))}" for path in candidates)
        raise SessionFileError(f"Session id '{path_text(wanted)}' matches {len(candidates)} session files that "
                               f"cannot be opened:\n{listing}")


def _unusable_candidates(wanted: str, files: list[Path]) -> tuple[list[Path], list[Path]]:
    """(files with the id `wanted` exactly, files whose id it prefixes) among `files`, which cannot be opened
    with that id: the id of the first line's header, else of the file's name."""
    exact: list[Path] = []
    prefixed: list[Path] = []
    for path in sorted(files):
        try:
            header = first_object(path)
        except (OSError, SessionFileError):
            header = None
        found = header["id"].lower() if is_header(header) else id_in_name(path)
        if found.startswith(wanted):
            (exact if found == wanted else prefixed).append(path)
    return exact, prefixed


def _open_error(path: Path) -> SessionFileError:
    """The error `read_header` raises for `path`: a file `_unusable_candidates` found (it cannot be opened)."""
    try:
        read_header(path)
    except SessionFileError as exc:
        return exc
    return SessionFileError("it can be opened now (it changed meanwhile)")
