"""Server messages the agent drops unread: an MCP server's log messages (`notifications/message`, the
specification's `logging` utility). The agent shows none of them, and the SDK would validate each one (a task
and pydantic per message: 20,000 of them cost about 3 s of CPU) only to discard it."""

from __future__ import annotations

from ...ai.json_wire import loads

UNSHOWN_METHOD = "notifications/message"
_MARK = b'"notifications/message"'


def unshown_line(line: bytes | bytearray) -> bool:
    """Whether a stdio line is a log notification: the method's name must be in it (a scan, no parse, for every
    other line), then the line is parsed to be sure (a request or answer merely mentioning it is kept)."""
    if _MARK not in line:
        return False
    try:
        message = loads(bytes(line))
    except ValueError:
        return False  # not JSON: the transport reports it
    return isinstance(message, dict) and message.get("method") == UNSHOWN_METHOD and "id" not in message


def unshown_message(message: object) -> bool:
    """Whether a message the SDK's HTTP transport parsed (a `JSONRPCNotification`) is a log notification."""
    return getattr(message, "method", None) == UNSHOWN_METHOD and getattr(message, "id", None) is None
