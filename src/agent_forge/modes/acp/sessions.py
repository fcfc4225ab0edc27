"""The ACP sessions of one process: each an AgentSession built like the other modes' (`coding/factory.py`,
the command line's model, tool and resource flags), in the directory `session/new` or `session/load` names.

Session ids are the stored sessions' ids, so `session/load` and `session/list` find what any mode saved for
that directory. The client's MCP servers join the session's own (`mcp.json`) through the MCP support
(`docs/mcp.md`): stdio servers with their `env`, HTTP servers with their `headers`.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from datetime import timezone
from typing import TYPE_CHECKING, Any, Callable

from .protocol import INTERNAL_ERROR, RESOURCE_NOT_FOUND, SESSION_IN_USE, AcpError, client_text, invalid_params

if TYPE_CHECKING:
    from .witness import DiskWitness
    from .client_fs import Request

PAGE_SIZE = 50
"""`session/list` answers at most this many sessions; `nextCursor` continues."""


class AcpSession:
    """One ACP session: the AgentSession, its update translator, its title and options, and its prompts."""

    def __init__(self, session: Any, send: Callable[[str, dict[str, Any]], None], notices: bool,
                 witness: DiskWitness | None = None):
        from .shown import Shown
        from .turns import Turns  # with the first session: `initialize` is answered before (start-up budget)
        from .updates import Updates

        self.session = session
        self.id: str = session.store.session_id
        self.updates = Updates(session, lambda update: send(self.id, update), notices=notices, witness=witness)
        session.subscribe(self.updates)
        self.shown = Shown(session, lambda update: send(self.id, update))
        session.subscribe(self.shown)
        self.turns = Turns(session, self.updates.tell)
        self.approvals: Any = None  # `coding/approvals.Approvals`, the session mode (`permissions.py`)
        self.terminals: Any = None  # `client_terminal.ClientTerminals` when bash runs in the editor's terminals
        self.started = False  # the plugins' session_start has run


class Registry:
    """Sessions by id; `args` are the parsed command line (flags that shape every session)."""

    def __init__(self, args: Any, send: Callable[[str, dict[str, Any]], None], request: "Request"):
        self.args, self.send, self.request = args, send, request
        self.client_capabilities: dict[str, Any] = {}  # of `initialize`
        self.notices = False  # the client accepts `notice` updates (`initialize`)
        self.sessions: dict[str, AcpSession] = {}
        self.closed = False
        self._said_skipped: set[str] = set()  # damaged session files' reasons, said once

    def get(self, session_id: Any) -> AcpSession:
        """Raises `AcpError`: invalid params for an id that is no string (a missing one included), resource not
        found for an id of no open session."""
        if not isinstance(session_id, str):
            raise invalid_params('"sessionId" must be a string')
        found = self.sessions.get(session_id)
        if found is None:
            raise AcpError(RESOURCE_NOT_FOUND, f"Unknown session: {session_id!r} (use session/new or session/load)")
        return found

    async def open(self, cwd: str, mcp_servers: dict[str, Any], session_file: str | None = None) -> AcpSession:
        """A new session in `cwd`, or the stored one in `session_file`. Raises `AcpError` when it cannot be
        built (a session file in use by another agent, a bad `--model`)."""
        from ...coding.errors import CommandError
        from ...coding.factory import create_session
        from .client_fs import file_access
        from .client_terminal import runner
        from .witness import DiskWitness

        try:
            session = create_session(self._options(cwd, mcp_servers, session_file))
        except CommandError as exc:
            raise _open_error(exc, session_file) from None
        _warn(session)
        files = file_access(self.client_capabilities, self.request, session.store.session_id)
        witness = DiskWitness() if files is None else None  # on the disk, each change is read for its diff
        terminals = runner(self.client_capabilities, self.request, session.store.session_id)
        # read, write and edit use the editor's buffers, bash its terminals: also tools added later (plugins)
        session.tool_environment.use(files=files or witness, terminals=terminals)
        await self._plugins(session)
        opened = AcpSession(session, self.send, self.notices, witness)
        opened.approvals = _approvals(session, self.request, opened.id, getattr(self.args, "approvals", None),
                                      opened.updates.allowed)
        if terminals is not None:
            terminals.on_terminal = opened.updates.terminal
            opened.terminals = terminals
        self.sessions[opened.id] = opened
        return opened

    async def _plugins(self, session: Any) -> None:
        """Load the plugins with dialogs over ACP (`plugin_ui.py`); their `session_start` runs once the editor
        knows the session (`server._announce`)."""
        from ...plugins.startup import install_plugins
        from .plugin_ui import AcpUI
        from .updates import status_update

        session_id = session.store.session_id
        send = lambda update: self.send(session_id, update)  # noqa: E731

        elicitation = self.client_capabilities.get("elicitation")
        forms = isinstance(elicitation, dict) and isinstance(elicitation.get("form"), dict)

        def tell(text: str, severity: str) -> None:  # beside the answer, as the session's own status lines
            opened = self.sessions.get(session_id)
            if opened is not None:
                opened.updates.tell(text, severity)
            else:
                send(status_update(text, severity, self.notices))

        def retitle(title: str) -> None:  # `ctx.ui.set_title`: the session's `Shown` knows what the editor shows
            from .shown import title_of

            opened, shown = self.sessions.get(session_id), title_of(title)
            if opened is not None:
                opened.shown.title(shown)
            else:
                send({"sessionUpdate": "session_info_update", "title": shown})

        def make_ui() -> AcpUI:
            return AcpUI(self.request, session_id, retitle, tell, forms=forms)

        await install_plugins(session, paths=self.args.plugin, discover=not self.args.no_plugins, ui=make_ui)

    def _options(self, cwd: str, mcp_servers: dict[str, Any], session_file: str | None) -> Any:
        from ...coding.factory import SessionOptions
        from ...coding.resources.setup import options_from_args

        args = self.args
        return SessionOptions(
            cwd=cwd, provider=args.provider, model=args.model, api_key=args.api_key, thinking=args.thinking,
            session_file=session_file, session_dir=args.session_dir, no_session=args.no_session,
            system_prompt=args.system_prompt, append_system_prompt=args.append_system_prompt,
            scoped_models=args.models, context_window=args.context_window, start_without_model=True,
            no_mcp=args.no_mcp, mcp_servers=mcp_servers or None, **options_from_args(args))

    def stored(self, session_id: str, cwd: str) -> str:
        """The file of the stored session `session_id` of `cwd`. Raises `AcpError` when there is none, naming the
        file and the reason when one holding that id cannot be opened."""
        from ...coding.errors import SessionFileError
        from ...coding.session.listing import explain_unusable, file_of_id

        path = file_of_id(self.listing(cwd), session_id)  # a `cp` copy with the same id does not win
        if path is not None:
            return str(path)
        try:
            if not self.args.no_session:
                explain_unusable(session_id, cwd, self.args.session_dir)
        except SessionFileError as exc:
            raise AcpError(RESOURCE_NOT_FOUND, f"Session {session_id!r} cannot be loaded: {exc}") from None
        raise AcpError(RESOURCE_NOT_FOUND, f"No session {session_id!r} is stored for {cwd}")

    def listing(self, cwd: str) -> list[Any]:
        from ...coding.session.listing import list_sessions

        if self.args.no_session:
            return []
        return list_sessions(cwd, self.args.session_dir, on_skip=self._skipped)

    def _skipped(self, reason: str) -> None:
        """A damaged session file left out of a listing: said on stderr once per process (every `session/list`
        and `session/load` lists the directory again)."""
        if reason not in self._said_skipped:
            self._said_skipped.add(reason)
            _say(f"skipped {reason}")

    def page(self, cwd: str | None, cursor: Any) -> dict[str, Any]:
        """`session/list` result for `cwd` (None: every directory's sessions), from `cursor` (an offset this
        agent gave as `nextCursor`)."""
        from ...coding.session.listing import list_all_sessions

        start = _offset(cursor)
        if cwd is not None or self.args.no_session:
            infos = self.listing(cwd or "")
            shown, more = infos[start:start + PAGE_SIZE], start + PAGE_SIZE < len(infos)
        else:  # only the page's files are read: there may be thousands
            shown, more = list_all_sessions(self.args.session_dir, start=start, count=PAGE_SIZE,
                                            on_skip=self._skipped)
        result: dict[str, Any] = {"sessions": [_info(i) for i in shown]}
        if more:
            result["nextCursor"] = str(start + PAGE_SIZE)
        return result

    # -- the end -------------------------------------------------------------------------------------
    async def abort_all(self) -> None:
        """The client has gone: dialogs resolve with their defaults, MCP calls get their deadline, every
        session's turn is cancelled; returns once they settled."""
        for opened in self.sessions.values():
            opened.session.hooks.input_closed()
            opened.session.mcp.input_closed()
        if self.sessions:
            await asyncio.gather(*(opened.turns.cancel(client_gone=True) for opened in self.sessions.values()))

    async def close(self) -> None:
        self.closed = True
        for opened in list(self.sessions.values()):
            await self._release(opened)

    async def close_one(self, opened: AcpSession) -> None:
        """`session/close`: the turn cancelled (returns once it settled), then the session closed and
        forgotten; requests naming it from now on are unknown sessions."""
        self.sessions.pop(opened.id, None)
        opened.session.hooks.input_closed()  # a plugin dialog waiting for the editor resolves with its default
        await opened.turns.cancel()
        await self._release(opened)

    async def _release(self, opened: AcpSession) -> None:
        if opened.terminals is not None:
            await opened.terminals.close()
        await opened.session.close()

    async def terminate(self) -> None:
        """A signal: every session's run is aborted, its commands killed, its file released
        (`modes/termination.py` calls this as it would `AgentSession.terminate`)."""
        self.closed = True
        for opened in list(self.sessions.values()):
            await opened.session.terminate()


