"""Editor completion: `/` opens a menu of the commands (built-in, plugin, template, skill) filtered by what
follows it, with their argument hints and descriptions; `@` fuzzy file search over the working directory (as
git sees it: `.gitignore` rules applied, `ignore_walk`); Tab completion of paths. And the `@path` attachments
of a prompt when it is sent.

The file list is `file_index.FileIndex`: walked breadth-first in the background, kept fresh, capped (the menu
says when it was cut)."""

from __future__ import annotations

import os
import re
from typing import Any, Callable, Iterable

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from .file_index import FileIndex
from ...coding.paths import path_text

MAX_SHOWN = 30
_TOKEN = re.compile(r"(\S*)$")
_AT_TOKEN = re.compile(r'(?:^|(?<=\s))(@"[^"\n]*|@\S*)$')
"""The `@` token before the cursor: `@name`, or an open quoted `@"name with spaces`."""
ATTACHMENT = re.compile(r'(?:^|(?<=\s))@(?:"((?:[^"\\\n]|\\.)+)"|([^\s"]\S*))')
r"""An attachment: `@"path with spaces"` (group 1, `\"`, `\\`, `\n`, `\t`, `\xNN` escapes allowed) or `@path`
(group 2)."""
_ESCAPE = re.compile(r'\\(x[0-9a-fA-F]{2}|.)')
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f\x7f]')
_PATH_LIKE = re.compile(r"/|\.[A-Za-z0-9]{1,8}$")
"""An unquoted `@word` that was meant as a file (`@src/x`, `@notes.txt`), not a mention (`@alice`)."""


class FileCompleter(Completer):
    """Completions for the token before the cursor: a `/command` at the start of the prompt, `@` + fuzzy
    file name, or a path on Tab. `commands()` gives `(name, argument hint, description)` triples (the hint
    may be empty), read at each use; the menu shows `/name <hint>` and the description."""

    def __init__(self, cwd: str, commands: Callable[[], list[tuple[str, str, str]]] = lambda: [],
                 files: FileIndex | None = None):
        self._cwd = cwd
        self._commands = commands
        self.files = files or FileIndex(cwd)

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        before = document.text_before_cursor
        token = _TOKEN.search(before).group(1)
        if before.startswith("/") and " " not in before and "\n" not in before:
            needle = before[1:].lower()
            for name, hint, description in self._commands():
                if name.lower().startswith(needle) or (needle and needle in name.lower()):
                    yield Completion(f"/{name}", start_position=-len(before), display=f"/{name} {hint}".rstrip(),
                                     display_meta=description)
        elif (at := _AT_TOKEN.search(before)) is not None:
            token = at.group(1)
            found = self._fuzzy(token[2:] if token.startswith('@"') else token[1:])
            cut = f"(only the first {self.files.limit:,} files are searched, the shallowest)"
            for n, path in enumerate(found):  # the first row, always in view, says when the list was cut
                yield Completion(attachment_token(path), start_position=-len(token), display=path_text(path),
                                 display_meta=cut if n == 0 and self.files.truncated else "")
            if not found and self.files.truncated:  # taking this row changes nothing: it is the token itself
                yield Completion(token, start_position=-len(token), display=f"no match {cut}")
        elif complete_event.completion_requested and token:
            yield from _paths(self._cwd, token)

    def _fuzzy(self, needle: str) -> list[str]:
        scored = [(score, path) for path in self.files.files() if (score := fuzzy_score(needle, path)) is not None]
        scored.sort()
        return [path for _, path in scored[:MAX_SHOWN]]


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
            yield Completion(name + suffix, start_position=-len(prefix), display=path_text(name) + suffix)


def attachment_token(path: str) -> str:
    r"""How `path` is written to attach it: `@path`; `@"path"` when it holds whitespace or a quote, with `\"`,
    `\\` and control characters escaped (`\n`, `\t`, `\x1b`), so the token stays on one line."""
    if not re.search(r'[\s"]', path) and not _NEEDS_ESCAPE.search(path):
        return f"@{path}"
    return '@"' + _NEEDS_ESCAPE.sub(_escaped, path) + '"'


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    return {"\n": "\\n", "\t": "\\t", '"': '\\"', "\\": "\\\\"}.get(char) or f"\\x{ord(char):02x}"


def _unescaped(name: str) -> str:
    """A quoted token's path with `attachment_token`'s escapes undone."""
    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        return chr(int(code[1:], 16)) if len(code) == 3 else {"n": "\n", "t": "\t"}.get(code, code)

    return _ESCAPE.sub(one, name)


def _quoted_name(name: str, cwd: str) -> str:
    r"""A quoted token's path: as written when that names a file (an old `@"a\\b"`), else unescaped."""
    return name if os.path.isfile(os.path.join(cwd, os.path.expanduser(name))) else _unescaped(name)


