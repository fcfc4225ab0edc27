"""ACP mode: JSON-RPC requests from the editor dispatched to the session registry, session events sent back
as `session/update` notifications (docs/acp.md).

Requests are handled one at a time in arrival order, each answered exactly once; `session/prompt` takes its
place on arrival and answers when its run settles, while the next messages are read (`session/cancel` acts at
once). Every method but `initialize` is refused (`-32600`) until `initialize` is answered. Nothing heavy is
imported before that: a first `initialize` is answered before the event loop exists (`handshake.py`), and
sessions are built on `session/new`. On stdin EOF running turns are aborted and saved, the sessions closed, and
the process exits 0.
"""

from __future__ import annotations

import asyncio
import traceback
from typing import Any, Awaitable, Callable

from ..rpc.streams import ByteReader, ByteWriter, FdReader
from .answers import checked
from ..early_input import PrefixedReader
from .handshake import Handshake, initialize_result
from .protocol import INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, AcpError, invalid_params
from .sessions import AcpSession, Registry, absolute_dir, mcp_servers
from .transport import Connection, Incoming

Handler = Callable[["AcpServer", dict[str, Any]], Awaitable[Any]]
METHODS: dict[str, Handler] = {}
NOTIFICATIONS: dict[str, Callable[["AcpServer", dict[str, Any]], None]] = {}


