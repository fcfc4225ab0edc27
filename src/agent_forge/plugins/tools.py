"""Plugin tools as agent tools: arguments checked against the tool's schema, progress streamed, results
normalised (the `AgentTool` contract of `agent/types.py`)."""

from __future__ import annotations

import inspect
from typing import Any, Callable

from ..agent.types import ToolResult, ToolUpdate
from .api import Context, ToolContext, ToolSpec, to_tool_result
from .schema import check_arguments


class PluginTool:
    """Runs `spec.execute(args, ctx)`; `make_context()` gives the plugin's base context for each call.

    Errors: a `ToolError` (bad arguments, or raised by the plugin) and any other exception become an error
    result the model sees (the agent loop's rule for every tool); cancellation (abort) propagates."""

    def __init__(self, spec: ToolSpec, make_context: Callable[[], Context]):
        self.spec = spec
        self.name = spec.name
        self.label = spec.label
        self.description = spec.description
        self.parameters = spec.parameters
        self._make_context = make_context

    async def execute(self, tool_call_id: str, args: dict[str, Any], on_update: ToolUpdate) -> ToolResult:
        check_arguments(self.parameters, args)
        base = self._make_context()
        ctx = ToolContext(plugin=base.plugin, ui=base.ui, session=base.session, tool_call_id=tool_call_id,
                          on_update=on_update)
        result = self.spec.execute(args, ctx)
        if inspect.isawaitable(result):
            result = await result
        return to_tool_result(result)
