"""Editor completion: `/` opens a menu of the commands (built-in, plugin, template, skill) filtered by what
follows it, with their argument hints and descriptions; `@` fuzzy file search over the working directory (as
git sees it: `.gitignore` rules applied, `ignore_walk`); Tab completion of paths. And the `@path` attachments
of a prompt when it is sent.

The file list is walked once, on the first `@`, and capped at `MAX_FILES` (a huge tree stays responsive)."""

from __future__ import annotations

import os
import re
from typing import Any, Callable, Iterable

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from ...coding.tools.ignore_walk import walk

MAX_FILES = 20_000
MAX_SHOWN = 30
_TOKEN = re.compile(r"(\S*)$")
ATTACHMENT = re.compile(r"(?:^|(?<=\s))@(\S+)")


class FileCompleter(Completer):
    """Completions for the token before the cursor: a `/command` at the start of the prompt, `@` + fuzzy
    file name, or a path on Tab. `commands()` gives `(name, argument hint, description)` triples (the hint
    may be empty), read at each use; the menu shows `/name <hint>` and the description."""

    def __init__(self, cwd: str, commands: Callable[[], list[tuple[str, str, str]]] = lambda: []):
        self._cwd = cwd
        self._commands = commands
        self._files: list[str] | None = None

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        before = document.text_before_cursor
        token = _TOKEN.search(before).group(1)
        if before.startswith("/") and " " not in before and "\n" not in before:
            needle = before[1:].lower()
            for name, hint, description in self._commands():
                if name.lower().startswith(needle) or (needle and needle in name.lower()):
                    yield Completion(f"/{name}", start_position=-len(before), display=f"/{name} {hint}".rstrip(),
                                     display_meta=description)
        elif token.startswith("@"):
            for path in self._fuzzy(token[1:]):
                yield Completion(f"@{path}", start_position=-len(token), display=path)
        elif complete_event.completion_requested and token:
            yield from _paths(self._cwd, token)

    def _fuzzy(self, needle: str) -> list[str]:
        if self._files is None:
            self._files = [path for path, is_dir in _limited(walk(self._cwd)) if not is_dir]
        scored = [(score, path) for path in self._files if (score := fuzzy_score(needle, path)) is not None]
        scored.sort()
        return [path for _, path in scored[:MAX_SHOWN]]


def _limited(entries: Iterable[tuple[str, bool]]) -> Iterable[tuple[str, bool]]:
    for count, entry in enumerate(entries):
        if count >= MAX_FILES:
            return
        yield entry


def fuzzy_score(needle: str, path: str) -> tuple[int, int, str] | None:
    """None unless `needle`'s characters appear in `path` in order (case-insensitive); lower is better:
    a match in the file name beats one spread over directories, then shorter paths."""
    if not needle:
        return (0, len(path), path)
    lower, name_at = path.lower(), path.rfind("/") + 1
    position, first = 0, -1
    for char in needle.lower():
        position = lower.find(char, position)
        if position < 0:
            return None
        first = position if first < 0 else first
        position += 1
    return (0 if first >= name_at else 1, len(path), path)


def _paths(cwd: str, token: str) -> Iterable[Completion]:
    """Entries of the token's directory starting with its last part; directories end in `/`."""
    directory, _, prefix = token.rpartition("/")
    base = os.path.join(cwd, os.path.expanduser(directory) if directory else ".")
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return
    for name in names:
        if name.startswith(prefix) and (prefix.startswith(".") or not name.startswith(".")):
            suffix = "/" if os.path.isdir(os.path.join(base, name)) else ""
            yield Completion(name + suffix, start_position=-len(prefix), display=name + suffix)


def attachments(text: str, cwd: str) -> tuple[str, list[dict[str, Any]]]:
    """The prompt with each `@path` naming a file attached (as print mode attaches `@file` arguments: text
    as a `<file name=...>` block after the prompt, images as image blocks). `@words` that are no file stay
    as they are. Raises `CommandError` for a file that cannot be attached (binary, too large)."""
    from ..print_mode import attach_file

    parts: list[str] = []
    images: list[dict[str, Any]] = []
    for name in dict.fromkeys(ATTACHMENT.findall(text)):
        path = os.path.join(cwd, os.path.expanduser(name))
        if os.path.isfile(path):
            attach_file(path, name, parts, images)
    return "\n".join([text, *parts]), images


def menu_fragments(state: Any, rows: int, width: int) -> list[tuple[str, str]]:
    """The completion menu: `rows` completions of `state` (a buffer's `complete_state`, or None) around the
    selected one, which is highlighted, each on one row of `width` columns."""
    from .render import fit
    from .render import clean

    if state is None:
        return []
    index = state.complete_index
    start = max(0, (index or 0) - rows + 1)
    out = []
    for position, completion in enumerate(state.completions[start:start + rows], start):
        style = "class:dialog-chosen" if position == index else "class:dim"
        meta = clean(completion.display_meta_text)
        out.append((style, fit(f"  {clean(completion.display_text)}{'  ' + meta if meta else ''}", width) + "\n"))
    if out:
        out[-1] = (out[-1][0], out[-1][1].rstrip("\n"))
    return out
