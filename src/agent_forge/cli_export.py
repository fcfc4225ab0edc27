"""`agent-forge --export SESSION [OUT]`: one session as an HTML page, written to a file or to stdout."""

from __future__ import annotations

import os
import sys

from .coding.export_html.exporter import named_descriptor
from .coding.paths import working_directory

STDOUT = "-"
"""The OUT that means stdout, as for most command line tools."""


def run_export(paths: list[str], session_dir: str | None) -> int:
    """Export `paths[0]` (a session file, or a full or partial session id of the current directory, as
    `--session` takes, or else of any directory) to `paths[1]` (default `./agent-forge-session-<name>.html`; `-`,
    like `/dev/stdout`, is stdout; `/dev/stderr`, `/dev/fd/N` write to that descriptor). Prints the written path
    on stdout (a descriptor's as given), nothing when the page went there; 0, or 1 with the reason on stderr, 2
    for more than two paths. The current directory is
    looked up only when a path is relative or defaulted (a deleted one raises `MissingDirectory`)."""
    if len(paths) > 2:
        _say("--export takes a session file or id and at most one output path")
        return 2
    from .coding.errors import ExportError, SessionFileError
    from .coding.export_html import export_session_file

    output = paths[1] if len(paths) == 2 else None
    try:
        cwd = _directory_for(paths[0], output)
        session = _session_file(paths[0], cwd, session_dir)
        descriptor = 1 if output == STDOUT else named_descriptor(output, cwd)
        if descriptor == 1:
            return _to_stdout(session)
        if descriptor is not None:
            written = _to_descriptor(session, descriptor, str(output))
        else:
            from .coding.tools.sanitize import print_warning

            written = str(export_session_file(session, output, cwd=cwd, on_warning=print_warning))
    except (ExportError, SessionFileError) as exc:
        _say(str(exc))
        return 1
    from .coding.paths import path_text
    from .modes.stdout_guard import print_out

    print_out(path_text(written))  # one line, no control characters: a name's ESC or newline must not reach the terminal
    return 0


def _directory_for(session: str, output: str | None) -> str:
    """The directory relative paths are taken in: the current one, unless every path is absolute."""
    absolute = [os.path.isabs(os.path.expanduser(session))]
    absolute.append(output == STDOUT or (output is not None and os.path.isabs(os.path.expanduser(output))))
    if all(absolute) and output not in (None, STDOUT):
        return os.path.dirname(os.path.expanduser(output)) or os.sep
    if all(absolute):
        return os.sep  # stdout: no output path to anchor
    return working_directory()


def _session_file(reference: str, cwd: str, session_dir: str | None) -> str:
    """The file `reference` names: a path, or an id among `cwd`'s sessions, else among every directory's (an
    export only reads the session, wherever it was made: `resolve_session`)."""
    from .coding.session.listing import resolve_session

    return str(resolve_session(reference, cwd, session_dir, on_note=_say, everywhere=True))


def _to_stdout(session_file: str) -> int:
    """The page on stdout (`--export S -`, `/dev/stdout`), nothing else there: a pipe gets clean HTML."""
    from .modes.stdout_guard import write_out

    page = _page(session_file)
    sys.stdout.flush()
    write_out(sys.stdout.buffer, page)
    return 0


def _to_descriptor(session_file: str, descriptor: int, given: str) -> str:
    """Write the page to our open `descriptor` (`/dev/stderr`, `/dev/fd/3`); returns `given`, the path as the
    user wrote it (its resolved name, `/proc/<pid>/fd/pipe:[N]`, means nothing to them). Raises ExportError for a
    descriptor of another process or one that is closed or read-only."""
    from .coding.errors import ExportError
    from .coding.paths import path_text, write_all

    if descriptor < 0:
        raise ExportError(f"Cannot write {path_text(given)}: it names a descriptor of another process")
    page = memoryview(_page(session_file))
    sys.stderr.flush()
    try:
        write_all(descriptor, page)
    except OSError as exc:
        raise ExportError(f"Cannot write {path_text(given)}: {exc.strerror or exc}") from None
    return given


def _page(session_file: str) -> bytes:
    """The page of `session_file` as UTF-8; what reading the file found damaged is said on stderr, as a resume
    says it (`Warning: session file ...: skipped 1 damaged line ...`). Raises ExportError, SessionFileError."""
    from .coding.export_html import SessionSnapshot, render_html
    from .coding.export_html.exporter import check_exportable, open_for_export
    from .coding.tools.sanitize import print_warning

    store = open_for_export(session_file, print_warning)
    try:
        snapshot = SessionSnapshot.of_store(store)
        check_exportable(snapshot)
        return render_html(snapshot).encode("utf-8", "replace")
    finally:
        store.close()


def _say(message: str) -> None:
    from .coding.tools.sanitize import terminal_text

    print(f"agent-forge: {terminal_text(message)}", file=sys.stderr)