def _open_error(exc: Exception, session_file: str | None) -> AcpError:
    """Why a session could not be opened: its file in use by another process (`SESSION_IN_USE`, `data.pid`
    the holder's pid or null), another problem of a stored one (`RESOURCE_NOT_FOUND`), else internal."""
    from ...coding.errors import SessionLockError

    lock = exc.__cause__
    if isinstance(lock, SessionLockError):
        return AcpError(SESSION_IN_USE, f"The session is open in another agent-forge process "
                                        f"({f'pid {lock.pid}' if lock.pid is not None else 'pid unknown'}): close it "
                                        f"there first ({lock.session_path})", {"pid": lock.pid})
    return AcpError(RESOURCE_NOT_FOUND if session_file else INTERNAL_ERROR, str(exc))


def mcp_servers(value: Any) -> tuple[dict[str, Any], list[str]]:
    """ACP `McpServer[]` → (`{name: entry}` of the `mcp.json` format, notes for the user). An editor's name may
    hold anything (spaces, `/`, any script): one outside the `mcp.json` rule is renamed to fit it (`_server_name`),
    and a note says so. Raises `AcpError` (-32602)."""
    if value is None:
        return {}, []
    if not isinstance(value, list):
        raise invalid_params('"mcpServers" must be an array')
    from ...coding.mcp.config import NAME_RULE, entry_problem

    servers: dict[str, Any] = {}
    notes: list[str] = []
    for index, server in enumerate(value):
        if not isinstance(server, dict) or not isinstance(server.get("name"), str) or not server["name"]:
            raise invalid_params(f"mcpServers[{index}] needs a \"name\"")
    fitting = {server["name"] for server in value if NAME_RULE.fullmatch(server["name"])}  # they keep their names
    for index, server in enumerate(value):
        entry = _mcp_entry(server, index)
        keep = server["name"] in fitting and server["name"] not in servers
        name = server["name"] if keep else _server_name(server["name"], servers.keys() | fitting)
        problem = entry_problem(name, entry)
        if problem:  # refused as a malformed request: a server skipped with a line on stderr goes unseen
            raise invalid_params(f"mcpServers[{index}] ({_shown(server['name'])}): {problem}")
        if name != server["name"]:
            notes.append(f"The editor's MCP server {_shown(server['name'])} is named {name} here (a server name "
                         f"has 1 to 64 letters, digits, '_' or '-', and names are unique).")
        servers[name] = entry
    return servers, notes


