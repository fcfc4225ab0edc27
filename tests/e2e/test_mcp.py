"""End to end: real MCP servers (`tests/support/mcp_server.py`, written with the SDK's server API) as tool sources
of the real CLI in RPC mode, against the loopback fake LLM: configuration, tools, results, progress, abort."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from agent_forge.modes.rpc.client import RpcClient

SERVER = str(Path(__file__).resolve().parents[1] / "support" / "mcp_server.py")


def stdio(mode: str = "normal", *extra: str, **fields) -> dict:
    return {"command": sys.executable, "args": [SERVER, mode, *extra], **fields}


def write_mcp(env: dict, servers: dict, path: Path | None = None) -> Path:
    target = path or Path(env["AGENT_FORGE_DIR"]) / "mcp.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"mcpServers": servers}))
    return target


async def until_state(client: RpcClient, name: str, *states: str, timeout: float = 30) -> dict:
    """The next `mcp_server_changed` event of server `name` in one of `states` (other events are skipped)."""
    deadline = time.monotonic() + timeout
    while True:
        event = await client.next_event(timeout=max(0.1, deadline - time.monotonic()))
        if event["type"] == "mcp_server_changed" and event["name"] == name and event["state"] in states:
            return event


def tool_texts(request: dict) -> list[str]:
    """The text of every tool result message of an OpenAI-completions request body."""
    return [m["content"] if isinstance(m["content"], str) else " ".join(p.get("text", "") for p in m["content"])
            for m in request["body"]["messages"] if m["role"] == "tool"]


def offered(request: dict) -> list[str]:
    return [t["function"]["name"] for t in request["body"].get("tools", [])]


async def test_a_prompt_waits_for_a_starting_server_and_its_tools_results_reach_the_next_request(agent_env, fake_llm,
                                                                                                 tmp_path):
    write_mcp(agent_env, {"tools": stdio(description="test tools")})
    fake_llm.set_script([
        {"tool_calls": [{"name": "tools_echo", "arguments": {"text": "hi"}},
                        {"name": "tools_add", "arguments": {"a": 2, "b": 3}},
                        {"name": "tools_readme", "arguments": {}},
                        {"name": "tools_picture", "arguments": {}},
                        {"name": "tools_fail", "arguments": {}}]},
        {"text": "done"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        started = time.monotonic()
        state = await client.send({"type": "get_state"})
        reply = await client.send({"type": "prompt", "message": "use the tools"})
        answered = time.monotonic() - started
        events = await client.wait_for("agent_settled")
        servers = (await client.send({"type": "get_mcp_servers"}))["data"]["servers"]
    assert state["success"] and reply["data"] == {"disposition": "started"} and answered < 1.0
    assert {"tools_echo", "tools_add", "tools_slow"} <= set(offered(fake_llm.requests[0]))
    ends = {e["toolName"]: e for e in events if e["type"] == "tool_execution_end"}
    assert ends["tools_fail"]["isError"] is True and "this tool always fails" in json.dumps(ends["tools_fail"])
    assert ends["tools_picture"]["result"]["content"][0]["type"] == "image"
    texts = " ".join(tool_texts(fake_llm.requests[1]))
    assert "echo: hi" in texts and '"sum": 5' in texts and "[Resource file:///readme.md]\n# Readme" in texts
    assert servers[0]["name"] == "tools" and servers[0]["state"] == "connected" and servers[0]["scope"] == "user"
    assert servers[0]["transport"] == "stdio" and "tools_echo" in servers[0]["tools"]
