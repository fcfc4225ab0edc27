"""Handlers for the session tree: switch_session, fork, clone, get_fork_messages, get_entries, get_tree."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from ....coding.errors import CommandError
from ....coding.session.reading import gc_paused, pause_gc
from ....coding.session.tree import build_tree, entries_since, flatten_tree, fork_messages
from ..raw_json import BIG, encoded, forest_json, list_answer, list_json
from .registry import handler

if TYPE_CHECKING:
    from ..server import RpcServer


# Session changes are pending from their arrival (plain functions: `registry.py`): prompts sent after one wait
# for it (`Intake.session_change`).
@handler("switch_session", background=True)
def _switch_session(server: RpcServer, command: dict[str, Any]) -> Awaitable[Any]:
    return _switched(server, server.session.switch_session(command["sessionPath"]))


async def _switched(server: RpcServer, change: Awaitable[bool]) -> dict[str, Any]:
    """`{cancelled, sessionWarnings}`: what reading the file found damaged (`session/damage.py`; none when
    cancelled), read as the change ends, before any later session change can begin.

    The cyclic collector stays paused until the answer is written: the opened file's objects are all young and
    kept, and once start-up froze its own (`cli_gc.py`) nothing ages them at once (`reading.gc_paused`), so the
    first collection after the pause walks them all (~2-3 ms at 5,000 entries): after the answer, not before."""
    resume_gc = pause_gc()
    try:
        if await change:
            return {"cancelled": True, "sessionWarnings": []}
        warnings = server.session.store.load_warnings
        return {"cancelled": False, "sessionWarnings": [warning.to_json() for warning in warnings]}
    finally:
        _after_the_answer(resume_gc)


def _after_the_answer(callback: Callable[[], None]) -> None:
    """Call `callback` once the answer a handler returns in this loop turn has left: the server writes it in
    this turn (`RpcServer._answer`), and it is flushed by a callback of this turn (`burst.py`), which runs
    before one scheduled by a callback of the next turn."""
    loop = asyncio.get_running_loop()
    loop.call_soon(loop.call_soon, callback)


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


# Reads of the whole session take their snapshot at once, in arrival order (plain functions), and are encoded
# piecewise; a long session's in a worker thread, answered in the background (`raw_json.py`), so `abort` and
# `get_state` sent after them are answered meanwhile.
def _is_big(server: RpcServer, command: dict[str, Any]) -> bool:
    return len(server.session.store.entries) > BIG


@handler("get_entries", background=_is_big)
def _get_entries(server: RpcServer, command: dict[str, Any]) -> Awaitable[Any]:
    try:
        answer = entries_since(server.session.store, command.get("since"))
    except KeyError as exc:
        raise CommandError(exc.args[0]) from None
    entries = list(answer["entries"])
    return _entries(answer, entries)


async def _entries(answer: dict[str, Any], entries: list[Any]) -> dict[str, Any]:
    return {**answer, "entries": await list_answer(entries)}  # `entries` stays the first field


@handler("get_tree", background=_is_big)
def _get_tree(server: RpcServer, command: dict[str, Any]) -> Awaitable[Any]:
    """Nested `{tree, leafId}` (seed 000), or `{nodes, leafId}` with `flat: true` (docs/rpc.md)."""
    store = server.session.store
    entries, leaf = list(store.entries), store.leaf_id
    flat = bool(command.get("flat"))
    return _answer({"leafId": leaf}, "nodes" if flat else "tree", len(entries), lambda: _tree_json(entries, flat))


def _tree_json(entries: list[Any], flat: bool) -> str:
    with gc_paused():  # tens of thousands of new containers, all kept: collections would only cost time
        roots = build_tree(entries)
        return list_json(flatten_tree(roots)) if flat else forest_json(roots)  # type: ignore[arg-type]


async def _answer(answer: dict[str, Any], field: str, size: int, encode: Callable[[], str]) -> dict[str, Any]:
    """`answer` with `field` (first) set to the JSON `encode` writes (`raw_json.encoded`)."""
    return {field: await encoded(size, encode), **{k: v for k, v in answer.items() if k != field}}
