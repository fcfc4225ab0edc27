"""Print mode (`-p`) and JSON event mode (`--mode json`): run the prompts given on the command line, then exit.

Prompts (as the reference CLI, `cli.md`): each message argument is one prompt, run one after another. The first
prompt also carries piped stdin and every `@path` argument, in front of the message (after it when the message
is a `/command` naming a plugin command, template or skill, so that the command still runs and gets them as
its arguments): a text file as a `<file name="...">` block, an image (`.png`, `.jpg`, `.jpeg`, `.gif`,
`.webp`) as an attachment. An `@path` must be a regular file of at most `MAX_FILE_BYTES`, an image must start
with its type's magic bytes (`file_kinds.image_data_problem`), and a file that is not an image must not contain
NUL bytes (binary); piped stdin obeys the same size and binary rules; anything else is refused before any
request (exit code 1).

Each prompt takes the input path of RPC `prompt` (`AgentSession.submit`): a plugin command (`/name args`) runs
to its end instead of reaching the model, plugin `input` handlers may transform or handle the text, then
`/skill:` and template expansion. A prompt a plugin handled starts no run and adds no output.

Output: print mode writes the final answer's text of the last run to stdout (nothing when no prompt started a
run); JSON mode writes the session header and then every event as one JSON line (the event shapes of RPC mode,
`docs/rpc.md`). Diagnostics go to stderr: why a run ended without an answer (`print_outcome.run_problem`),
every failed compaction (with its advice, e.g. an overflow compaction cannot fix), each tool call the approval
policy refused with no one to ask (`modes/approvals.refusal_notice`; the exit code stays the run's), and in print mode a notice
for an answer cut off at the output token limit or without text (`print_outcome.answer_notices`) and one for
each MCP server a prompt ran without (`print_outcome.McpNotices`; the answer still counts: exit code 0). Text that
reaches the terminal (the answer, diagnostics quoting model or server text) is cleaned by
`sanitize.terminal_text`: no escape sequence or control character but newline and tab (a lone `\r` becomes a
newline); JSON mode's JSON escapes control characters anyway. Exit code 0 when every run ended normally (a
handled prompt counts as normal, even when the plugin command failed: that is an `extension_error`; a cut-off
answer too), 1 when there is no prompt, `-p`'s answer has no text, a file or piped stdin is refused, no model
or key is configured, a run ends in an error or abort (later prompts are then not sent), stdout cannot be
written or was closed at start (`stdout_guard`), or a write of the session file failed (a full disk; even when
the entries were written later, stderr says whether any were lost).
"""

from __future__ import annotations

import base64
import io
import os
import sys
from pathlib import Path
from typing import Any, BinaryIO, Callable

from ..agent.types import ToolError
from ..ai import json_wire
from ..coding.errors import CommandError
from ..coding.file_blocks import file_block
from ..coding.agent_session import AgentSession
from ..coding.tools.file_kinds import image_data_problem, looks_binary, open_regular
from ..coding.tools.sanitize import print_warning, terminal_text
from ..coding.tools.truncate import format_size
from . import stdout_guard, termination
from .print_outcome import NO_TEXT, McpNotices, RunWatch, answer_notices, run_problem
from .rpc.framing import encode
from .stdout_guard import protocol_stdout, write_out
from ..coding.paths import path_text

IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
               ".webp": "image/webp"}

MAX_FILE_BYTES = 5 * 1024 * 1024
"""Larger `@path` files are refused: 5 MB of text is over a million tokens, beyond any model's context, and
providers refuse larger images (Anthropic's limit is 5 MB per image)."""

Prompt = tuple[str, list[dict[str, Any]]]
"""(text, image blocks) of one prompt."""


def build_prompts(arguments: list[str], cwd: str, stdin_text: str | None,
                  names_command: Callable[[str], bool] = lambda text: False) -> list[Prompt]:
    """The prompts of a command line (see the module docstring). Raises `CommandError` when an `@path`
    cannot be read or nothing at all was given. A first message `names_command` accepts (a `/plugin`
    command, template or skill) stays first, so it still runs: piped text and files come after it."""
    files = [a[1:] for a in arguments if a.startswith("@") and len(a) > 1]
    messages = [a for a in arguments if not (a.startswith("@") and len(a) > 1)]
    parts = [stdin_text.rstrip("\n")] if stdin_text and stdin_text.strip() else []
    images: list[dict[str, Any]] = []
    for name in files:
        attach_file(Path(cwd, name).expanduser(), name, parts, images)
    leading = messages[:1] if messages and names_command(messages[0]) else []
    first = "\n".join([*leading, *parts, *messages[len(leading):1]])
    if not first.strip() and not images and not messages[1:]:
        raise CommandError("No prompt given: pass a message, an @file, or pipe text on stdin.")
    return [(first, images), *[(message, []) for message in messages[1:]]]


