"""Where sessions live on disk and how to find them: by directory, most recent, or by (partial) session id.

Files live at `<sessions dir>/--<encoded cwd>--/<timestamp>_<session id>.jsonl` (`naming`; the sessions dir
comes from `paths.sessions_dir`). Nothing here writes: old file versions
are migrated in memory only.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, cast

OnSkip = Callable[[str], None]
"""Told why a session file was left out of a listing: `session file <path>: <why>` (`skip_reason`)."""

from ...records import Record
from .entries import AgentMessage, MessageEntry, SessionEntry, SessionInfoEntry, parse_timestamp
from ..errors import NoSessionMatch, SessionFileError
from ..paths import path_text, sessions_dir
from .file_lines import check_readable
from .naming import session_cwd_dir
from .reading import read_header, read_session
from ..safe_read import TEXT_ABSENT, examine, is_file

if TYPE_CHECKING:
    from datetime import datetime

class SessionInfo(Record, frozen=True):
    """One line of a session listing. `first_message` is the text of the first user message ("" if none);
    `name` is the latest `session_info.name` in the file; `modified` is the file's mtime (UTC)."""

    path: Path
    id: str
    cwd: str
    created: datetime
    modified: datetime
    name: str | None
    first_message: str
    message_count: int
    parent_session: str | None = None
    recovered_from: str | None = None
    """The id of the session this file is a recovery copy of (header `recoveredFrom`), else None."""

    def to_json(self) -> dict[str, Any]:
        """`{path, id, cwd, name, created, modified, messageCount, firstMessage, parentSession, recoveredFrom}`;
        times are ISO 8601 strings."""
        return {"path": str(self.path), "id": self.id, "cwd": self.cwd, "name": self.name,
                "created": self.created.isoformat(), "modified": self.modified.isoformat(),
                "messageCount": self.message_count, "firstMessage": self.first_message,
                "parentSession": self.parent_session, "recoveredFrom": self.recovered_from}


def list_sessions(cwd: str | os.PathLike[str], session_dir: str | os.PathLike[str] | None = None, *,
                  on_skip: OnSkip | None = None) -> list[SessionInfo]:
    """Sessions stored for `cwd`, newest (by file mtime) first. Files that cannot be opened (unreadable, no
    valid header, an unsupported version such as one made by a newer agent-forge: `session_file.read_header`)
    are left out, as `find_most_recent` and `resolve_session` leave them out, and `on_skip` is told why.
    Cost: one linear scan of each file."""
    infos = [info for info in (_info_or_skip(path, on_skip)
                               for path in _session_files(cwd, session_dir, on_skip=on_skip)) if info is not None]
    infos.sort(key=lambda info: info.modified, reverse=True)
    return infos


def list_all_sessions(session_dir: str | os.PathLike[str] | None = None, *, start: int = 0, count: int | None = None,
                      on_skip: OnSkip | None = None) -> tuple[list[SessionInfo], bool]:
    """Sessions of every directory, newest (by file mtime) first: those of the files from `start` to `start +
    count` in that order (only those are read: one linear scan each; a file that cannot be opened is left out
    and `on_skip` told why), and whether more files follow."""
    paths = sorted(all_session_files(session_dir, on_skip=on_skip), key=_mtime, reverse=True)
    end = len(paths) if count is None else start + count
    infos = [info for info in (_info_or_skip(path, on_skip) for path in paths[start:end]) if info is not None]
    return infos, end < len(paths)


def find_most_recent(cwd: str | os.PathLike[str], session_dir: str | os.PathLike[str] | None = None, *,
                     on_skip: OnSkip | None = None) -> Path | None:
    """The most recently modified session file of `cwd` that can be opened (the rule of `list_sessions`: the
    newest listed session), or None (`--continue`); `on_skip` is told why each newer file was passed over.
    Reads only up to the header of the files it considers."""
    for path in sorted(_session_files(cwd, session_dir, on_skip=on_skip), key=_mtime, reverse=True):
        try:
            read_header(path)
            return path
        except SessionFileError as exc:
            if on_skip is not None:
                on_skip(skip_reason(path, exc))
    return None


