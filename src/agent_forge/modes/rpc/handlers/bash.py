"""Handlers for user shell commands: bash (streams `bash_execution_update` events) and abort_bash."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable

from ..types import NO_ID, BashExecutionUpdate
from .registry import handler

if TYPE_CHECKING:
    from ..server import RpcServer


@handler("bash", background=True)
async def _bash(server: RpcServer, command: dict[str, Any]) -> Any:
    """Runs as a task: other commands (get_state, abort_bash, prompt) are answered while the command runs.
    `command` is a runnable text by now (validation.py)."""
    return await server.session.user_bash.run(
        command["command"], on_chunk=_updates(server, command.get("id", NO_ID)),
        exclude_from_context=bool(command.get("excludeFromContext")))


@handler("abort_bash", background=True)
def _abort_bash(server: RpcServer, command: dict[str, Any]) -> Awaitable[None]:
    """Stops the commands running on arrival (a `bash` sent right after it runs on); answers once each is
    stopped and recorded (its `bash` response is written first)."""
    return _recorded(server.session.user_bash.begin_abort())


async def _recorded(stopped: Awaitable[object]) -> None:
    await stopped


def _updates(server: RpcServer, request_id: Any) -> Callable[[str], None]:
    """`{"type": "bash_execution_update", "id"?, "delta"}` per output chunk; `id` only when the command had one."""
    def update(delta: str) -> None:
        if request_id is NO_ID:
            server.write(BashExecutionUpdate(type="bash_execution_update", delta=delta))
        else:
            server.write(BashExecutionUpdate(type="bash_execution_update", id=request_id, delta=delta))

    return update