def attach_file(path: Path | str, name: str, parts: list[str], images: list[dict[str, Any]]) -> None:
    """Add a file to a prompt: text as a `<file name="...">` block in `parts`, an image as a block in
    `images` (also the interactive mode's `@path`). Raises `CommandError` as `build_prompts` describes."""
    path = Path(path)
    data = _read_file(path, name)
    mime = IMAGE_TYPES.get(path.suffix.lower())
    if mime is not None:
        encoded = base64.b64encode(data).decode("ascii")
        problem = image_data_problem(encoded, mime)  # a .png that is not one would fail every later request
        if problem is not None:
            raise CommandError(f"Cannot attach {name}: {problem}.")
        images.append({"type": "image", "data": encoded, "mimeType": mime})
    elif looks_binary(data):
        raise CommandError(f"Cannot attach {name}: it is a binary file (it contains NUL bytes). Only text files "
                           f"and images ({', '.join(IMAGE_TYPES)}) can be attached.")
    else:
        parts.append(file_block(str(path), data.decode("utf-8", "replace")))


def _read_file(path: Path, name: str) -> bytes:
    """The bytes of `path`, which must be a regular file of at most `MAX_FILE_BYTES`; `CommandError` if not.
    A FIFO or device is refused without being opened for reading, so it cannot hang the start-up."""
    try:
        with open(open_regular(str(path), os.O_RDONLY), "rb") as f:
            size = os.fstat(f.fileno()).st_size
            data = f.read(MAX_FILE_BYTES + 1) if size <= MAX_FILE_BYTES else b""
    except ToolError as exc:
        raise CommandError(f"Cannot attach {path_text(name)}: {exc}") from None
    except OSError as exc:
        raise CommandError(f"Cannot read {path_text(name)}: {exc.strerror or exc}") from None
    size = max(size, len(data))  # the file may have grown while being read
    if size > MAX_FILE_BYTES:
        raise CommandError(f"Cannot attach {name}: it is over the {format_size(MAX_FILE_BYTES)} limit for @file "
                           f"arguments ({size:,} bytes).")
    return data


