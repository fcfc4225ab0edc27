"""Extension points of an AgentSession: a do-nothing `SessionHooks` that an upper layer (the plugin runner,
`agent_forge.plugins`) replaces. The veto-aware session changes built on it are in `switching.py`.

`coding` never imports the plugin layer: the session calls these methods at fixed points, and whoever installs
plugins (the CLI, an SDK user) puts an implementation in `session.hooks`. Implementations must not raise: a
plugin's failure is theirs to report (as an `extension_error` event), never the session's.

Where each hook is called (seed 000 order for input: plugin command, input handlers, expansion, run):

| hook | called by | effect |
| --- | --- | --- |
| `start()` | the mode, once its listeners are subscribed | `session_start` handlers run (reason "startup") |
| `run_command(text)` | `submit` | the started plugin command's task (it runs on its own, even mid-run), or None |
| `command_name(text)` | `steer`, `follow_up` | a name: the text is a plugin command, refused there |
| `input(text, images, behavior)` | `submit` | `(text, images)` to go on with, or None when a plugin handled it |
| `before_run(prompts, system_prompt)` | run start | may append messages to `prompts`; returns the system prompt |
| `before_session_change(action, details)` | `new_session`, `switch_session`, `fork`, `clone` | True cancels |
| `session_started(reason, previous)` | after such a change | notification |

A client's `abort` stops what a session change waits for: `before_session_change` through `HookCalls` (the call
is cancelled, so is the change: nothing switched or written, it answers `cancelled`), `session_started` through
`abort()` below, like any session start handler (the change already made stays).
| `tool_call(call)` | the tool gate (`approvals.py`), before the policy | a block reason, or None (may change args) |
| `abort()` | `abort` | dialogs get their defaults; running commands and session start/shutdown handlers end |
| `wait_aborted()` | `abort`, after the run stopped | the cancelled commands end (bounded) |
| `ui_response(answer)` | RPC mode, `extension_ui_response` input | answers a pending dialog (others ignored) |
| `input_closed()` | RPC mode, stdin EOF | no answer can come: dialogs resolve with their defaults from now on |
| `commands()` | `get_commands` | the plugin commands, as `get_commands` items |
| `shutdown(graceful)` | `close` (True), `terminate` (False) | plugin tasks end (bounded); `session_shutdown` runs |
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Awaitable, TypeVar

from ..agent.loop import abortable_step

if TYPE_CHECKING:
    from ..agent.types import AgentMessage
    from ..ai.types import ImageContent, ToolCall

T = TypeVar("T")

SESSION_ACTIONS = ("new_session", "switch_session", "fork", "clone")
"""The session changes a plugin may veto (seed 003: the response then carries `cancelled: true`)."""


class SessionHooks:
    """The hook points with their neutral behaviour; subclass and override what you need."""

    async def start(self) -> None:
        """The mode is ready to report events (its listeners are subscribed)."""

    def command_name(self, text: str) -> str | None:
        """The plugin command `text` invokes (`/name args`), or None."""
        return None

    def run_command(self, text: str) -> asyncio.Future[object] | None:
        """Start the plugin command `text` invokes, if any: its task (done when the handler returned or
        failed), or None when `text` is no plugin command."""
        return None

    def handles_input(self) -> bool:
        """Whether `input` may run plugin code (a prompt may then wait on it: RPC answers it when done)."""
        return False

    async def input(self, text: str, images: list[ImageContent] | None,
                    streaming_behavior: str | None) -> tuple[str, list[ImageContent] | None] | None:
        """The prompt to go on with (possibly transformed), or None when a plugin handled it."""
        return text, images

    async def before_run(self, prompts: list[AgentMessage], system_prompt: str) -> str:
        """Called before a run starts; may append messages to `prompts`. Returns the run's system prompt."""
        return system_prompt

    async def before_session_change(self, action: str, details: dict[str, str | None]) -> bool:
        """`action` is one of `SESSION_ACTIONS`; True cancels it."""
        return False

    async def tool_call(self, call: ToolCall) -> str | None:
        """A known tool is about to run with `call["arguments"]` (a copy the hook may change): a block reason
        (the call's error result), or None to go on."""
        return None

    async def session_started(self, reason: str, previous_session_file: str | None) -> None:
        """The session now continues in another store (`reason` is the action that moved it)."""

    def abort(self) -> None:
        """The client aborted: pending dialogs resolve with their defaults, running plugin commands are
        cancelled."""

    async def wait_aborted(self) -> None:
        """Return once the commands `abort` cancelled have ended, or a short grace period has passed."""

    def ui_response(self, answer: dict[str, object]) -> None:
        """An `extension_ui_response` from the client."""

    def input_closed(self) -> None:
        """The client can no longer answer (RPC stdin closed)."""

    def commands(self) -> list[dict[str, object]]:
        """Plugin commands as `get_commands` items (seed 000 shape)."""
        return []

    async def shutdown(self, graceful: bool = True) -> None:
        """The session is closing: let plugin work finish (for a bounded time; not at all unless `graceful`),
        cancel the rest, run shutdown handlers. Must return in bounded time."""


class HookCalls:
    """The veto calls session changes wait on (`before_session_change`), each an abortable step
    (`agent.loop.abortable_step`) so that a client's `abort` can stop exactly them (`stop`) and not the change
    around them; the interactive `/reload`'s plugin load is one too. `session_started` is not one of them: the
    hooks' own `abort()` ends session start handlers."""

    def __init__(self) -> None:
        self._calls: dict[asyncio.Future[object], bool] = {}  # each running call: whether `stop` cancelled it

    async def run(self, call: Awaitable[T]) -> tuple[bool, T | None]:
        """Await `call`: `(stopped, result)`; `stopped` is True (and the result dropped, whatever the call then
        returned or raised) when `stop` cancelled it meanwhile. Cancelling the caller cancels the call too, waits
        for its end and propagates."""
        task = asyncio.ensure_future(call)
        self._calls[task] = False
        try:
            result = await abortable_step(task)  # a call `stop` cancelled gives None
        except Exception:
            if not self._calls[task]:
                raise
            result = None  # a stopped hook's late failure: retrieved, so no "never retrieved" noise
        finally:
            stopped = self._calls.pop(task)
        return (True, None) if stopped else (False, result)

    def stop(self) -> list[asyncio.Future[object]]:
        """Cancel the calls running now (`abort`); returns them, to wait for their end (a plugin's cleanup)."""
        for task in self._calls:
            self._calls[task] = True
            task.cancel()
        return list(self._calls)
