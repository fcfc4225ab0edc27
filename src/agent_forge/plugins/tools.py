"""Plugin tools as agent tools: arguments checked against the tool's schema, progress streamed (the `AgentTool`
contract of `agent/types.py`). Results, progress updates and errors are checked once, where every tool's are:
the agent loop's `check_result` / `check_error` (`coding/tool_results.py`, set by the session), which raise in
the tool's own code for a bad `ctx.update(partial)`."""

from __future__ import annotations

import inspect
from typing import Callable

from ..agent.types import ToolError, ToolUpdate
from ..ai.types import JsonValue
from .api import Context, ToolContext, ToolSpec
from .bounded import CANCEL_GRACE_S, bounded
from .isolation import describe_error, is_cancellation
from .schema import check_arguments
from .threads import in_thread, is_async, thread_context
from .tool_deadline import ToolDeadlines


class PluginTool:
    """Runs `spec.execute(args, ctx)`; `make_context()` gives the plugin's base context for each call.

    Errors: a `ToolError` (bad arguments, or raised by the plugin) is the error result the model sees; anything
    else the plugin raises, `SystemExit` and `KeyboardInterrupt` included, is turned into a `ToolError` here
    (`"TypeName: message"`), so the agent loop never sees it. Only the cancellation of the call (abort)
    propagates; an `execute` that ignores it is abandoned after `CANCEL_GRACE_S` (`bounded.py`). A synchronous
    `execute` runs in a worker thread (`threads.py`)."""

    def __init__(self, spec: ToolSpec, make_context: Callable[[], Context], deadlines: ToolDeadlines | None = None):
        self.spec = spec
        self._deadlines = deadlines  # stdin EOF bounds a running call (tool_deadline.py)
        self.name = spec.name
        self.label = spec.label
        self.description = spec.description
        self.parameters = spec.parameters
        self.read_only = spec.read_only  # declared by the plugin: runs unasked under `approvals: ask`
        self._make_context = make_context

    async def execute(self, tool_call_id: str, args: dict[str, JsonValue], on_update: ToolUpdate) -> object:
        """What the plugin's `execute` returned, whatever it is: the agent loop checks it (`check_result`)."""
        token = self._deadlines.enter(self) if self._deadlines is not None else None
        try:
            return await self._execute(tool_call_id, args, on_update)
        finally:
            if token is not None and self._deadlines is not None:
                self._deadlines.exit(token)

    async def _execute(self, tool_call_id: str, args: dict[str, JsonValue], on_update: ToolUpdate) -> object:
        check_arguments(self.parameters, args)
        base = self._make_context()
        ctx = ToolContext(plugin=base.plugin, ui=base.ui, session=base.session, tool_call_id=tool_call_id,
                          on_update=on_update)
        try:  # in a task of its own: an `execute` that ignores its cancellation cannot keep abort waiting
            return await bounded(self._invoke(args, ctx), on_abandoned=self._abandoned)
        except ToolError:
            raise
        except BaseException as exc:
            if is_cancellation(exc):
                raise
            raise ToolError(describe_error(exc)) from exc

    async def _invoke(self, args: dict[str, JsonValue], ctx: ToolContext) -> object:
        if is_async(self.spec.execute):
            result = self.spec.execute(args, ctx)
        else:  # a blocking tool must not stop the event loop: abort and get_state stay answered
            result = await in_thread(self.spec.execute, args, thread_context(ctx))
        if inspect.isawaitable(result):
            result = await result
        return result

    def _abandoned(self) -> None:
        if self._deadlines is not None:
            self._deadlines.report(self, f"the tool ignored its cancellation for {CANCEL_GRACE_S:g} s; the agent "
                                         "went on without it")