def _server_name(name: str, taken: set[str]) -> str:
    """`name` with each character outside `[A-Za-z0-9_-]` replaced by `_`, cut to 64, made unique with `_2`,
    `_3`, ... (the tool names' rule, docs/mcp.md)."""
    import re

    base = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64]
    candidate, number = base, 1
    while candidate in taken:
        number += 1
        candidate = f"{base[:64 - len(str(number)) - 1]}_{number}"
    return candidate


def _shown(name: str) -> str:
    """The editor's name quoted for a message (and stderr): one line, control, invisible and bidi characters as
    escapes, at most 100 characters."""
    return f"'{client_text(name, 100)}'"


def _mcp_entry(server: dict[str, Any], index: int) -> dict[str, Any]:
    kind = server.get("type")
    if kind == "sse":
        raise invalid_params(f"mcpServers[{index}]: SSE servers are not supported (mcpCapabilities.sse is false)")
    if kind == "http":
        if not isinstance(server.get("url"), str):
            raise invalid_params(f"mcpServers[{index}].url must be a string")
        return {"url": server["url"], "headers": _pairs(server.get("headers"), index, "headers")}
    if not isinstance(server.get("command"), str):
        raise invalid_params(f"mcpServers[{index}].command must be a string")
    args = server.get("args") or []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise invalid_params(f"mcpServers[{index}].args must be an array of strings")
    return {"command": server["command"], "args": args, "env": _pairs(server.get("env"), index, "env")}


