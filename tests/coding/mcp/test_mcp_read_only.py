"""An MCP tool's `readOnlyHint` annotation makes it read-only for the approval policy (`coding/approvals.py`).

The tools are the SDK's own `Tool` models, parsed from the wire form: a stand-in object once hid that the model's
attribute is `read_only_hint` (`readOnlyHint` is only the alias)."""

from __future__ import annotations

from types import SimpleNamespace as NS

from mcp_types import Tool

from agent_forge.coding.approvals import Approvals
from agent_forge.coding.mcp.tools import McpTool


def tool(name, annotations):
    wire = {"name": name, "description": "d", "inputSchema": {"type": "object"}}
    if annotations is not None:
        wire["annotations"] = annotations
    return McpTool(NS(config=NS(name="srv")), Tool.model_validate(wire), f"srv_{name}")


async def test_only_a_true_read_only_hint_runs_under_read_only():
    tools = [tool("query", {"readOnlyHint": True}), tool("drop", {"readOnlyHint": False}), tool("bare", None),
             tool("other", {"destructiveHint": False})]
    assert [t.read_only for t in tools] == [True, False, False, False]
    approvals = Approvals("read-only", tools=lambda: tools)
    assert await approvals.check({"id": "1", "name": "srv_query", "arguments": {}}) is None
    for name in ("srv_drop", "srv_bare", "srv_other"):
        assert "read-only" in await approvals.check({"id": "2", "name": name, "arguments": {}})
