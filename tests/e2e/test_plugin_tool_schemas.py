"""End to end: a plugin tool whose parameters schema providers would reject (`ai/tool_schema.py`) is refused at
registration through the plugin error path, so it never reaches a request; the other tools go on (the real CLI
in RPC mode, the loopback fake LLM)."""

from __future__ import annotations

import textwrap

import pytest

from .test_mcp import offered
from .test_rpc_plugins import start

BAD = textwrap.dedent('''
    def setup(plugin):
        @plugin.tool("odd", description="A tool with a schema providers reject", parameters=%s)
        def odd(args, ctx):
            return "odd"
''')
GOOD = textwrap.dedent('''
    def setup(plugin):
        @plugin.tool("good", description="An ordinary tool", parameters={"type": "object", "properties": {}})
        def good(args, ctx):
            return "good!"
''')


@pytest.mark.parametrize("schema, problem", [
    ('{"type": "object", "properties": {"a": {"type": "wat"}}}', 'properties.a: type: "wat" is not a JSON Schema'),
    ('{"type": "object", "properties": {"a": {"type": "array", "items": {"required": True}}}}',
     "properties.a.items: required: must be a list of property names"),
    ('{"type": "object", "properties": {"a": {"type": "number", "minimum": float("nan")}}}', "is not JSON"),
    ('{"type": "object", "properties": {"p%d" % i: {"description": "d" * 100} for i in range(1000)}}',
     "more than the 65,536 allowed"),
])
async def test_a_plugin_tool_with_a_schema_providers_reject_is_refused_and_the_rest_goes_on(
        agent_env, fake_llm, tmp_path, schema, problem):
    (tmp_path / "bad.py").write_text(BAD % schema)
    (tmp_path / "good.py").write_text(GOOD)
    fake_llm.set_script([{"tool_calls": [{"name": "good", "arguments": {}}]}, {"text": "done"}])
    async with await start(agent_env, tmp_path, "-e", "bad.py", "-e", "good.py") as client:
        events = await client.prompt_and_wait("use the tools")
    stderr = client.stderr.decode()
    assert "Plugin not loaded: " in stderr and "Tool odd: parameters: " in stderr and problem in stderr
    names = offered(fake_llm.requests[0])
    assert "odd" not in names and {"good", "read", "bash"} <= set(names)
    assert events[-1] == {"type": "agent_settled", "aborted": False}
    assert "good!" in [m for m in fake_llm.requests[1]["body"]["messages"] if m["role"] == "tool"][0]["content"]
