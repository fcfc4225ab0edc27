"""Reading one JSON-RPC message from an MCP server, on every transport: lone UTF-16 surrogates are repaired, and
a message that cannot be read still gives the id of the request it answers (`docs/mcp.md`, "Connections").

The SDK parses with pydantic's JSON parser, which refuses a `\\ud800` escape without its other half: valid JSON
syntax, and what Python's `json.dumps` and JavaScript's `JSON.stringify` write for a string cut inside a
surrogate pair. Such a message would be lost, and the request it answers left waiting. Here it is parsed by the
standard library, its lone surrogates become U+FFFD (as RPC and ACP input does, `ai/json_wire.py`) and it is
validated as usual. A message that still cannot be read, but answers a request (`answer_id`), fails that request
at once (`unreadable_answer`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ...ai import json_wire
from ...lazy_re import LazyPattern

if TYPE_CHECKING:
    from mcp.shared.message import SessionMessage
    from mcp_types import JSONRPCMessage

_TOKEN = LazyPattern(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]]')  # a string, or a bracket: what nesting depends on
_KEY_END = LazyPattern(r"\s*:\s*")
_ID_VALUE = LazyPattern(r'-?\d+(?![\d.eE])|"[^"\\]*(?:\\.[^"\\]*)*"')
MAX_SCANNED_TOKENS = 100_000
"""`answer_id` looks at most this many strings and brackets (a few tens of milliseconds): the members of a
message's top level come first in what servers write (`jsonrpc`, `id`), whatever a result holds after them."""


def validate_message(data: str | bytes | bytearray) -> JSONRPCMessage:
    """The JSON-RPC message in `data` (UTF-8; invalid bytes become U+FFFD), lone surrogates replaced by U+FFFD.
    Raises pydantic's `ValidationError` (a `ValueError`) when it is not JSON, or JSON of another shape."""
    from mcp_types import jsonrpc_message_adapter

    try:
        return jsonrpc_message_adapter.validate_json(data, by_name=False)
    except ValueError:
        text = data if isinstance(data, str) else bytes(data).decode("utf-8", "replace")
        if not json_wire.may_hold_surrogates(text):
            raise  # pydantic's error says where the JSON is broken
    return jsonrpc_message_adapter.validate_python(json_wire.scrub_in_place(_parsed(text)), by_name=False)


def _parsed(text: str) -> Any:
    """The JSON value of `text` by the standard library (as lenient as pydantic's parser: NaN too, and it keeps
    lone surrogates). Raises pydantic's `ValidationError` (what the SDK catches) naming the first fault after a
    lone surrogate, where pydantic's parser stopped."""
    from pydantic_core import ValidationError

    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        where = json_wire.problem(exc)
        raise ValidationError.from_exception_data("JSONRPCMessage", [
            {"type": "json_invalid", "loc": (), "input": text, "ctx": {"error": where}}]) from None


def answer_id(text: str) -> int | str | None:
    """The `id` of the top-level object in `text` (JSON, maybe broken after it) when it is an answer: no
    top-level `method` (a request of the server's, or a notification) is seen; else None."""
    depth, found, scanned = 0, None, 0
    for token in _TOKEN.finditer(text):
        scanned += 1
        if scanned > MAX_SCANNED_TOKENS:
            break
        kind = token[0][0]
        if kind in "{[":
            depth += 1
        elif kind in "}]":
            depth -= 1
        elif depth == 1 and (colon := _KEY_END.match(text, token.end())):
            if token[0] == '"method"':
                return None
            if token[0] == '"id"' and found is None:
                found = _id_value(text, colon.end())
    return found


def _id_value(text: str, start: int) -> int | str | None:
    value = _ID_VALUE.match(text, start)
    if value is None:
        return None
    try:
        parsed = json.loads(value[0])
    except ValueError:
        return None
    return parsed if isinstance(parsed, (int, str)) else None


def unreadable_answer(request_id: int | str, reason: str, quoted: str) -> SessionMessage:
    """A JSON-RPC error answering `request_id`, for an answer that could not be read: the request waiting for
    it fails at once (the SDK drops one for an id nobody waits for)."""
    from mcp.shared.message import SessionMessage
    from mcp_types import PARSE_ERROR, ErrorData, JSONRPCError

    message = f"the server's answer could not be read ({reason}): {quoted}"
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=PARSE_ERROR,
                                                                                    message=message)))


class LenientAdapter:
    """Stands in for the SDK's `jsonrpc_message_adapter` in its HTTP client (`install`): `validate_json` is
    `validate_message`; everything else is the adapter's."""

    def __init__(self, adapter: Any):
        self._adapter = adapter

    def validate_json(self, data: str | bytes | bytearray, **_: object) -> JSONRPCMessage:
        return validate_message(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._adapter, name)


def install_in_http_client() -> None:
    """Make the SDK's streamable HTTP client read its JSON responses and server-sent events with
    `validate_message` (idempotent). Its parse is a module-level name, so a stand-in there covers every path:
    answers, notifications and server requests, on a request's stream and on the GET stream alike."""
    from mcp.client import streamable_http

    if not isinstance(streamable_http.jsonrpc_message_adapter, LenientAdapter):
        streamable_http.jsonrpc_message_adapter = LenientAdapter(streamable_http.jsonrpc_message_adapter)
