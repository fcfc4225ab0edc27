"""End to end: the editor's MCP servers in ACP mode (docs/acp.md, "MCP servers"): any name the editor gives is
renamed to fit the agent's rule and its tools work; a failing server is said once, not at every restart."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from support.acp_client import AcpClient


async def test_a_server_that_never_starts_is_said_once_not_at_every_restart(agent_env, project, fake_llm):
    """Its restarts (after 1, 2, 4 ... then every 60 s) failing the same way are not said again: an editor would
    show a new line every minute for as long as the session is open."""
    fake_llm.set_script([{"text": "ok"}])
    client = await AcpClient.start(cwd=str(project), env=agent_env)
    await client.initialize()
    starts = project / "starts.log"
    servers = [{"name": "nf", "command": "/bin/sh", "args": ["-c", f"echo start >> {starts}; exit 3"], "env": []}]
    session_id = (await client.request("session/new", {"cwd": str(project), "mcpServers": servers}))["sessionId"]
    assert await client.prompt(session_id, "hi") == {"stopReason": "end_turn"}  # it waited for the first attempt

    def failures() -> list[str]:
        return [u["content"]["text"].strip() for u in client.updates(session_id, "agent_thought_chunk")
                if "MCP server" in u["content"]["text"]]

    # a third start comes after the second failure was reported (and its 2 s backoff)
    await _until(lambda: starts.exists() and len(starts.read_text().splitlines()) >= 3)  # (no message comes)
    assert await client.close() == 0
    said = failures()
    assert len(said) == 1 and "MCP server 'nf' failed: the server exited" in said[0], said
    assert said[0].endswith("restarting in 1 s (while its restarts fail too, this is not said again)")
    assert client.stderr().count("MCP server 'nf' failed") == 1


async def _until(condition, timeout: float = 30) -> None:
    """Poll `condition()` (a file another process writes) until it holds; AssertionError after `timeout` s."""
    import asyncio
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


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
