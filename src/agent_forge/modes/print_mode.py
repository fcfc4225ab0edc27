"""Print mode (`-p`) and JSON event mode (`--mode json`): run one prompt and exit.

The prompt is the message arguments joined by spaces, `@path` arguments replaced by the file's content, and
piped stdin prepended. Exit code 1 when the run ends in an error or abort.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ..coding.agent_session import AgentSession, CommandError
from .rpc.framing import encode


def build_prompt(arguments: list[str], cwd: str, stdin_text: str | None) -> str:
    """Join message arguments; `@file` arguments become `<file name="...">content</file>` blocks."""
    parts = [stdin_text.rstrip("\n")] if stdin_text else []
    for argument in arguments:
        if argument.startswith("@") and len(argument) > 1:
            path = Path(cwd, argument[1:]).expanduser()
            try:
                parts.append(f'<file name="{path}">\n{path.read_text(errors="replace")}\n</file>')
            except OSError as exc:
                raise CommandError(f"Cannot read {argument[1:]}: {exc.strerror}") from None
        else:
            parts.append(argument)
    return "\n".join(p for p in parts if p)


def _read_stdin() -> str | None:
    if sys.stdin is None or sys.stdin.isatty():
        return None
    return sys.stdin.buffer.read().decode("utf-8", "replace")


async def run_print_mode(session: AgentSession, arguments: list[str], *, json_events: bool) -> int:
    try:
        text = build_prompt(arguments, session.cwd, _read_stdin())
        if not text.strip():
            raise CommandError("No prompt given: pass a message or pipe text on stdin.")
        if json_events:
            session.subscribe(lambda event: _write_json(event))
        session.prompt(text)
    except CommandError as exc:
        print(f"agent-forge: {exc}", file=sys.stderr)
        return 1
    await session.close()
    return _finish(session, json_events)


def _write_json(event: dict[str, Any]) -> None:
    sys.stdout.buffer.write(encode(event))
    sys.stdout.buffer.flush()


def _finish(session: AgentSession, json_events: bool) -> int:
    last = next((m for m in reversed(session.messages) if m.get("role") == "assistant"), None)
    if last is None:
        return 1
    if last.get("stopReason") in ("error", "aborted"):
        print(f"agent-forge: {last.get('errorMessage') or last['stopReason']}", file=sys.stderr)
        return 1
    if not json_events:
        print(session.last_assistant_text() or "")
    return 0
