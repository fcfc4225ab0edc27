"""An MCP tool's `readOnlyHint` annotation makes it read-only for the approval policy (`coding/approvals.py`)."""

from __future__ import annotations

from types import SimpleNamespace as NS

from agent_forge.coding.approvals import Approvals
from agent_forge.coding.mcp.tools import McpTool


def tool(name, annotations):
    spec = NS(name=name, title=None, description="d", input_schema={"type": "object"}, annotations=annotations)
    return McpTool(NS(config=NS(name="srv")), spec, f"srv_{name}")


async def test_only_a_true_read_only_hint_runs_under_read_only():
    tools = [tool("query", NS(readOnlyHint=True)), tool("drop", NS(readOnlyHint=False)), tool("bare", None),
             tool("odd", NS(readOnlyHint="yes"))]
    assert [t.read_only for t in tools] == [True, False, False, False]
    approvals = Approvals("read-only", tools=lambda: tools)
    assert await approvals.check({"id": "1", "name": "srv_query", "arguments": {}}) is None
    for name in ("srv_drop", "srv_bare", "srv_odd"):
        assert "read-only" in await approvals.check({"id": "2", "name": name, "arguments": {}})
