"""End to end: the approval policy meets a real MCP server's tool annotations (`mcp_server.py annotated`): a
tool annotated `readOnlyHint: true` runs unasked under `--approvals ask` and runs under `read-only`; one
annotated `false` is asked about, or refused."""

from __future__ import annotations

from agent_forge.modes.rpc.client import RpcClient

from .test_mcp import stdio, write_mcp
from .test_rpc_approvals import answer, question

CALLS = {"tool_calls": [{"name": "s_peek", "arguments": {}}, {"name": "s_poke", "arguments": {}}]}


def ends(events):
    return {e["toolName"]: e for e in events if e["type"] == "tool_execution_end"}


async def test_ask_runs_a_read_only_hinted_tool_unasked_and_asks_about_the_other(agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"s": stdio("annotated")})
    fake_llm.set_script([CALLS, {"text": "done"}])
    async with await RpcClient.start(["--approvals", "ask", "--no-session"], cwd=str(tmp_path),
                                     env=agent_env) as client:
        await client.send({"type": "prompt", "message": "go"})
        asked = await question(client)
        answer(client, asked["id"], value="Reject")
        done = ends(await client.wait_for("agent_settled"))
    assert asked["toolName"] == "s_poke"  # the only question: s_peek ran unasked
    assert done["s_peek"]["isError"] is False and "peeked" in str(done["s_peek"]["result"])
    assert done["s_poke"]["isError"] is True and "rejected" in str(done["s_poke"]["result"])


async def test_read_only_runs_a_read_only_hinted_tool_and_refuses_the_other(agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"s": stdio("annotated")})
    fake_llm.set_script([CALLS, {"text": "done"}])
    async with await RpcClient.start(["--approvals", "read-only", "--no-session"], cwd=str(tmp_path),
                                     env=agent_env) as client:
        events = await client.prompt_and_wait("go")
    done = ends(events)
    assert not [e for e in events if e["type"] == "extension_ui_request"]
    assert done["s_peek"]["isError"] is False and "peeked" in str(done["s_peek"]["result"])
    assert done["s_poke"]["isError"] is True and "read-only" in str(done["s_poke"]["result"])
