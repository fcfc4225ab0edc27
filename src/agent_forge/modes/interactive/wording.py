"""The UI's words for session refusals worded for RPC clients: what the screen says instead of a protocol
field (`streamingBehavior`) or command the person never sees."""

from __future__ import annotations

from ...coding.errors import BusyError, CommandError
from .keymap import key_hint


def error_text(exc: CommandError) -> str:
    """The line to show for `exc`: its own message, unless that message is meant for RPC clients."""
    if isinstance(exc, BusyError):  # the UI queues while the session works: only a race lands here
        return ("the agent got busy before the message was taken in, so it was not queued"
                + key_hint("app.send", " ({} queues it)"))
    return str(exc)
