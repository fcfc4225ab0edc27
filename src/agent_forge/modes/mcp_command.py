"""`agent-forge mcp add|list|remove`: manage the MCP servers of `mcp.json` from the command line (`docs/mcp.md`).

    agent-forge mcp add NAME [-l] [--env K=V]... [--description TEXT] [--force] -- COMMAND [ARGS...]
    agent-forge mcp add NAME [-l] --url URL [--header K=V]... [--description TEXT] [--force]
    agent-forge mcp list [--approve]
    agent-forge mcp remove NAME [-l]

`-l/--local` writes the project file (`<cwd>/.agent-forge/agent/mcp.json`) instead of the agent dir's. Exit
codes: 0 done (`list`: every enabled server connected), 1 the file could not be changed or (`list`) a server did
not connect, 2 a usage error. Messages go to stderr as `agent-forge: ...`; `list` writes its table to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from ..coding.paths import path_text, working_directory

USAGE_EXIT = 2


class _Usage(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _Usage(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="agent-forge mcp", description="Manage MCP servers (mcp.json files; docs/mcp.md).")
    commands = parser.add_subparsers(dest="command", metavar="{add,list,remove}", parser_class=_Parser)
    add = commands.add_parser("add", help="add a server: NAME -- COMMAND ARGS..., or NAME --url URL")
    add.add_argument("name")
    add.add_argument("--url", help="a streamable HTTP server's endpoint")
    add.add_argument("--header", action="append", default=[], metavar="K=V", help="an HTTP header (repeatable)")
    add.add_argument("--env", action="append", default=[], metavar="K=V",
                     help="a variable for a stdio server (repeatable; ${VAR} is expanded when it starts)")
    add.add_argument("--description", help="one line about the server (listed in the system prompt)")
    add.add_argument("--force", action="store_true", help="replace a server of the same name")
    add.add_argument("-l", "--local", action="store_true", help="write <cwd>/.agent-forge/agent/mcp.json")
    listing = commands.add_parser("list", help="connect to each server and list it")
    listing.add_argument("--approve", action="store_true", help="trust this project for the listing (its "
                                                                "mcp.json servers are started too)")
    remove = commands.add_parser("remove", help="remove a server")
    remove.add_argument("name")
    remove.add_argument("-l", "--local", action="store_true", help="change <cwd>/.agent-forge/agent/mcp.json")
    return parser


def run_mcp_command(argv: list[str]) -> int:
    """Run `agent-forge mcp <argv>`; the exit code."""
    before, dash, command = _split_dashes(argv)
    try:
        args = _parser().parse_args(before)
        if args.command is None:
            raise _Usage("give a command: add, list or remove")
        if args.command == "add":
            return _add(args, command if dash else None)
        if dash:
            raise _Usage(f"'--' and a command are only for 'mcp add' (got them with 'mcp {args.command}')")
        return _list(args) if args.command == "list" else _remove(args)
    except _Usage as problem:
        _say(f"mcp: {problem} (see agent-forge mcp --help)")
        return USAGE_EXIT
    except KeyboardInterrupt as exc:  # a stop signal: the servers were stopped on the way out (`_connect_all`)
        return getattr(exc, "code", 130)


def _split_dashes(argv: list[str]) -> tuple[list[str], bool, list[str]]:
    if "--" not in argv:
        return argv, False, []
    at = argv.index("--")
    return argv[:at], True, argv[at + 1:]


def _file(local: bool) -> Path:
    from ..coding.mcp.config import FILE_NAME, project_file
    from ..coding.paths import agent_dir

    return project_file(working_directory()) if local else agent_dir() / FILE_NAME


def _add(args: argparse.Namespace, command: list[str] | None) -> int:
    from ..coding.mcp.edit import InvalidServerEntry, McpFileError, add_server

    if command is not None and args.url:
        raise _Usage("give either '-- COMMAND ARGS...' (a stdio server) or --url URL (an HTTP server), not both")
    if command is None and not args.url:
        raise _Usage("give '-- COMMAND ARGS...' (a stdio server) or --url URL (an HTTP server)")
    if command is not None and not command:
        raise _Usage("no command after '--'")
    if args.url and args.env:
        raise _Usage("--env is for stdio servers (an HTTP server takes --header)")
    if command is not None and args.header:
        raise _Usage("--header is for HTTP servers (a stdio server takes --env)")
    entry: dict[str, Any] = {"url": args.url, "headers": _pairs(args.header, "--header")} if args.url else \
        {"command": command[0], "args": command[1:], "env": _pairs(args.env, "--env")}  # type: ignore[index]
    entry = {key: value for key, value in entry.items() if value not in ({}, [])}
    if args.description:
        entry["description"] = args.description
    path = _file(args.local)
    try:
        replaced = add_server(path, args.name, entry, replace=args.force)
    except McpFileError as exc:
        _say(f"mcp add: {exc}")
        return USAGE_EXIT if isinstance(exc, InvalidServerEntry) else 1
    _out(f"{'Replaced' if replaced else 'Added'} MCP server {path_text(args.name)} in {path_text(path)}")
    return 0


def _pairs(items: list[str], flag: str) -> dict[str, str]:
    pairs = {}
    for item in items:
        key, equals, value = item.partition("=")
        if not equals or not key.strip():
            raise _Usage(f"{flag} takes KEY=VALUE, got {item!r}")
        pairs[key.strip()] = value
    return pairs


def _remove(args: argparse.Namespace) -> int:
    from ..coding.mcp.edit import McpFileError, remove_server

    path = _file(args.local)
    try:
        remove_server(path, args.name)
    except McpFileError as exc:
        _say(f"mcp remove: {exc}")
        return 1
    _out(f"Removed MCP server {path_text(args.name)} from {path_text(path)}")
    return 0


def _list(args: argparse.Namespace) -> int:
    from ..coding.mcp.config import load_mcp_config
    from ..coding.paths import agent_dir
    from ..coding.resources.trust import project_policy

    cwd = working_directory()
    policy = project_policy(cwd, agent_dir(), approve=True if args.approve else None)
    servers, warnings = load_mcp_config(cwd, agent_dir(), project_allowed=policy.code_allowed)
    from ..coding.mcp.config import has_project_file

    if not policy.code_allowed and policy.enabled and has_project_file(cwd, agent_dir()):
        warnings.append(policy.skipped_message("project MCP servers (.agent-forge/agent/mcp.json)"))
    from ..coding.tools.sanitize import print_warning  # `Warning: ...`, as a session's start-up says them

    for warning in warnings:
        print_warning(warning)
    if not servers and warnings:  # every file or entry that was there failed to load: not "none configured"
        _say("mcp list: no MCP server could be loaded (see the warnings above)")
        return 1
    if not servers:
        _out("No MCP servers configured (add one with: agent-forge mcp add NAME -- COMMAND ARGS...)")
        return 0
    from ..cli_loop import run_loop

    # run_loop, not asyncio.run: a stop signal cancels the listing, where an exception raised wherever the main
    # thread is would be taken for a server's failure (a row saying `failed 130`, exit 1).
    rows = run_loop(_connect_all(servers))
    _print_table(rows)
    return 1 if any(row[3] not in ("connected", "disabled") for row in rows) else 0


async def _connect_all(servers: list[Any]) -> list[tuple[str, ...]]:
    """One row per server, after its first connection attempt (each within its start-up timeout, all at once)."""
    from ..coding.mcp.connection import ServerConnection

    connections = [ServerConnection(server, lambda _c: None) for server in servers]
    try:
        for connection in connections:
            connection.start()
        outcomes = await asyncio.gather(*(_first_attempt(c) for c in connections))
        return [_row(c, state, error, _offered_count(c, state)) for c, (state, error) in zip(connections, outcomes)]
    finally:  # also on Ctrl-C (asyncio.run cancels this task): no server outlives the listing
        await asyncio.gather(*(c.stop() for c in connections), return_exceptions=True)


SDK_IMPORT_ALLOWANCE_S = 30
"""Beyond a server's start-up timeout, which counts from `initialize`, after the SDK's import (1-2 s, far more on
a loaded machine; a listing that waited only the timeout showed `not ready` with no error). The connection ends
its own first attempt by then (its timeout, a failure), so this bound is a safety net, never the usual wait."""


async def _first_attempt(connection: Any) -> tuple[str, str | None]:
    """(state, error) of `connection` as its first attempt ended: what the listing shows, even when a restart
    has begun since (a server that failed at once is `starting` again a second later, while a slower one is
    still being waited for)."""
    if connection.config.enabled:
        bound = connection.config.startup_timeout_s + SDK_IMPORT_ALLOWANCE_S
        try:
            await asyncio.wait_for(connection.first_attempt.wait(), bound)
        except asyncio.TimeoutError:
            pass
    return connection.state, connection.error


def _offered_count(connection: Any, state: str) -> int:
    """How many of a connected server's tools a session would offer (`vetting.offered_tools`); the
    problems of the others (and of the tools its listing had that were repaired or taken out) are said on
    stderr as `Warning: ...`, as a session says them."""
    from ..coding.mcp.vetting import offered_tools

    if state != "connected":
        return 0
    tools, notices = offered_tools(connection.name, connection.tools, connection.config.admits)
    from ..coding.tools.sanitize import print_warning

    for notice in list(connection.listing_notices) + notices:
        print_warning(notice)
    return len(tools)


def _row(connection: Any, state: str, error: str | None, offered: int) -> tuple[str, ...]:
    config = connection.config
    state = state if state != "starting" else "not ready"
    from ..coding.mcp.errors import without_restart_delay

    error = without_restart_delay(error or "")  # a connected one's: what it did wrong
    count = str(offered) if state == "connected" else "-"
    return config.name, config.scope, config.transport, state, count, error


def _print_table(rows: list[tuple[str, ...]]) -> None:
    from ..coding.tools.sanitize import terminal_text

    header = ("NAME", "SCOPE", "TRANSPORT", "STATE", "TOOLS", "ERROR")
    table = [header, *[tuple(terminal_text(cell).replace("\n", " ") for cell in row) for row in rows]]
    widths = [max(len(row[i]) for row in table) for i in range(5)]
    _out("\n".join("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:5])) + "  " + row[5]
                   for row in table))


def _out(text: str) -> None:
    """A line for stdout through the guard: a full disk ends the command with `cannot write to stdout`, exit 1."""
    from .stdout_guard import print_out

    print_out(text)


def _say(message: str) -> None:
    from ..coding.tools.sanitize import terminal_text

    print(f"agent-forge: {terminal_text(message)}", file=sys.stderr)
