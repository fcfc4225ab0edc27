"""How an MCP connection describes what went wrong: the innermost exception of the SDK's exception groups, a
pydantic error's summary, the line a server wrote; and `SkippedLines`, which reports a server's stdout lines that
are not JSON-RPC without an event per line (`docs/mcp.md`, "Connections")."""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Callable

from .http_status import lasting

REPORT_EVERY_S = 1.0
"""Skipped lines are reported (an `mcp_server_changed` event) at most this often: a server that logs to stdout
may write thousands of lines a second."""


_RESTART_DELAY = re.compile(r"; restarting in \d+ s\b")


def restart_delay(seconds: int) -> str:
    """The suffix a failed server's error gets while its restart is due: `; restarting in <seconds> s`."""
    return f"; restarting in {seconds} s"


def without_restart_delay(text: str) -> str:
    """`text` (an error, or a notice quoting one) without its `restart_delay` suffix: for readers a restart
    does not concern (`/mcp`'s table, print mode, which does not wait for one)."""
    return _RESTART_DELAY.sub("", text)


class SkippedLines:
    """Counts the lines skipped; `text` says so (the latest line, the count so far). `report()` is called for
    the first at once, then at most every `REPORT_EVERY_S` (a last call follows the end of a burst)."""

    def __init__(self, report: Callable[[], None]):
        self.report = report
        self.count = 0
        self._latest = ""
        self._reported_at = float("-inf")
        self._timer: asyncio.TimerHandle | None = None

    def add(self, line: str) -> None:
        """`line` (as `first_line` shows it) was skipped."""
        self.count += 1
        self._latest = line
        wait = self._reported_at + REPORT_EVERY_S - time.monotonic()
        if wait <= 0:
            self._send()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(wait, self._send)

    @property
    def text(self) -> str:
        more = f" ({self.count:,} lines skipped so far)" if self.count > 1 else ""
        return f"the server wrote something that is not JSON-RPC: {self._latest}{more}"

    def _send(self) -> None:
        self._timer = None
        self._reported_at = time.monotonic()
        self.report()


def innermost(exc: BaseException) -> BaseException:
    """The first leaf of the SDK's (anyio's) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def lasting_failure(leaf: BaseException) -> str | None:
    """Why a connection attempt that failed with `leaf` (`innermost`) would fail the same way again, or None:
    a malformed answer, an HTTP status the server repeats (`http_status.LASTING`)."""
    if type(leaf).__name__ == "ValidationError":
        return "a malformed answer does not change by itself"
    if lasting(leaf):
        return "the server gives this answer until its entry in mcp.json changes"
    return None


def validation_summary(exc: BaseException) -> str:
    """`content: Input should be a valid list; ...` for the first problems of a pydantic ValidationError."""
    try:
        problems = exc.errors()[:3]  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 (any other shape: its first line will do)
        return first_line(exc)  # type: ignore[arg-type]
    return "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in problems)


def parse_reason(exc: BaseException) -> str:
    """Why pydantic could not read a message: its JSON error (`Invalid JSON: invalid escape at line 1 column
    41`), else the shape problems of an answer (`JSONRPCResponse.result: Input should be an object`)."""
    try:
        problems = exc.errors()  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 (not pydantic's)
        return first_line(exc)  # type: ignore[arg-type]
    if problems and problems[0].get("type") == "json_invalid":
        return str(problems[0].get("msg"))
    answers = [p for p in problems if p.get("loc", ("",))[:1] in (("JSONRPCResponse",), ("JSONRPCError",))]
    wrong = [p for p in answers if p.get("type") != "missing"]  # (`error` is missing from every result answer)
    return "not JSON-RPC: " + "; ".join(f"{'.'.join(str(part) for part in p.get('loc', ()))}: {p.get('msg')}"
                                        for p in (wrong or answers or problems)[:3])


def first_line(exc: Exception) -> str:
    """What the server wrote, quoted (its first 200 characters), else the exception's first line. A pydantic
    error holds the line: as text when it is not JSON, as the parsed value when it is JSON of another shape."""
    line = getattr(exc, "line", None)  # `stdio_transport.NotJsonRpc`
    try:
        line = exc.errors()[0]["input"] if line is None else line  # type: ignore[attr-defined]
    except (AttributeError, IndexError, KeyError, TypeError):
        line = None
    if line is not None and not isinstance(line, str):  # JSON of another shape: quoted, not pydantic's text
        line = json.dumps(line, ensure_ascii=False, separators=(",", ":"), default=str)
    if isinstance(line, str):
        return repr(line[:200])
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


BROKEN_STREAM = ("SSE stream ended without a response", "SSE stream failed")
"""How the SDK's HTTP client fails a request whose answer stream ended: the server died or dropped it."""


def stream_broke(exc: BaseException) -> bool:
    """Whether `exc` (a failed request's) is the SDK's HTTP client saying the answer stream ended (`BROKEN_STREAM`)."""
    error = getattr(innermost(exc), "error", None)
    return str(getattr(error, "message", "")).startswith(BROKEN_STREAM)


def connection_dropped(exc: BaseException) -> bool:
    """Whether `exc` is the HTTP client saying the server dropped the connection (httpx's `RemoteProtocolError`,
    "Server disconnected without sending a response.", or `ReadError`): which of them comes depends on where the
    request was when the server died."""
    return type(exc).__name__ in ("RemoteProtocolError", "ReadError") or str(exc).startswith("Server disconnected")


class ConnectionLost(Exception):
    """The server's stream ended (it exited or closed stdout), or its connection must end."""