def resolve_session(reference: str, cwd: str | os.PathLike[str],
                    session_dir: str | os.PathLike[str] | None = None, *, on_note: OnSkip | None = None,
                    everywhere: bool = False) -> Path:
    """The session file named by `reference` (`--session` / `--fork` / `--export`): an existing file path, else
    a full or partial session id (case-insensitive prefix) among the sessions of `cwd` that can be opened (those
    `list_sessions` shows); an exact id wins over prefixes. With `everywhere` (`--export`, which only reads),
    an id matching none of `cwd`'s sessions is looked up among every directory's, the same way, and `on_note`
    is told where a single match is stored. A bare name (no `/`, no `.jsonl`) that is an
    existing file but not a session file (`./notes`) names the session with that id when there is exactly
    one; `on_note` is told so (`notes is not a session file; opening session <id> (<path>)`).

    Raises NoSessionMatch when nothing matches, SessionFileError when several sessions match (the message
    lists them), and with the reason when only a file that cannot be opened has that id.
    """
    as_path = Path(reference).expanduser()
    explicit = os.sep in reference or reference.endswith(".jsonl")
    if is_file(as_path) and not explicit:
        return _plain_file_or_id(as_path, reference, cwd, session_dir, on_note)
    if explicit or is_file(as_path):
        check_readable(as_path)  # missing, a symlink loop, a FIFO: said as opening it would say
        return as_path
    wanted = reference.strip().lower()
    if not wanted:
        raise SessionFileError("empty session id")
    matches, ids = id_matches(wanted, _session_files(cwd, session_dir))
    if not matches and everywhere:
        matches, ids = _elsewhere(wanted, session_dir, on_note)
    if len(matches) > 1 and (chosen := _named_after_its_id(matches, ids)) is not None:
        if on_note is not None:
            others = ", ".join(path_text(path) for path in matches if path != chosen)
            on_note(f"session {ids[chosen]} is also the header of {others}; opening {chosen}, the file named "
                    "after it (open a copy by its path)")
        return chosen
    if len(matches) == 1:
        return matches[0]
    if not matches:
        _explain_unusable(wanted, _session_files(cwd, session_dir))
        if everywhere:
            _explain_unusable(wanted, all_session_files(session_dir))
        if isinstance(examine(as_path, absent=TEXT_ABSENT), OSError):  # no id, but a file the OS will not examine
            check_readable(as_path)
        where = " nor in any other directory's sessions" if everywhere else ""
        raise NoSessionMatch(f"No session found matching '{path_text(reference)}' in "
                             f"{path_text(session_cwd_dir(cwd, session_dir))}{_directory_problem(cwd, session_dir)}{where}")
    listing = "\n".join(f"  {ids[path]}  {path_text(path)}" for path in matches)
    raise SessionFileError(f"Session id '{path_text(reference)}' is ambiguous; it matches {len(matches)} sessions:\n{listing}")


def id_matches(wanted: str, files: list[Path]) -> tuple[list[Path], dict[Path, str | None]]:
    """(those of `files` whose session id is `wanted` exactly, else those it prefixes; every file's id)."""
    ids = {path: _header_id(path) for path in files}
    exact = [path for path, sid in ids.items() if sid is not None and sid.lower() == wanted]
    return exact or sorted(path for path, sid in ids.items()
                           if sid is not None and sid.lower().startswith(wanted)), ids


def _elsewhere(wanted: str, session_dir: str | os.PathLike[str] | None,
               on_note: OnSkip | None) -> tuple[list[Path], dict[Path, str | None]]:
    """`id_matches` among every directory's sessions; `on_note` hears where one match is, and `skipped <why>`."""
    skipped = None if on_note is None else (lambda reason: on_note(f"skipped {reason}"))
    matches, ids = id_matches(wanted, all_session_files(session_dir, on_skip=skipped))
    if len(matches) == 1 and on_note is not None:
        on_note(f"session {ids[matches[0]]} is stored for another directory: {matches[0]}")
    return matches, ids


