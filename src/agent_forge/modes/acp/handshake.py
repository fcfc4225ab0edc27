"""`initialize`: its answer, and answering it before the event loop is imported (issue 14's start-up budget:
spawn → `initialize` answer in ≤ 300 ms; asyncio alone costs ~80 ms of an idle 2-core machine's ~170).

`answer_early` reads the client's first line synchronously; when it is a well-formed `initialize` request it is
answered at once, and the server is told so (`Handshake.params`). Anything else (another method first, a bad
`initialize`, a line that is not JSON, end of input) is left to the server, which answers it as it answers every
message (`Handshake.rest`: the bytes read, given back to it unprocessed). Nothing here imports asyncio.
"""

from __future__ import annotations

from typing import Any, BinaryIO

from ..early_input import read_first_line
from .protocol import PROTOCOL_VERSION, AcpError, invalid_params

FIRST_LINE_LIMIT = 1 << 20
"""Bytes read at most while looking for the first line (an `initialize` is a few hundred): past them the server
reads on."""


class Handshake:
    """What `answer_early` did: `params` of the `initialize` it answered (None: it answered nothing), and `rest`,
    the bytes it read past that request (all it read when it answered nothing)."""

    def __init__(self, params: dict[str, Any] | None, rest: bytes):
        self.params, self.rest = params, rest


def initialize_result(params: dict[str, Any]) -> dict[str, Any]:
    """The `initialize` answer (`InitializeResponse`). Raises `AcpError` (-32602) for a `protocolVersion` that is
    no non-negative integer; any other version is answered with ours (the client disconnects if it cannot)."""
    version = params.get("protocolVersion")
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        raise invalid_params('"protocolVersion" must be a non-negative integer')
    from .auth import auth_methods

    return {"protocolVersion": PROTOCOL_VERSION, "agentInfo": agent_info(), "authMethods": auth_methods(),
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
                "mcpCapabilities": {"http": True, "sse": False},
                "sessionCapabilities": {"list": {}, "resume": {}, "close": {}}}}


def agent_info() -> dict[str, Any]:
    from ... import __version__

    return {"name": "agent-forge", "title": "agent-forge", "version": __version__}


def answer_early(stdin: BinaryIO, stdout: BinaryIO) -> Handshake:
    """Read up to the first line of `stdin` (blocking); answer it on `stdout` when it is an `initialize`."""
    data = read_first_line(stdin, FIRST_LINE_LIMIT)
    line, newline, rest = data.partition(b"\n")
    request = _initialize_request(line) if newline else None
    if request is None:
        return Handshake(None, data)
    try:
        result = initialize_result(request["params"])
    except AcpError:  # the server answers it with the error
        return Handshake(None, data)
    from ...ai import json_wire
    from ..stdout_guard import write_out

    write_out(stdout, json_wire.encode({"jsonrpc": "2.0", "id": request["id"], "result": result}) + b"\n")
    from ..early_signals import answered

    answered()  # the editor saw the agent serve: a stop from now on is no start-up stop
    return Handshake(request["params"], rest)


def _initialize_request(line: bytes) -> dict[str, Any] | None:
    """`line` as an `initialize` request with an object `params` and a string or integer id, else None."""
    from ...ai import json_wire

    try:
        message = json_wire.loads(line)
    except (ValueError, RecursionError):
        return None
    if not (isinstance(message, dict) and message.get("jsonrpc") == "2.0" and message.get("method") == "initialize"
            and isinstance(message.get("params"), dict)):
        return None
    request_id = message.get("id")
    usable = isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool))
    return message if usable else None