async def _read_stdin() -> str | None:
    """Piped stdin (the mode's own copy: `stdout_guard.claim_stdin`) as text; None for a terminal (nothing is
    piped) or a closed stdin. The rules of `@path` text files hold: `CommandError` for more than
    `MAX_FILE_BYTES` (no more is read) or for binary data (NUL bytes). Waiting for a slow writer leaves the
    event loop free, so a stop signal ends the wait at once (`termination`)."""
    from .stdout_guard import protocol_stdin

    if sys.stdin is None:
        return None
    stream = protocol_stdin()
    if stream.isatty():
        return None
    data = await _read_at_most(stream, MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise CommandError(f"Cannot use piped stdin: it is over the {format_size(MAX_FILE_BYTES)} limit for "
                           "piped input and @file arguments.")
    if looks_binary(data):
        raise CommandError("Cannot use piped stdin: it is binary data (it contains NUL bytes). Only text can be "
                           f"piped; attach images as @file arguments ({', '.join(IMAGE_TYPES)}).")
    return data.decode("utf-8", "replace")


async def _read_at_most(stream: BinaryIO, limit: int) -> bytes:
    """Up to `limit` bytes of `stream`, fewer only at end of file (an unbuffered pipe returns what it has).
    A pipe, FIFO, socket or character device (unbuffered: a buffered stream may hold data its descriptor no
    longer shows) is read only once the event loop says it is readable: a read then returns at once, and a
    stop signal ends the wait. Other streams (a regular file, an in-process buffer) are read as they are."""
    chunks: list[bytes] = []
    size = 0
    waits = _may_block(stream)
    while size < limit:
        if waits:
            waits = await _readable(stream.fileno())
        chunk = stream.read(min(1 << 20, limit - size))
        if not chunk:  # the end (None: a non-blocking descriptor another reader drained, as good as the end)
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _may_block(stream: BinaryIO) -> bool:
    """Whether a read of `stream` may wait for a writer: an unbuffered pipe, FIFO, socket or character device."""
    import stat

    if not isinstance(stream, io.FileIO):
        return False
    mode = os.fstat(stream.fileno()).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


async def _readable(fd: int) -> bool:
    """Wait until `fd` is readable (data or its end); False at once when the loop cannot watch it (the null
    device: epoll refuses it, and its reads do not block)."""
    import asyncio

    loop = asyncio.get_running_loop()
    ready = loop.create_future()
    try:
        loop.add_reader(fd, lambda: ready.done() or ready.set_result(None))
    except (OSError, ValueError):
        return False
    try:
        await ready
    finally:
        loop.remove_reader(fd)
    return True


async def run_print_mode(session: AgentSession, arguments: list[str], *, json_events: bool) -> int:
    """Run the command line's prompts on `session` and report as described in the module docstring."""
    for warning in session.warnings:
        print_warning(warning)
    try:
        prompts = build_prompts(arguments, session.cwd, await _piped_prompt(), session.names_command)
    except CommandError as exc:
        return _fail(str(exc))
    session.hooks.input_closed()  # nobody can abort: plugin tools get `pluginHandlerTimeoutMs` (docs/plugins.md)
    if json_events:
        session.subscribe(_JsonWriter(session.store.header))
    else:  # JSON mode has them as `mcp_server_changed` events
        session.subscribe(McpNotices(_fail))
    compactions, watch = _CompactionFailures(), RunWatch()
    session.subscribe(compactions)
    session.subscribe(watch)
    code, ran = await _run_prompts(session, prompts, compactions, watch)
    await session.close()
    if code == 0 and ran and not json_events:
        code = _print_answer(session, watch)
    if code == 0 and session.write_failures:
        return _fail(f"the session file could not be written ({'; '.join(session.write_failures)})")
    return code


async def _piped_prompt() -> str | None:
    """`_read_stdin`, saying so on stderr when a stop signal ends the wait for the writer (nothing was sent)."""
    import asyncio

    try:
        return await _read_stdin()
    except asyncio.CancelledError:
        if termination.stopped_by is not None:
            _fail(f"Stopped by {termination.stopped_by} while the prompt was being read from stdin: nothing was sent.")
        raise


def _print_answer(session: AgentSession, watch: RunWatch) -> int:
    """Write the last run's answer; notices for a cut or empty one on stderr. 1 for an answer with no text."""
    text = session.last_assistant_text()
    _write(json_wire.encode_utf8(f"{terminal_text(text or '')}\n"))  # never a UnicodeEncodeError
    notices = answer_notices(watch, text)
    for notice in notices:
        _fail(notice)
    return 1 if any(n.startswith(NO_TEXT) for n in notices) else 0


async def _run_prompts(session: AgentSession, prompts: list[Prompt], compactions: _CompactionFailures,
                       watch: RunWatch) -> tuple[int, bool]:
    """(exit code, whether any prompt started a run). Failed compactions are reported after each prompt."""
    ran = False
    for text, images in prompts:
        previous = watch.last
        watch.start()
        try:
            disposition = await session.submit(text, images or None)
        except CommandError as exc:
            return _fail(str(exc)), ran
        if disposition == "handled":
            await _finish_plugin_work(session)
            watch.last = watch.last or previous  # a command that started no run leaves the answer as it was
            continue
        ran = True
        await session.wait_for_idle()
        if stdout_guard.failure is not None:  # stopped because output is lost: `cli.main` says why, once
            return 1, ran
        failures = compactions.take()
        for failure in failures:
            _fail(failure)
        problem = run_problem(watch, termination.stopped_by)
        if problem is not None:  # an unresolved overflow's report already quotes the provider's error
            return (1 if any(problem in failure for failure in failures) else _fail(problem)), ran
    return 0, ran


async def _finish_plugin_work(session: AgentSession) -> None:
    """A plugin command runs as its own task: it finishes (with any run it started) before the next prompt,
    within `pluginHandlerTimeoutMs` (then it is cancelled). `wait_for_tasks` is the plugin runner's; sessions
    without plugins have nothing to wait for."""
    wait_for_tasks = getattr(session.hooks, "wait_for_tasks", None)
    if wait_for_tasks is not None:
        await wait_for_tasks(bounded=True)  # no client can abort a command that never ends (docs/plugins.md)
    await session.wait_for_idle()


class _CompactionFailures:
    """Session listener collecting the `errorMessage` of each failed (not aborted) compaction: print mode shows
    no events, and these messages say what to do (docs/compaction.md)."""

    def __init__(self) -> None:
        self._messages: list[str] = []

    def __call__(self, event: dict[str, Any]) -> None:
        if event.get("type") == "compaction_end" and not event.get("aborted") and event.get("errorMessage"):
            self._messages.append(str(event["errorMessage"]))

    def take(self) -> list[str]:
        """The messages collected since the last call."""
        messages, self._messages = self._messages, []
        return messages


class _JsonWriter:
    """Session listener for JSON mode: the session header before the first event, then each event."""

    def __init__(self, header: dict[str, Any]):
        self._header: dict[str, Any] | None = header

    def __call__(self, event: dict[str, Any]) -> None:
        if self._header is not None:
            header, self._header = self._header, None
            _write(encode(header))
        _write(encode(event))


def _write(data: bytes) -> None:
    """To the claimed stdout (`stdout_guard`): plugin prints went to stderr. A reader that went away
    (`| head -1`) does not stop the run; the session is still saved."""
    write_out(protocol_stdout(), data)


def _fail(message: str) -> int:
    """Say `message` on stderr (cleaned: it may quote model or server text); 1, the exit code."""
    print(f"agent-forge: {terminal_text(message)}", file=sys.stderr)
    return 1