def file_of_id(infos: list[SessionInfo], session_id: str) -> Path | None:
    """The file of the session with exactly `session_id` among `infos` (a listing, newest first): the one
    named `<timestamp>_<id>.jsonl` when several carry the id (a copy), else the newest; None when none does."""
    paths = [info.path for info in infos if info.id == session_id]
    if len(paths) > 1:
        return _named_after_its_id(paths, {path: session_id for path in paths}) or paths[0]
    return paths[0] if paths else None


def _named_after_its_id(matches: list[Path], ids: dict[Path, str | None]) -> Path | None:
    """Among files with one exact session id (a copy, a recovery file of an older version), the only one named
    `<timestamp>_<id>.jsonl`; None when the ids differ (a prefix match) or no single file is so named."""
    if len({ids[path] for path in matches}) != 1:
        return None
    named = [path for path in matches if path.name.endswith(f"_{ids[path]}.jsonl")]
    return named[0] if len(named) == 1 else None


def _plain_file_or_id(path: Path, reference: str, cwd: str | os.PathLike[str],
                      session_dir: str | os.PathLike[str] | None, on_note: OnSkip | None) -> Path:
    """`path` when it is a session file (or no session has the id `reference`), else that session: an
    unrelated file that happens to carry the name must not hide the session."""
    try:
        read_header(path)
        return path
    except SessionFileError:
        pass
    matches, ids = id_matches(reference.strip().lower(), _session_files(cwd, session_dir))
    if len(matches) != 1:
        return path  # opening it says why it is no session file
    if on_note is not None:
        on_note(f"{reference} in the current directory is not a session file; opening session "
                f"{ids[matches[0]]} ({matches[0]})")
    return matches[0]


def format_session_list(infos: list[SessionInfo], *, as_json: bool = False) -> str:
    """`--list-sessions` output: a JSON array of `SessionInfo.to_json()`, or one line per session:
    `<id>  <modified, local time>  <messages> msgs  <name or first message, one line, ≤ 60 chars>`, then
    `  (<file name>)` when files share the id (copies), so the lines tell them apart as `/resume` does."""
    if as_json:
        return json.dumps([info.to_json() for info in infos], ensure_ascii=False, indent=2)
    if not infos:
        return "No sessions for this directory."
    ids: dict[str, int] = {}
    for info in infos:
        ids[info.id] = ids.get(info.id, 0) + 1
    return "\n".join(_list_line(info) + (_file_note(info) if ids[info.id] > 1 else "") for info in infos)


def _file_note(info: SessionInfo) -> str:
    return f"  ({_one_line(info.path.name)})"


def _list_line(info: SessionInfo) -> str:
    """One line for a terminal: the file's text (name, first message, id) without escape sequences or
    control characters (`_one_line`): a session file is data anyone may have written."""
    title = _one_line(info.name or info.first_message or "(no messages)")
    if info.recovered_from is not None:
        title = f"(recovered copy of {_one_line(info.recovered_from[:8])}) {title}"
    if len(title) > 60:
        title = title[:59] + "…"
    when = info.modified.astimezone().strftime("%Y-%m-%d %H:%M")
    return f"{_one_line(info.id)}  {when}  {info.message_count:>4} msgs  {title}"


def _one_line(text: str) -> str:
    """`text` cleaned for a terminal (`sanitize.terminal_text`), its whitespace runs one space each."""
    from ..tools.sanitize import terminal_text

    return " ".join(terminal_text(text).split())


def session_info(path: Path) -> SessionInfo | None:
    """The listing line of one file, None when it cannot be read or has no valid header."""
    return _info_or_skip(path, None)


