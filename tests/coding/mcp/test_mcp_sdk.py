"""The SDK's `mcp_servers`: an in-process session with the faux model calls a real stdio MCP server's tool
(`mcp_server.py`, which answers as the SDK's server `mcp_sdk_server.py` does: `tests/support/test_mcp_lite.py`;
the agent meets the SDK's own server over stdio in `tests/e2e/test_mcp.py`); the connected server is listed in the
system prompt; closing the session stops the server."""

from __future__ import annotations

import sys
from pathlib import Path

from agent_forge.sdk import FauxResponse, create_agent_session, faux_model, faux_requests, set_faux_responses

SERVER = str(Path(__file__).resolve().parents[2] / "support" / "mcp_server.py")


async def test_sdk_sessions_take_mcp_servers_in_code(tmp_path):
    key = "mcp-sdk"
    set_faux_responses([FauxResponse(tool_calls=[("tools_echo", {"text": "from the sdk"})]),
                        FauxResponse(text="done")], key=key)
    servers = {"tools": {"command": sys.executable, "args": [SERVER], "description": "Test tools"}}
    session = create_agent_session(cwd=str(tmp_path), model=faux_model(key=key), agent_dir=tmp_path / "agent",
                                   no_session=True, mcp_servers=servers)
    await session.prompt_and_wait("echo")
    listed = session.mcp.servers()
    await session.close()
    first, second = faux_requests(key)
    assert "Connected MCP servers" in first.context["systemPrompt"] and "- tools: Test tools" in \
        first.context["systemPrompt"]
    result = second.context["messages"][-1]
    assert result["role"] == "toolResult" and result["content"][0]["text"] == "echo: from the sdk"
    assert listed[0]["scope"] == "sdk" and listed[0]["state"] == "connected"
    assert [s["state"] for s in session.mcp.servers()] == ["stopped"]


async def test_close_cancels_a_call_that_never_ends_after_plugin_handler_timeout(tmp_path):
    import asyncio
    import json
    import time

    key = "mcp-sdk-close"
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    (agent_dir / "settings.json").write_text(json.dumps({"pluginHandlerTimeoutMs": 300}))
    set_faux_responses([FauxResponse(tool_calls=[("tools_slow", {"marker": "m"})]), FauxResponse(text="after")],
                       key=key)
    servers = {"tools": {"command": sys.executable, "args": [SERVER]}}
    session = create_agent_session(cwd=str(tmp_path), model=faux_model(key=key), agent_dir=agent_dir,
                                   no_session=True, mcp_servers=servers)
    running = asyncio.Event()
    session.subscribe(lambda event: running.set() if event["type"] == "tool_execution_update" else None)
    await session.submit("go slow")
    await asyncio.wait_for(running.wait(), 30)
    started = time.monotonic()
    await asyncio.wait_for(session.close(), 10)
    assert time.monotonic() - started < 8
    result = faux_requests(key)[1].context["messages"][-1]
    assert result["isError"] and "still running 0.3 s after stdin closed" in result["content"][0]["text"]


def test_no_mcp_ignores_mcp_servers_in_code(tmp_path):
    servers = {"tools": {"command": sys.executable, "args": [SERVER]}}
    session = create_agent_session(cwd=str(tmp_path), model=faux_model(), agent_dir=tmp_path / "agent",
                                   no_session=True, mcp_servers=servers, no_mcp=True)
    assert session.mcp.servers() == []
