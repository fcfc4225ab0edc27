"""RPC mode: JSON commands on stdin, responses and events on stdout (seed 000), driving one AgentSession.

Every command is answered exactly once, with the request's `id` whenever the line was a JSON object. Commands
are read while a run goes on, so `get_state` or `abort` mid-stream are answered at once. Ordering is by
protocol, never by timing (docs/rpc.md, "Response order"): quick commands are answered in arrival order, long
ones (handlers marked `background`) when they are done, while the next commands are read. On stdin EOF the
running work finishes, the session is flushed and the process exits 0. When stdout cannot be written (a full
disk), no further command is handled and the mode stops (`modes/termination.py`).
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any, Awaitable, Callable

from ...coding.paths import path_text
from ...coding.errors import CommandError
from ...coding.paths import os_failure
from ...coding.agent_session import AgentSession
from . import framing
from .. import approvals, stdout_guard
from .burst import BurstWriter
from .handlers import HANDLERS
from .raw_json import holds_in_record
from .streams import ByteReader, ByteWriter, FdReader
from .types import COMMANDS, INPUT_MESSAGES, NO_ID, response
from .validation import command_problem, type_problem, usable_fields


class RpcServer:
    """Reads commands from a `ByteReader`, dispatches them to handlers, writes records to `out` (a
    `ByteWriter`: stdout in RPC mode, an in-memory pipe in tests)."""

    def __init__(self, session: AgentSession, out: ByteWriter):
        self.session = session
        self.out = out
        self._burst = BurstWriter(out)
        self._background: set[asyncio.Task] = set()
        session.subscribe(self.write)

    def write(self, record: dict[str, Any]) -> None:
        """Write one record; it leaves with the others of this loop turn (`burst.py`), at the latest on
        `flush_out`. A client gone away: the session still finishes and flushes."""
        self._burst.write(framing.encode(record))

    def flush_out(self) -> None:
        """Write the records still waiting for the end of this loop turn."""
        self._burst.flush()

    async def serve(self, reader: ByteReader | int = 0) -> int:
        """Serve until `reader` ends (a file descriptor is read with `FdReader`); the exit code, 0."""
        if isinstance(reader, int):
            reader = FdReader(reader)
        self._spawn(self.session.hooks.start())  # plugins' session_start, now that their events reach the client
        self.session.intake.journal.announce()  # messages a killed process left queued, restored at open
        records: asyncio.Queue[bytes | framing.OversizedLine | None] = asyncio.Queue()
        worker = asyncio.ensure_future(self._handle_records(records))
        splitter = framing.LineSplitter(framing.MAX_COMMAND_BYTES)
        while chunk := await reader.read(1 << 16):
            for record in splitter.feed(chunk):
                self._receive(record, records)
        for record in splitter.finish():
            self._receive(record, records)
        self.session.hooks.input_closed()  # no dialog can be answered any more: they resolve with defaults
        approvals.input_closed(self.session)  # and approval questions reject
        self.session.mcp.input_closed()  # MCP calls get their deadline, no run waits for a starting server
        self.session.run.input_closed()  # no new automatic retry: the agent exits after the current attempt
        records.put_nowait(None)
        await worker
        await self.shutdown()
        self.flush_out()
        return 0

    def _receive(self, record: bytes | framing.OversizedLine,
                 records: asyncio.Queue[bytes | framing.OversizedLine | None]) -> None:
        """Commands are handled one at a time, in order; answers to plugin dialogs skip that queue, because the
        command being handled (a vetoable `fork`, a plugin's input handler) may be the one waiting for them. The
        type is compared after JSON decoding (it may be written with `\\u` escapes); only lines that could be an
        answer are decoded here."""
        if isinstance(record, bytes) and (b"ui_response" in record or b"\\u" in record) \
                and self._answer_dialog(record):
            return
        records.put_nowait(record)

    def _answer_dialog(self, record: bytes) -> bool:
        try:
            message = framing.decode(record)
        except ValueError:
            return False  # the command queue answers the parse error
        if not (isinstance(message, dict) and message.get("type") == "extension_ui_response"):
            return False
        approvals.answer_dialog(self.session, usable_fields(message))
        return True

    async def _handle_records(self, records: asyncio.Queue[bytes | framing.OversizedLine | None]) -> None:
        while (record := await records.get()) is not None:
            if stdout_guard.failure is None:  # once answers cannot be written, no command may start work
                await self.handle_record(record)

    async def shutdown(self) -> None:
        if self._background:
            await asyncio.wait(self._background)
        await self.session.close()

    async def handle_record(self, record: bytes | framing.OversizedLine) -> None:
        if isinstance(record, framing.OversizedLine):
            self.write(response("parse", error=f"Failed to parse command: {record.error()}"))
            return
        try:
            command = framing.decode(record)
        except ValueError as exc:  # a line that is not UTF-8 may still give its id back (docs/rpc.md)
            salvaged = getattr(exc, "request_id", None)
            request_id = salvaged[0] if salvaged else NO_ID
            self.write(response("parse", request_id, error=f"Failed to parse command: {exc}"))
            return
        if not isinstance(command, dict):
            self.write(response("parse", error=f"Failed to parse command: expected a JSON object, got "
                                               f"{_json_kind(command)}"))
            return
        await self.dispatch(command)

    async def dispatch(self, command: dict[str, Any]) -> None:
        request_id = command.get("id", NO_ID)
        kind = command.get("type")
        if not isinstance(kind, str):
            self.write(response("unknown", request_id, error=type_problem(kind)))
            return
        if kind in INPUT_MESSAGES:
            approvals.answer_dialog(self.session, usable_fields(command))  # unknown or late ids: ignored
            return
        if kind not in COMMANDS:
            self.write(response(kind, request_id, error=f"Unknown command: {path_text(kind)}"))
            return
        problem = command_problem(command)
        if problem is not None:
            self.write(response(kind, request_id, error=problem))
            return
        await self._run_handler(kind, command, request_id)

    async def _run_handler(self, kind: str, command: dict[str, Any], request_id: Any) -> None:
        handler = HANDLERS[kind]  # every command of COMMANDS has one (tests/modes/test_rpc_order.py)
        long = self._is_long(handler, command)
        work = self._call(handler, command)  # now, in arrival order: what `abort` stops is stopped before the next
        if long:  # command is handled (an `async def` handler does nothing until awaited; `registry.py`)
            # Long commands (and ones that wait on plugin code) must never hold up `abort` or `get_state`:
            # they answer when done, and the next command is read at once.
            self._spawn(self._answer(handler, kind, work, request_id))
        else:
            await self._answer(handler, kind, work, request_id)

    def _call(self, handler: Callable[..., Awaitable[Any]], command: dict[str, Any]) -> Awaitable[Any]:
        try:
            return handler(self, command)
        except Exception as exc:  # a plain-function handler's immediate part failed: answered like the rest
            return _raising(exc)

    def _is_long(self, handler: Callable[..., Any], command: dict[str, Any]) -> bool:
        """The handler's `background` mark: a bool, or a predicate of `(server, command)` for commands that are
        long only in some sessions (`prompt` while plugins handle input)."""
        background = getattr(handler, "background", False)
        return bool(background(self, command) if callable(background) else background)

    async def _answer(self, handler: Callable[..., Awaitable[Any]], kind: str, work: Awaitable[Any],
                      request_id: Any) -> None:
        try:
            data = await work
            has_data = data is not None or getattr(handler, "nullable", False)
            record = response(kind, request_id, data=data, has_data=has_data)
            # A long read's whole record is made in a worker thread, in one buffer (`raw_json.InRecord`).
            line = await framing.encode_off_loop(record) if holds_in_record(data) else None
        except CommandError as exc:
            self.write(response(kind, request_id, error=str(exc)))
        except Exception as exc:  # a handler bug (or an unchecked path) answers this command; the session goes on
            error = os_failure(exc) or f"Internal error: {type(exc).__name__}: {exc}"
            self.write(response(kind, request_id, error=error))
        else:
            if line is None:
                self.write(record)
            else:
                self._burst.write(line)

    def _spawn(self, coro: Awaitable[None]) -> asyncio.Task:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task


async def _raising(exc: Exception) -> Any:
    raise exc


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array"}.get(
        type(value), type(value).__name__)


async def run_rpc_mode(session: AgentSession, reader: ByteReader | None = None,
                       writer: ByteWriter | None = None, *, early: Any = None) -> int:
    """Serve RPC until the input ends: on stdin/stdout, or on `reader`/`writer` when given (in-process use).
    `early`: what `early.start_early` did on stdin/stdout; the input it read and did not answer is read first."""
    if session.warnings:  # they may quote plugin or settings text: cleaned for the terminal
        from ...coding.tools.sanitize import print_warning

        for warning in session.warnings:
            print_warning(warning)
    problem = session.readiness_problem()  # stdout is the protocol: a missing key is only seen on a prompt
    if problem is not None:
        print(f"agent-forge: {problem}", file=sys.stderr)
    from ..stdout_guard import protocol_stdin, protocol_stdout

    server = RpcServer(session, writer if writer is not None else protocol_stdout())
    if reader is None:  # fd 0 is the null device once the CLI claimed stdin: the private copy is read
        from ..output_pump import note_input_closed

        reader = FdReader(protocol_stdin().fileno(), note_input_closed)
        if early is not None and early.rest:
            from ..early_input import PrefixedReader

            reader = PrefixedReader(early.rest, reader)
    try:
        return await server.serve(reader)
    finally:  # a signal cancels `serve` after the run's last records were written
        server.flush_out()