def _info_or_skip(path: Path, on_skip: OnSkip | None) -> SessionInfo | None:
    try:
        parsed = read_session(path)
    except SessionFileError as exc:
        if on_skip is not None:
            on_skip(skip_reason(path, exc))
        return None
    header = parsed.header
    from datetime import datetime, timezone  # not at the top: see `entries.iso_timestamp`

    modified = datetime.fromtimestamp(_mtime(path), timezone.utc)
    name, first_message, count = _summarise(parsed.entries)
    return SessionInfo(
        path=path, id=header["id"], cwd=header["cwd"],
        created=parse_timestamp(header.get("timestamp", "")) or modified, modified=modified, name=name,
        first_message=first_message, message_count=count, parent_session=header.get("parentSession"),
        recovered_from=_text_or_none(header.get("recoveredFrom")),
    )


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _summarise(entries: list[SessionEntry]) -> tuple[str | None, str, int]:
    """(latest session name, first user message text, how many `file_messages` it has: `messageCount`)."""
    name: str | None = None
    first_message: str | None = None
    for entry in entries:
        if entry["type"] == "message":
            message = cast(MessageEntry, entry).get("message")
            if first_message is None and isinstance(message, dict) and message.get("role") == "user":
                first_message = message_text(message)
        elif entry["type"] == "session_info":
            value = cast(SessionInfoEntry, entry).get("name")
            name = value if isinstance(value, str) and value.strip() else None
    return name, first_message or "", len(file_messages(entries))


def file_messages(entries: list[SessionEntry]) -> list[AgentMessage]:
    """A file's messages, as listings (`messageCount`, `/resume`, `/session`) and `get_session_stats` count them: those of its
    `message` entries on every branch, tool results included, in file order (a hand-edited entry whose
    `message` is no object counts as a message of no role)."""
    found = (cast(MessageEntry, entry).get("message") for entry in entries if entry.get("type") == "message")
    return [message if isinstance(message, dict) else cast(AgentMessage, {}) for message in found]


def message_text(message: AgentMessage) -> str:
    """The text of a message's `content`: the string itself, or its text blocks joined with newlines."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [block["text"] for block in content if isinstance(block, dict) and isinstance(block.get("text"), str)]
    return "\n".join(parts)


def _session_files(cwd: str | os.PathLike[str], session_dir: str | os.PathLike[str] | None, *,
                   on_skip: OnSkip | None = None) -> list[Path]:
    """Every `*.jsonl` of the directory, whatever it is (a FIFO, a directory, a symlink loop): reading one
    that is no session file raises SessionFileError without blocking, so callers report it or pass it over.
    A directory that exists but cannot be read (no permission, a symlink loop) lists nothing and `on_skip` is
    told the OS's reason (`glob` alone would hide it as "no sessions")."""
    return _jsonl_files(session_cwd_dir(cwd, session_dir), on_skip) or []


def _jsonl_files(directory: Path, on_skip: OnSkip | None) -> list[Path] | None:
    """The `*.jsonl` names of `directory` (hidden ones aside); None when it is no directory (a stray file);
    `[]` with `on_skip` told the OS's reason when it exists but cannot be listed."""
    try:
        names = os.listdir(directory)
    except NotADirectoryError:
        return None
    except OSError as exc:
        if on_skip is not None and (reason := _unreadable_reason(exc)):
            on_skip(f"the session directory {path_text(directory)}: {reason}")
        return []
    return [directory / name for name in names if name.endswith(".jsonl") and not name.startswith(".")]


def _unreadable_reason(exc: OSError) -> str | None:
    """The OS's reason a session directory cannot be listed; None when it does not exist yet (no sessions)."""
    return None if isinstance(exc, FileNotFoundError) else exc.strerror or str(exc)


def _directory_problem(cwd: str | os.PathLike[str], session_dir: str | os.PathLike[str] | None) -> str:
    """` (cannot read it: <reason>)` when `cwd`'s session directory exists but cannot be listed, else ``."""
    try:
        os.listdir(session_cwd_dir(cwd, session_dir))
    except OSError as exc:
        reason = _unreadable_reason(exc)
        return f" (cannot read it: {reason})" if reason else ""
    return ""


def all_session_files(session_dir: str | os.PathLike[str] | None, *, on_skip: OnSkip | None = None) -> list[Path]:
    """Every `<sessions dir>/<directory>/*.jsonl`, of all directories (hidden names aside, as `glob` leaves
    them). The sessions directory, or one of its directories, that exists but cannot be listed (a symbolic
    link loop, no permission) is passed over and `on_skip` told the OS's reason once each: the rest is
    listed."""
    root = sessions_dir(os.fspath(session_dir) if session_dir is not None else None)
    files: list[Path] = []
    for name in sorted(_jsonl_parent_names(root, on_skip)):
        files += _jsonl_files(root / name, on_skip) or []
    return files