def _pairs(value: Any, index: int, key: str) -> dict[str, str]:
    """`[{name, value}]` → `{name: value}`."""
    pairs: dict[str, str] = {}
    if value is not None and not isinstance(value, list):
        raise invalid_params(f"mcpServers[{index}].{key} must be an array of {{\"name\", \"value\"}} objects")
    for item in value or []:
        if not (isinstance(item, dict) and isinstance(item.get("name"), str) and isinstance(item.get("value"), str)):
            raise invalid_params(f"mcpServers[{index}].{key} items need string \"name\" and \"value\"")
        pairs[item["name"]] = item["value"]
    return pairs


def _info(info: Any) -> dict[str, Any]:
    from .shown import title_of

    return {"sessionId": info.id, "cwd": info.cwd, "title": title_of(info.name, info.first_message),
            "updatedAt": info.modified.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")}


def _offset(cursor: Any) -> int:
    if cursor is None:
        return 0
    if isinstance(cursor, str) and cursor.isascii() and cursor.isdigit():  # ours: ASCII digits only
        return int(cursor)
    raise invalid_params(f"unknown cursor {cursor!r}: pass the nextCursor of an earlier session/list")


def absolute_dir(value: Any, key: str = "cwd") -> str:
    """A request's directory: an absolute path of an existing directory. Raises `AcpError` (-32602)."""
    if not isinstance(value, str) or not os.path.isabs(value):
        raise invalid_params(f'"{key}" must be an absolute path')
    from ...coding.safe_read import examine, found_text

    found = examine(value)
    if isinstance(found, os.stat_result) and stat.S_ISDIR(found.st_mode):
        return os.path.normpath(value)
    from ...coding.paths import path_text

    # a link loop or a path without permission is no "not a directory": the OS's reason is said
    reason = "is not a directory" if isinstance(found, os.stat_result) and stat.S_ISREG(found.st_mode) else \
        found_text(found)
    raise invalid_params(f'"{key}" {path_text(value)} {reason}')


def _approvals(session: Any, request: "Request", session_id: str, flag: str | None,
               on_allowed: Callable[[str], None]) -> Any:
    """The session's approvals (`coding/approvals.py`, checked by its tool gate after the plugins): `flag`
    (`--approvals`), else the `approvals` setting, else `ask`; asked with permission requests (`on_allowed(id)`
    when the user allows call `id`)."""
    from ...coding.settings import approval_policy
    from .permissions import DEFAULT_MODE, PermissionAsker

    approvals = session.approvals
    approvals.set_policy(flag or approval_policy(session.settings, DEFAULT_MODE))
    approvals.approver = PermissionAsker(request, session_id, session.cwd, on_allowed)
    return approvals


def _warn(session: Any) -> None:
    for warning in session.warnings:
        _say(f"Warning: {warning}")
    problem = session.readiness_problem()
    if problem is not None:
        _say(problem)


def _say(text: str) -> None:
    from ...coding.tools.sanitize import terminal_text

    print(f"agent-forge: {terminal_text(text)}", file=sys.stderr)
