"""End to end: values from plugin code that a session file cannot hold (a datetime in tool details, a number as
text, a set as entry data) become clear errors at the plugin boundary, never a dead run or a session file that
disagrees with the live conversation (the real CLI with a plugin loaded by `-e`, the loopback fake LLM)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from agent_forge.modes.rpc.client import RpcClient

PLUGIN = textwrap.dedent('''
    import datetime

    from agent_forge.agent.types import ToolError
    from agent_forge.plugins import ToolResult


    def setup(plugin):
        @plugin.tool("odd", description="odd results",
                     parameters={"type": "object", "properties": {"mode": {"type": "string"}}})
        def odd(args, ctx):
            mode = args["mode"]
            if mode == "datetime":
                return ToolResult("ok", {"when": datetime.datetime(2020, 1, 1)})
            if mode == "int":
                return {"content": [{"type": "text", "text": 42}]}
            if mode == "error":
                raise ToolError("went wrong", details={"tags": {1, 2}})
            if mode == "cycle":  # a dict inside itself: the check once walked it for ever, the loop frozen
                itself = {}
                itself["d"] = itself
                return {"content": [{"type": "text", "text": "x"}], "details": itself}
            if mode == "cycle_update":
                loop = []
                loop.append(loop)
                ctx.update(ToolResult("partial", {"l": loop}))
            return ToolResult("fine", {"when": "2020"})

        @plugin.command("badentry")
        def badentry(args, ctx):
            ctx.session.append_entry("state", {"tags": {1, 2}})

        @plugin.command("cycleentry")
        def cycleentry(args, ctx):
            loop = []
            loop.append(loop)
            ctx.session.append_entry("state", {"loop": loop})
''')


def _calls(*modes):
    return [{"name": "odd", "arguments": {"mode": mode}} for mode in modes]


def _file_messages(path: str) -> list[dict]:
    entries = [json.loads(line) for line in Path(path).read_text().splitlines()]
    return [entry["message"] for entry in entries if entry.get("type") == "message"]


async def test_unencodable_plugin_tool_results_are_tool_errors_and_the_file_matches(agent_env, fake_llm, tmp_path):
    plugin = tmp_path / "odd.py"
    plugin.write_text(PLUGIN)
    fake_llm.set_script([{"tool_calls": _calls("datetime", "int", "error", "plain")}, {"text": "done"}])
    async with await RpcClient.start(["-e", str(plugin)], cwd=str(tmp_path), env=agent_env) as client:
        events = await client.prompt_and_wait("go")
        live = (await client.send({"type": "get_messages"}))["data"]["messages"]
        session_file = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    ends = [e for e in events if e["type"] == "tool_execution_end"]
    texts = [e["result"]["content"][0]["text"] for e in ends]
    assert [e["isError"] for e in ends] == [True, True, True, False]
    assert "details.when is a datetime" in texts[0] and "content[0].text must be a string, got int" in texts[1]
    assert texts[2].startswith("went wrong") and "details were dropped: details.tags is a set" in texts[2]
    assert texts[3] == "fine" and events[-1] == {"type": "agent_settled", "aborted": False}
    assert "Unexpected agent failure" not in client.stderr.decode()
    assert [m["role"] for m in live] == ["user", "assistant", "toolResult", "toolResult", "toolResult",
                                         "toolResult", "assistant"]
    assert _file_messages(session_file) == live


async def test_append_entry_with_data_json_cannot_hold_is_refused_by_name(agent_env, tmp_path):
    plugin = tmp_path / "odd.py"
    plugin.write_text(PLUGIN)
    async with await RpcClient.start(["-e", str(plugin)], cwd=str(tmp_path), env=agent_env) as client:
        reply = await client.send({"type": "prompt", "message": "/badentry"})
        error = await client.wait_for("extension_error")
        state = (await client.send({"type": "get_state"}))["data"]
    assert reply["success"] is True
    assert "append_entry: data.tags is a set" in error[-1]["error"]
    assert state["sessionFile"] is None or not Path(state["sessionFile"]).exists()


async def test_values_that_contain_themselves_are_named_errors_not_a_frozen_agent(agent_env, fake_llm, tmp_path):
    plugin = tmp_path / "odd.py"
    plugin.write_text(PLUGIN)
    fake_llm.set_script([{"tool_calls": _calls("cycle", "cycle_update")}, {"text": "done"}])
    async with await RpcClient.start(["-e", str(plugin)], cwd=str(tmp_path), env=agent_env) as client:
        events = await client.prompt_and_wait("go", timeout=60)
        await client.send({"type": "prompt", "message": "/cycleentry"})
        error = await client.wait_for("extension_error")
    texts = [e["result"]["content"][0]["text"] for e in events if e["type"] == "tool_execution_end"]
    assert "details.d contains itself (a circular reference)" in texts[0], texts
    assert "details.l[0] contains itself (a circular reference)" in texts[1], texts
    assert "append_entry: data.loop[0] contains itself" in error[-1]["error"]
    assert events[-1] == {"type": "agent_settled", "aborted": False}
