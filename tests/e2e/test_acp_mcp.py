"""End to end: the editor's MCP servers in ACP mode (docs/acp.md, "MCP servers"): any name the editor gives is
renamed to fit the agent's rule and its tools work; a failing server is said once per failure."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from support.acp_client import AcpClient


async def test_a_failing_mcp_server_is_said_once_per_failure_with_its_backoff(agent_env, project, fake_llm):
    fake_llm.set_script([{"text": "ok"}])
    client = await AcpClient.start(cwd=str(project), env=agent_env)
    await client.initialize()
    servers = [{"name": "nf", "command": str(project / "no-such-server"), "args": [], "env": []}]
    session_id = (await client.request("session/new", {"cwd": str(project), "mcpServers": servers}))["sessionId"]
    assert await client.prompt(session_id, "hi") == {"stopReason": "end_turn"}  # it waited for the first attempt

    def failures() -> list[str]:
        return [u["content"]["text"].strip() for u in client.updates(session_id, "agent_thought_chunk")
                if "MCP server" in u["content"]["text"]]

    await client.wait_for(lambda: any("restarting in 2 s" in f for f in failures()), timeout=30)
    assert await client.close() == 0
    said = failures()
    assert "restarting in 1 s" in said[0] and "restarting in 2 s" in said[1], said  # no repeat between
    assert "No such file" in said[0]
    assert client.stderr().count("restarting in 1 s") == 1 and client.stderr().count("restarting in 2 s") == 1


MCP_SERVER = str(Path(__file__).resolve().parents[1] / "support" / "mcp_server.py")


async def test_editor_mcp_servers_with_any_name_are_renamed_to_fit_and_their_tools_work(agent_env, project,
                                                                                         fake_llm):
    fake_llm.set_script([{"tool_calls": [{"name": "my_tools_echo", "arguments": {"text": "a"}},
                                         {"name": "my_tools_2_echo", "arguments": {"text": "b"}},
                                         {"name": "____echo", "arguments": {"text": "c"}}]}, {"text": "ok"}])
    client = await AcpClient.start(["--approvals", "full"], cwd=str(project), env=agent_env)
    await client.initialize()
    server = {"command": sys.executable, "args": [MCP_SERVER, "normal"], "env": []}
    servers = [{"name": "my tools", **server}, {"name": "my/tools", **server}, {"name": "ü✓\n", **server}]
    session_id = (await client.request("session/new", {"cwd": str(project), "mcpServers": servers}))["sessionId"]
    assert await client.prompt(session_id, "go", timeout=60) == {"stopReason": "end_turn"}
    offered = {t["function"]["name"] for t in fake_llm.requests[0]["body"]["tools"]}
    assert {"my_tools_echo", "my_tools_2_echo", "____echo"} <= offered
    results = [m["content"] for m in fake_llm.requests[1]["body"]["messages"] if m["role"] == "tool"]
    assert [r if isinstance(r, str) else r[0]["text"] for r in results] == ["echo: a", "echo: b", "echo: c"]
    notes = [u["content"]["text"] for u in client.updates(session_id, "agent_thought_chunk")]
    assert any("'my/tools' is named my_tools_2 here" in n for n in notes), notes
    assert any("'ü✓\\n' is named ___ here" in n for n in notes), notes
    assert await client.close() == 0
    assert "'my tools' is named my_tools here" in client.stderr()