def _jsonl_parent_names(root: Path, on_skip: OnSkip | None) -> list[str]:
    try:
        return [name for name in os.listdir(root) if not name.startswith(".")]
    except OSError as exc:
        if on_skip is not None and (reason := _unreadable_reason(exc)):
            on_skip(f"the session directory {path_text(root)}: {reason}")
        return []


def _mtime(path: Path) -> float:
    """The file's mtime; a link that leads nowhere (a loop) has its own, so `-c` reports it in its place."""
    for stat_fn in (os.stat, os.lstat):
        try:
            return stat_fn(path).st_mtime
        except OSError:
            continue
    return 0.0


def _header_id(path: Path) -> str | None:
    """The session id of `path`, None when the file cannot be opened as a session (`read_header`)."""
    try:
        return read_header(path)["id"]
    except SessionFileError:
        return None


def explain_unusable(session_id: str, cwd: str | os.PathLike[str],
                     session_dir: str | os.PathLike[str] | None = None) -> None:
    """Raise `SessionFileError` with the reason a file of `cwd`'s sessions that holds session `session_id` (by
    its header, or by its name when it cannot be read at all) cannot be opened; return when there is none (the
    id names no session: the caller says so)."""
    _explain_unusable(session_id.strip().lower(), _session_files(cwd, session_dir))


def _explain_unusable(wanted: str, files: list[Path]) -> None:
    """`unusable.explain_unusable_files` (imported here, as in `skip_reason`: only a lookup that matched nothing
    needs it, and RPC mode's start-up imports no more than it must)."""
    from .unusable import explain_unusable_files

    explain_unusable_files(wanted, files)


def skip_reason(path: Path, exc: SessionFileError) -> str:
    """`unusable.skip_reason`: how a file left out is said (imported here: only a file that cannot be opened needs
    it)."""
    from . import unusable

    return unusable.skip_reason(path, exc)


def startup_session(cwd: str | os.PathLike[str], session_dir: str | os.PathLike[str] | None = None, *,
                    session: str | None = None, continue_recent: bool = False, fork: str | None = None,
                    no_session: bool = False, on_skip: OnSkip | None = None,
                    on_note: OnSkip | None = None) -> tuple[Path | None, Path | None]:
    """The CLI's session choice as `(file to resume, file to fork from)`; both None start a new session.

    `--session <path|id>` resumes that session, `--continue` the most recent one of `cwd` (none: a new
    session; `on_skip` is told of newer files it passed over), `--fork <path|id>` starts a new session from a
    copy of that file's active branch; `on_note` is told when a bare name was taken as an id
    (`resolve_session`). Raises
    SessionFileError for a reference that matches no session or several, and for flags that exclude each
    other (`--fork` or `--no-session` with `--session`/`--continue`, `--session` with `--continue`).
    """
    chosen = [flag for flag, used in (("--session", session is not None), ("--continue", continue_recent),
                                      ("--fork", fork is not None), ("--no-session", no_session)) if used]
    if len(chosen) > 1:
        raise SessionFileError(f"{' and '.join(chosen)} cannot be combined")
    if fork is not None:
        return None, resolve_session(fork, cwd, session_dir, on_note=on_note)
    if session is not None:
        return resolve_session(session, cwd, session_dir, on_note=on_note), None
    if continue_recent:
        recent = find_most_recent(cwd, session_dir, on_skip=on_skip)
        _note_recovery_copy(recent, on_note)
        return recent, None
    return None, None


def _note_recovery_copy(path: Path | None, on_note: OnSkip | None) -> None:
    """Tell `on_note` when `--continue` picked a recovery copy (`SessionStore.rescue`): it is the newest file,
    and holds what the original could not take, but it is another session id."""
    if path is None or on_note is None:
        return
    try:
        header = read_header(path)
    except SessionFileError:
        return
    if (original := _text_or_none(header.get("recoveredFrom"))) is not None:
        on_note(f"continuing session {header['id']} ({path_text(path)}), the recovery copy of session {original}")
