"""Handlers for the session tree: switch_session, fork, clone, get_fork_messages, get_entries, get_tree."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable

from ....coding.errors import CommandError
from ....coding.session.tree import entries_since, fork_messages, get_flat_tree, get_tree
from .registry import handler

if TYPE_CHECKING:
    from ..server import RpcServer


# Session changes are pending from their arrival (plain functions: `registry.py`): prompts sent after one wait
# for it (`Intake.session_change`).
@handler("switch_session", background=True)
def _switch_session(server: RpcServer, command: dict[str, Any]) -> Awaitable[Any]:
    return cancelled(server.session.switch_session(command["sessionPath"]))


@handler("fork", background=True)
def _fork(server: RpcServer, command: dict[str, Any]) -> Awaitable[Any]:
    return server.session.fork(command["entryId"])


@handler("clone", background=True)
def _clone(server: RpcServer, command: dict[str, Any]) -> Awaitable[Any]:
    return cancelled(server.session.clone())


async def cancelled(change: Awaitable[bool]) -> dict[str, bool]:
    """The `{cancelled}` answer of a session change."""
    return {"cancelled": await change}


@handler("get_fork_messages")
async def _fork_messages(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"messages": fork_messages(server.session.store)}


@handler("get_entries")
async def _get_entries(server: RpcServer, command: dict[str, Any]) -> Any:
    try:
        return entries_since(server.session.store, command.get("since"))
    except KeyError as exc:
        raise CommandError(exc.args[0]) from None


@handler("get_tree")
async def _get_tree(server: RpcServer, command: dict[str, Any]) -> Any:
    """Nested `{tree, leafId}` (seed 000), or `{nodes, leafId}` with `flat: true` (docs/rpc.md)."""
    return (get_flat_tree if command.get("flat") else get_tree)(server.session.store)