def method(name: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        METHODS[name] = fn
        return fn

    return register


class AcpServer:
    """Serves one client over `out` (stdout in ACP mode, a pipe in tests); `args`: the parsed command line."""

    def __init__(self, args: Any, out: ByteWriter):
        self.connection = Connection(out)
        self.registry = Registry(args, self.send_update, checked(self.connection.request))  # answers' shapes checked
        self._prompts: set[asyncio.Future[Any]] = set()
        self._after: list[Callable[[], None]] = []  # notifications that must follow the answer being written
        self.initialized = False  # `initialize` was answered: the other methods are served

    @property
    def closed(self) -> bool:
        return self.registry.closed

    async def terminate(self) -> None:
        await self.registry.terminate()

    def accept_initialize(self, params: dict[str, Any]) -> None:
        """`initialize` was answered: the client's capabilities are kept and the other methods served."""
        capabilities = params.get("clientCapabilities")
        self.registry.client_capabilities = capabilities if isinstance(capabilities, dict) else {}
        session_caps = self.registry.client_capabilities.get("session")
        self.registry.notices = isinstance(session_caps, dict) and session_caps.get("notices") is not None
        self.initialized = True

    def send_update(self, session_id: str, update: dict[str, Any]) -> None:
        self.connection.notify("session/update", {"sessionId": session_id, "update": update})

    async def serve(self, reader: ByteReader | int = 0) -> int:
        """Serve until `reader` ends; the exit code, 0."""
        if isinstance(reader, int):
            reader = FdReader(reader)
        async for message in self.connection.read_messages(reader):
            await self._handle(message)
        self.connection.close()
        await self.registry.abort_all()  # nobody reads the answers any more: the turns end now, saved as aborted
        if self._prompts:
            await asyncio.wait(self._prompts)
        await self.registry.close()
        return 0

    async def _handle(self, message: Incoming) -> None:
        params = message.params if message.params is not None else {}
        if message.kind == "notification":
            notification = NOTIFICATIONS.get(str(message.method))
            if notification is not None and isinstance(params, dict):
                try:
                    notification(self, params)
                except Exception:  # a notification has no answer to carry the error: say it, go on
                    traceback.print_exc()
            return  # unknown notifications are ignored (JSON-RPC: a notification gets no answer)
        handler = METHODS.get(str(message.method))
        if handler is None and str(message.method) in NOTIFICATIONS:  # a notification sent with an id: done,
            handler = _as_request(NOTIFICATIONS[str(message.method)])  # and answered (result null)
        if handler is None:
            self.connection.error(message.id, AcpError(METHOD_NOT_FOUND, f"Method not found: {message.method}"))
            return
        if not self.initialized and handler is not _initialize:  # the spec: the connection is initialized first
            self.connection.error(message.id, AcpError(INVALID_REQUEST, f"{message.method} before initialize: "
                                                       "send initialize first"))
            return
        try:
            if not isinstance(params, dict):
                raise invalid_params("params must be an object")
            result = await handler(self, params)
        except AcpError as exc:
            self.connection.error(message.id, exc)
        except Exception as exc:  # a bug answers this request; the agent goes on
            self.connection.error(message.id, _failure(exc))
        else:
            if isinstance(result, _Later):
                self._spawn(self._answer_later(message.id, result.work))
            else:
                self.connection.result(message.id, result)
        after, self._after = self._after, []
        for notify in after:
            try:
                notify()
            except Exception:  # a bug in what follows an answer must not end the mode
                traceback.print_exc()

    async def _answer_later(self, request_id: Any, work: Awaitable[Any]) -> None:
        try:
            result = await work
        except AcpError as exc:
            self.connection.error(request_id, exc)
        except Exception as exc:
            self.connection.error(request_id, _failure(exc))
        else:
            self.connection.result(request_id, result)

    def _spawn(self, coro: Awaitable[None]) -> None:
        self.keep(asyncio.ensure_future(coro))

    def keep(self, task: asyncio.Future[Any]) -> None:
        """Hold `task` until it is done; the mode ends only after it."""
        self._prompts.add(task)
        task.add_done_callback(self._prompts.discard)

    def after(self, notify: Callable[[], None]) -> None:
        """Run `notify` once the answer to the request being handled is written."""
        self._after.append(notify)


class _Later:
    """A handler's answer that comes when `work` is done (the request after it is read meanwhile)."""

    def __init__(self, work: Awaitable[Any]):
        self.work = work


@method("initialize")
async def _initialize(server: AcpServer, params: dict[str, Any]) -> Any:
    result = initialize_result(params)  # raises for a bad protocolVersion: nothing is kept then
    server.accept_initialize(params)
    return result


@method("authenticate")
async def _authenticate(server: AcpServer, params: dict[str, Any]) -> Any:
    from .auth import authenticate

    return authenticate(params.get("methodId"))


@method("session/new")
async def _new(server: AcpServer, params: dict[str, Any]) -> Any:
    from .config import config_options
    from .permissions import mode_state

    cwd = absolute_dir(params.get("cwd"))
    servers, notes = mcp_servers(params.get("mcpServers"))
    opened = await server.registry.open(cwd, servers)
    server.after(lambda: _announce(server, opened, notes))
    return {"sessionId": opened.id, "configOptions": opened.shown.answered(config_options(opened.session)),
            "modes": mode_state(opened.approvals.policy)}


@method("session/load")
async def _load(server: AcpServer, params: dict[str, Any]) -> Any:
    return await _reopen(server, params, replayed=True)


@method("session/resume")
async def _resume(server: AcpServer, params: dict[str, Any]) -> Any:
    return await _reopen(server, params, replayed=False)


async def _reopen(server: AcpServer, params: dict[str, Any], *, replayed: bool) -> Any:
    """`session/load` (the conversation replayed before the answer, as the spec asks) or `session/resume` (the
    editor keeps its own history: nothing replayed) of a stored session, or of one open in this process."""
    from .config import config_options
    from .permissions import mode_state
    from .replay import replay

    session_id = params.get("sessionId")
    if not isinstance(session_id, str) or not session_id:
        raise invalid_params('"sessionId" must be a string')
    cwd = absolute_dir(params.get("cwd"))
    servers, notes = mcp_servers(params.get("mcpServers"))
    opened = server.registry.sessions.get(session_id)
    if opened is None:
        opened = await server.registry.open(cwd, servers, server.registry.stored(session_id, cwd))
        agent = opened.session.agent  # what the file left queued, restored: told when it is delivered
        opened.updates.expect_restored([*agent.steering_queue, *agent.follow_up_queue])
    else:
        notes = []  # an open session keeps its servers
    if replayed:  # an open session also tells what is under way (a streaming answer, running calls)
        running = opened.updates.running_calls()
        for update in [*replay(opened.session.messages, opened.session.cwd, running), *opened.updates.in_flight()]:
            server.send_update(opened.id, update)
    server.after(lambda: _announce(server, opened, notes))
    return {"configOptions": opened.shown.answered(config_options(opened.session)),
            "modes": mode_state(opened.approvals.policy)}


@method("session/close")
async def _close(server: AcpServer, params: dict[str, Any]) -> Any:
    """Cancel the session's turn (its prompts answer `cancelled`), then close it: its MCP servers stop, its
    file is released (another process may open it), and its id is unknown here until `session/load`."""
    await server.registry.close_one(server.registry.get(params.get("sessionId")))
    return {}


@method("session/list")
async def _list(server: AcpServer, params: dict[str, Any]) -> Any:
    cwd = params.get("cwd")  # the sessions of that directory; without it, every directory's (the spec)
    return server.registry.page(absolute_dir(cwd) if cwd is not None else None, params.get("cursor"))


@method("session/set_mode")
async def _set_mode(server: AcpServer, params: dict[str, Any]) -> Any:
    opened = server.registry.get(params.get("sessionId"))
    mode = params.get("modeId")
    try:
        opened.approvals.set_policy(mode)
    except ValueError as exc:
        raise invalid_params(str(exc)) from None
    server.after(lambda: server.send_update(opened.id, {"sessionUpdate": "current_mode_update",  # the core's
                                                          "currentModeId": opened.approvals.policy}))
    return {}


@method("session/set_config_option")
async def _set_config_option(server: AcpServer, params: dict[str, Any]) -> Any:
    from .config import set_option

    opened = server.registry.get(params.get("sessionId"))
    change = lambda: set_option(opened.session, params.get("configId"), params.get("value"))  # noqa: E731
    return {"configOptions": opened.shown.answer(change)}  # the answer tells them: no config_option_update


@method("session/prompt")
async def _prompt(server: AcpServer, params: dict[str, Any]) -> Any:
    from . import commands

    opened = server.registry.get(params.get("sessionId"))
    if not opened.session.is_streaming:
        opened.updates.new_turn()
    named = commands.builtin(opened.session, params.get("prompt"))
    if named is not None:  # /compact, /name, /export: what ACP has no method for
        send = opened.updates.aside  # a reply sent while the answer streams waits for its message to end
        work = opened.turns.command(lambda: commands.run(opened.session, *named, send),
                                    when_idle=named[0] in commands.AFTER_THE_TURN)
        return _Later(_flushed_first(opened, work))
    untitled = not opened.session.store.session_name and not opened.session.messages
    turn = opened.turns.submit(params.get("prompt"))
    title = opened.turns.first_line
    if untitled and title and not title.startswith("/"):  # the title `session/list` will show (not a command)
        server.after(lambda: opened.shown.title(title))
    return _Later(_flushed_first(opened, turn))


async def _flushed_first(opened: AcpSession, answer: Awaitable[Any]) -> Any:
    """`answer`'s outcome once what the prompt had said beside a streaming message is sent (`Updates.flushed`),
    and a model it switched is told (`Shown.check`): the editor takes the `session/prompt` answer as the end of
    that turn's updates."""
    try:
        return await answer
    finally:
        opened.shown.check()
        await opened.updates.flushed()


def _cancel(server: AcpServer, params: dict[str, Any]) -> None:
    session_id = params.get("sessionId")
    opened = server.registry.sessions.get(session_id) if isinstance(session_id, str) else None
    if opened is not None:  # a cancel of no known session is ignored: a notification cannot be refused
        server.keep(opened.turns.cancel())


NOTIFICATIONS["session/cancel"] = _cancel


def _as_request(notification: Callable[[AcpServer, dict[str, Any]], None]) -> Callable[..., Awaitable[None]]:
    async def handler(server: AcpServer, params: dict[str, Any]) -> None:
        notification(server, params)

    return handler


def _announce(server: AcpServer, opened: AcpSession, notes: list[str]) -> None:
    """What the editor shows about a session once it knows its id: its commands, name and context use, `notes`
    about its request (an MCP server renamed) and the session's warnings (damaged lines a load passed over: also
    on stderr, `sessions._warn`)."""
    from ...coding.tools.sanitize import print_warning
    from .commands import commands, warn_shadowed
    from .updates import usage_update

    send = lambda update: server.send_update(opened.id, update)  # noqa: E731
    for note in notes:
        opened.updates.tell(note, "info")
        print_warning(note)
    for warning in opened.session.warnings:
        opened.updates.tell(f"Warning: {warning}", "warning")
    send({"sessionUpdate": "available_commands_update", "availableCommands": commands(opened.session)})
    warn_shadowed(opened.session)
    from ...coding.state import printable_title

    name = printable_title(opened.session.store.session_name or "", 200)
    if name:
        opened.shown.title(name, again=True)  # a load of a session open here: this view of it was not told
    if opened.session.model is not None:
        send(usage_update(opened.session))
    if not opened.started:  # plugins' session_start, now that their notifications reach the editor
        opened.started = True
        server.keep(asyncio.ensure_future(opened.session.hooks.start()))


async def run_acp_mode(args: Any, reader: ByteReader | None = None, writer: ByteWriter | None = None,
                       handshake: Handshake | None = None) -> int:
    """Serve ACP on stdin/stdout (or `reader`/`writer`) until the input ends, stopping cleanly on a signal.
    `handshake`: what `handshake.answer_early` did on stdin/stdout before the event loop started."""
    from ..stdout_guard import protocol_stdin, protocol_stdout
    from ..termination import run_until_terminated

    server = AcpServer(args, writer if writer is not None else protocol_stdout())
    from ..output_pump import note_input_closed

    source: ByteReader = reader if reader is not None else FdReader(protocol_stdin().fileno(), note_input_closed)
    if handshake is not None:
        if handshake.params is not None:
            server.accept_initialize(handshake.params)
        source = PrefixedReader(handshake.rest, source)
    work = server.serve(source)
    if reader is not None:
        return await work
    return await run_until_terminated(server, work)  # type: ignore[arg-type]


def _failure(exc: Exception) -> AcpError:
    """The error answer of a request that raised: invalid params for an `OSError` naming a user-given file
    (`cannot use <path>: <reason>`, `coding/paths.os_failure`), else an internal error naming the exception."""
    from ...coding.paths import os_failure

    refused = os_failure(exc)
    if refused is not None:
        return invalid_params(refused)
    return AcpError(INTERNAL_ERROR, f"Internal error: {type(exc).__name__}: {exc}")
