"""What a session reports about itself: the `get_state` and `get_session_stats` response data, and the
`export_html` file. Read-only: nothing here changes the session."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..lazy_re import LazyPattern
from .errors import CommandError, ExportError

if TYPE_CHECKING:
    from ..agent.agent import Agent
    from .approvals import Approvals
    from .compaction.controller import CompactionController
    from .session.store import SessionStore


def session_state(agent: Agent, store: SessionStore, compaction: CompactionController, approvals: Approvals, *,
                  streaming: bool) -> dict[str, Any]:
    """The `get_state` response data (seed 000); `streaming`: a session-level run is going on."""
    state: dict[str, Any] = {
        "model": agent.model,
        "thinkingLevel": agent.thinking_level,
        "isStreaming": streaming,
        "isCompacting": compaction.is_compacting,
        "steeringMode": agent.steering_mode,
        "followUpMode": agent.follow_up_mode,
        "sessionFile": str(store.path) if store.path else None,
        "sessionId": store.session_id,
        "autoCompactionEnabled": compaction.enabled,
        "messageCount": len(agent.messages),
        "pendingMessageCount": len(agent.steering_queue) + len(agent.follow_up_queue),
        "approvals": approvals.policy,
    }
    name = store.session_name
    if name:
        state["sessionName"] = name
    write_error = store.write_error
    if write_error is not None:
        state["sessionWriteError"] = write_error
    if store.load_warnings:  # what reading the session's file found damaged (`session/damage.py`)
        state["sessionWarnings"] = [warning.to_json() for warning in store.load_warnings]
    return state


def stats_report(agent: Agent, store: SessionStore, compaction: CompactionController) -> dict[str, Any]:
    """The `get_session_stats` response data (seed 000); what each number covers: `session/stats.py`."""
    from .session.stats import session_stats  # not at import: RPC mode's early get_state uses this module

    return session_stats(session_file=str(store.path) if store.path else None, session_id=store.session_id,
                         entries=store.entries, branch=store.branch(), model=agent.model,
                         context_tokens=compaction.context_tokens())


async def export_store(store: SessionStore, output_path: str | None, cwd: str) -> str:
    """Write `store`'s session as one self-contained HTML file; returns its absolute path. Relative and default
    paths are under `cwd`. Raises `CommandError` for an in-memory or empty session and for a path that cannot
    be written. Rendering runs in a thread on a snapshot taken now."""
    import asyncio  # not at import: RPC mode's early get_state uses this module (modes/rpc/early.py)

    try:
        from .export_html import SessionSnapshot, write_export  # only an export needs it (start-up: ~4 ms)

        snapshot = SessionSnapshot.of_store(store)
        return str(await asyncio.to_thread(write_export, snapshot, output_path, cwd))
    except ExportError as exc:
        raise CommandError(str(exc)) from None


MAX_SESSION_NAME = 200
"""Characters a session name may hold (after stripping)."""
_UNPRINTABLE = LazyPattern("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
"""Control characters (C0, DEL, C1: escapes, BEL, line breaks, tabs), bidirectional controls and the Unicode
line separators: what could rewrite a terminal, reorder a title or break a listing line."""


def session_name(name: object) -> str:
    """`name` as `set_session_name` records it (stripped): one line of at most `MAX_SESSION_NAME` characters
    without control characters (`_UNPRINTABLE`), at least one of them visible (`_visible`: not a name made of
    zero-width spaces). Raises `CommandError` for anything else, naming the problem."""
    if not isinstance(name, str):
        raise CommandError(f"Session name must be a string, got {type(name).__name__}")
    name = name.strip()
    if not name:
        raise CommandError("Session name cannot be empty")
    if (bad := _UNPRINTABLE.search(name)) is not None:
        raise CommandError(f"Session name must be one line of printable text (it holds {ascii(bad.group())} at "
                           f"character {bad.start() + 1})")
    if len(name) > MAX_SESSION_NAME:
        raise CommandError(f"Session name is too long ({len(name):,} characters; at most {MAX_SESSION_NAME})")
    if not any(map(_visible, name)):
        shown = ascii(name[:12]) + ("…" if len(name) > 12 else "")
        raise CommandError(f"Session name must hold a visible character, not only invisible ones ({shown}: spaces, "
                           "zero-width characters or combining marks alone)")
    return name


_INVISIBLE = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf", "Mn", "Me"})
"""Unicode categories drawn as nothing on their own: spaces and separators, controls, format characters (the
zero-width space, joiners, the BOM), combining marks (they mark the character before them)."""
_BLANKS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
"""Letters and symbols drawn as blanks: the Hangul fillers and the blank braille pattern."""


def _visible(char: str) -> bool:
    if char.isascii():
        return char.isprintable() and not char.isspace()
    import unicodedata  # only for a name without an ASCII letter (most names have one)

    return unicodedata.category(char) not in _INVISIBLE and char not in _BLANKS


def printable_title(text: str, limit: int = MAX_SESSION_NAME) -> str:
    """A title made from other text (a prompt's first line): control characters as spaces, one line, cut
    at `limit` characters (by default a session name's limit, so a title is never longer than a name)."""
    return " ".join(_UNPRINTABLE.sub(" ", text).split())[:limit]