def attachments(text: str, cwd: str, warn: Callable[[str], None] = lambda text: None
                ) -> tuple[str, list[dict[str, Any]]]:
    """The prompt with each `@path` or `@"path with spaces"` naming a file attached (as print mode attaches
    `@file` arguments: text as a `<file name=...>` block after the prompt, images as image blocks). `@words`
    that are no file stay as they are; `warn` is told of those that look meant as one (quoted, with a `/` or
    an extension, or followed by words that together name a file). Raises `CommandError` for a file that
    cannot be attached (binary, too large)."""
    from ..print_mode import attach_file

    parts: list[str] = []
    images: list[dict[str, Any]] = []
    seen: set[str] = set()
    for match in ATTACHMENT.finditer(text):
        name, quoted = match.group(1) or match.group(2), match.group(1) is not None
        name = _quoted_name(name, cwd) if quoted else name
        if not quoted and not os.path.isfile(os.path.join(cwd, os.path.expanduser(name))):
            name = name.rstrip(".,;:!?)") or name  # `see @notes.txt, then` names notes.txt
        if name in seen:
            continue
        seen.add(name)
        path = os.path.join(cwd, os.path.expanduser(name))
        if os.path.isfile(path):
            attach_file(path, name, parts, images)
            continue
        spaced = None if quoted else _spaced_file(name, text[match.end():], cwd)
        if spaced is not None:
            warn(f"@{name} was not attached: no such file; to attach {spaced}, write {attachment_token(spaced)}")
        elif quoted or _PATH_LIKE.search(name):
            warn(f"{match.group(0)} was not attached: no such file in {path_text(cwd)}")
    return "\n".join([text, *parts]), images


_FILE_BLOCK = '\n<file name="'


def typed_text(message: str, cwd: str) -> str:
    """What the user typed for a sent `message` (for the editor again: `/fork`, queued messages taken back):
    the `<file>` blocks `attachments` appended for its `@path` references removed, the references kept (sent
    again, they attach the files again, once). A message without such blocks is returned as it is."""
    at = message.find(_FILE_BLOCK)
    while at >= 0 and message.endswith("</file>"):
        typed = message[:at]
        name = message[at + len(_FILE_BLOCK):].split('">', 1)[0]
        if name in _attachment_paths(typed, cwd):
            return typed
        at = message.find(_FILE_BLOCK, at + 1)
    return message


_BLOCK = re.compile(r'\n<file name="([^"]*)">\n(.*?)\n</file>', re.DOTALL)
"""One `file_blocks.file_block` as `attachments` appends it: its text holds no `</file>` (written `<\\/file>`)."""
_ATTRIBUTE = {"&quot;": '"', "&lt;": "<", "&gt;": ">", "&#10;": "\n", "&#13;": "\r", "&amp;": "&"}


def attached_files(message: str) -> tuple[str, list[tuple[str, str]]]:
    """A sent `message` split into what the user typed and the files its `@` references attached, as
    `(name as typed, file text)` pairs, for the transcript to show `attached: notes.txt (30 lines)` instead of
    the text. Only a run of `<file>` blocks ending the message, each named by a reference in the text before
    them, counts (a `<file>` typed or pasted is text); else `(message, [])`."""
    at = message.find(_FILE_BLOCK)
    while at >= 0:
        typed, blocks = message[:at], _blocks(message[at:])
        references = _references(typed)
        names = [_typed_name(name, references) for name, _ in blocks or []]
        if blocks and None not in names:
            return typed, [(str(name), text) for name, (_, text) in zip(names, blocks)]
        at = message.find(_FILE_BLOCK, at + 1)
    return message, []


def _blocks(rest: str) -> list[tuple[str, str]] | None:
    """`rest` as `(name, text)` pairs when it is `<file>` blocks and nothing else, else None."""
    found, position = [], 0
    while position < len(rest):
        match = _BLOCK.match(rest, position)
        if match is None:
            return None
        name = re.sub(r"&(?:quot|lt|gt|amp|#10|#13);", lambda m: _ATTRIBUTE[m.group()], match.group(1))
        found.append((name, match.group(2)))
        position = match.end()
    return found


def _references(text: str) -> list[str]:
    """The names the `@` references of `text` may stand for (as written, punctuation cut, escapes undone)."""
    names = []
    for match in ATTACHMENT.finditer(text):
        name = match.group(1) or match.group(2)
        names += [name, name.rstrip(".,;:!?)") or name, _unescaped(name)]
    return names


def _typed_name(path: str, references: list[str]) -> str | None:
    """The reference that attached the file at `path` (`attach_file` names it `<cwd>/<reference>`), or None."""
    for name in references:
        expanded = os.path.expanduser(name)
        if path == expanded or path.endswith(os.sep + expanded.lstrip(os.sep)):
            return name
    return None


def _attachment_paths(text: str, cwd: str) -> set[str]:
    """The paths (as `attach_file` names them) the `@` references of `text` may have attached."""
    paths = set()
    for match in ATTACHMENT.finditer(text):
        name = match.group(1) or match.group(2)
        for candidate in {name, name.rstrip(".,;:!?)") or name, _unescaped(name)}:
            paths.add(os.path.join(cwd, os.path.expanduser(candidate)))
    return paths


def _spaced_file(name: str, rest: str, cwd: str) -> str | None:
    """The longest `name word word...` (up to 8 words of `rest`, the text after `@name`) naming a file."""
    words = rest.split(" ")[1:9] if rest.startswith(" ") else []
    for count in range(len(words), 0, -1):
        candidate = " ".join([name, *words[:count]])
        if "\n" not in candidate and os.path.isfile(os.path.join(cwd, os.path.expanduser(candidate))):
            return candidate
    return None


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
