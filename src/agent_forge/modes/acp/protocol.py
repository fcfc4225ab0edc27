"""ACP constants and the one error type handlers raise (protocol version 1, `agentclientprotocol/
agent-client-protocol` schema/schema.json: `ErrorCode`, `StopReason`)."""

from __future__ import annotations

from typing import Any

from ...ai.visible_text import escape_invisible

PROTOCOL_VERSION = 1
"""The only major version this agent speaks; `initialize` answers it whatever the client asked for (the spec's
negotiation: the client disconnects when it cannot speak the agent's answer)."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
AUTH_REQUIRED = -32000
RESOURCE_NOT_FOUND = -32002
SESSION_IN_USE = -32001
"""This agent's own code (the schema's server-error range): the stored session is open in another process."""


class AcpError(Exception):
    """A JSON-RPC error answer: `code` (one of the constants above), `message`, optional `data`."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data

    def to_wire(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


def client_text(text: str, limit: int = 300) -> str:
    """Text the client wrote (an error message, a value), fit to show: one line, every control, invisible and
    bidi character as its escape (`\\x1b`, `\\u202e`, `\\n`), cut to `limit` characters (`…` marks the cut)."""
    shown = escape_invisible(text.replace("\n", "\\n").replace("\t", "\\t"))
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def invalid_params(message: str) -> AcpError:
    return AcpError(INVALID_PARAMS, f"Invalid params: {message}")
