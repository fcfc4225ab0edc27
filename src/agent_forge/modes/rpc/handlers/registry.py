"""The handler table of RPC mode: one async function per command, registered with `@handler(name)`.

A handler returns the response `data` (None for responses without data) or raises `CommandError`; the server
turns either into exactly one response carrying the request's `id`. Handlers marked `background` (long-running
commands such as `bash`) run as tasks so other commands are still answered meanwhile; they answer when done
(docs/rpc.md, "Response order"). `background` may be a predicate `(server, command) -> bool` for a command that
is long only in some sessions.

Every handler is called when its command is handled, in arrival order, and the awaitable it returns is awaited
for the answer (at once, or in the background). An `async def` handler does nothing before that; a plain function
returning an awaitable acts at once: `abort` stops the work before the next command is handled, even though it
answers later (docs/rpc.md, "Response order").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable

if TYPE_CHECKING:
    from ..server import RpcServer

Handler = Callable[["RpcServer", dict[str, Any]], Awaitable[Any]]
HANDLERS: dict[str, Handler] = {}


Background = bool | Callable[["RpcServer", dict[str, Any]], bool]


def handler(name: str, *, background: Background = False, nullable: bool = False) -> Callable[[Handler], Handler]:
    """Register `fn` for command `name`. `nullable`: a None result is sent as `data: null` (commands whose
    documented answer may be null, e.g. `cycle_model`) instead of leaving `data` out."""

    def register(fn: Handler) -> Handler:
        fn.background = background  # type: ignore[attr-defined]
        fn.nullable = nullable  # type: ignore[attr-defined]
        HANDLERS[name] = fn
        return fn

    return register
