"""End to end: what an MCP server cannot do to the session (`tests/support/mcp_hostile_server.py` against the real
CLI in RPC mode and the loopback fake LLM): take a built-in or reserved tool name, or put an image no provider
takes into the conversation."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from agent_forge.modes.rpc.client import RpcClient

from support.doubles import running

from .test_mcp import _logged_pid, offered, stdio, tool_texts, until_state, write_mcp
from .test_mcp_hostile import hostile


async def test_a_server_cannot_take_the_resource_readers_name(agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"read": hostile("reserved")})
    fake_llm.set_script([{"tool_calls": [{"name": "read_mcp_resource",
                                          "arguments": {"server": "read", "uri": "file:///r.txt"}}]},
                         {"text": "done"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        await client.prompt_and_wait("read r", timeout=60)
        server = (await client.send({"type": "get_mcp_servers"}))["data"]["servers"][0]
    names = offered(fake_llm.requests[0])
    hashed = [n for n in names if n.startswith("read_mcp_resource_")]
    assert names.count("read_mcp_resource") == 1 and len(hashed) == 1 and server["tools"] == hashed
    assert tool_texts(fake_llm.requests[1]) == ["[Resource file:///r.txt]\nresource r"]
    stderr = client.stderr.decode()
    assert f"the name read_mcp_resource is not unique; offered as {hashed[0]}" in stderr
    assert "MCP resources cannot be read" not in stderr


IMAGE_CALLS = ["svg", "garbage", "fake", "big", "good"]


async def test_images_no_provider_takes_become_a_line_of_text_and_later_requests_still_go(
        agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"p": hostile("bad-images")})
    reads = [{"name": "read_mcp_resource", "arguments": {"server": "p", "uri": uri}}
             for uri in ("file:///fake.png", "file:///good.png")]
    fake_llm.set_script([{"tool_calls": [{"name": f"p_{n}", "arguments": {}} for n in IMAGE_CALLS] + reads},
                         {"text": "done"}, {"text": "again"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        events = await client.prompt_and_wait("images", timeout=90)
        await client.prompt_and_wait("more", timeout=60)
    args = {e["toolCallId"]: e["args"] for e in events if e["type"] == "tool_execution_start"}
    ends = {e["toolName"] + args[e["toolCallId"]].get("uri", ""): e for e in events
            if e["type"] == "tool_execution_end"}  # the calls run in parallel: their ends come in any order
    order = [f"p_{n}" for n in IMAGE_CALLS] + ["read_mcp_resourcefile:///fake.png", "read_mcp_resourcefile:///good.png"]
    blocks = [ends[key]["result"]["content"] for key in order]
    kinds = [[b["type"] for b in content] for content in blocks]
    assert kinds == [["text", "text"]] * 4 + [["text", "image"], ["text"], ["image"]]
    said = [content[-1].get("text") for content in blocks]
    assert said[0] == "[Image: not shown, image type 'image/svg+xml' is not one of image/png, image/jpeg, " \
                      "image/gif, image/webp]"
    assert said[1] == "[Image: not shown, the image data is not valid base64]"
    assert said[2] == "[Image: not shown, the data is not of type image/png]"
    assert said[3].startswith("[Image: not shown, the image is about 21MB, over the 20MB limit")
    assert said[5] == "[Resource file:///fake.png: not shown, the data is not of type image/png]"
    later = json.dumps(fake_llm.requests[2]["body"])
    assert later.count("data:image/") == 2 and "svg" not in later.split("data:image/")[1][:10]
    assert len(later) < 100_000


async def test_a_tool_schema_without_type_is_an_object_schema_and_the_server_connects(agent_env, fake_llm,
                                                                                       tmp_path):
    write_mcp(agent_env, {"u": hostile("untyped")})
    fake_llm.set_script([{"tool_calls": [{"name": "u_loose", "arguments": {"x": "1"}}]}, {"text": "done"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        await client.prompt_and_wait("loose", timeout=60)
        server = (await client.send({"type": "get_mcp_servers"}))["data"]["servers"][0]
    assert server["state"] == "connected" and server["tools"] == ["u_loose", "u_fine"], server
    loose = next(t["function"] for t in fake_llm.requests[0]["body"]["tools"] if t["function"]["name"] == "u_loose")
    assert loose["parameters"] == {"properties": {"x": {"type": "string"}}, "type": "object"}
    assert tool_texts(fake_llm.requests[1]) == ["called loose"]


@pytest.mark.real_process  # SIGTERM
@pytest.mark.parametrize("how", ["sigterm", "eof"])
async def test_a_server_still_starting_is_stopped_at_once_on_sigterm_and_stdin_eof(agent_env, tmp_path, how):
    log = tmp_path / "stubborn.log"  # it ignores SIGTERM and stdin EOF: only the SIGKILL stops it
    write_mcp(agent_env, {"stubborn": stdio("stubborn", env={"MCP_TEST_LOG": str(log)}, startupTimeoutMs=60000)})
    client = await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env)
    async with client:
        pid = await _logged_pid(log)
        state = (await client.send({"type": "get_mcp_servers"}))["data"]["servers"][0]["state"]
        started = time.monotonic()
        if how == "sigterm":
            os.kill(client.process.pid, signal.SIGTERM)
        code = await client.close(timeout=20)
        took = time.monotonic() - started
    assert state == "starting" and code == (128 + signal.SIGTERM if how == "sigterm" else 0)
    assert took < 2.0, took
    assert not running(pid)


async def test_bad_urls_are_reported_when_the_file_loads_and_http_failures_name_the_url(agent_env, fake_llm,
                                                                                        tmp_path):
    import socket

    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    path = write_mcp(agent_env, {"big": {"url": "http://127.0.0.1:99999/mcp"}, "nohost": {"url": "http://:80/x"},
                                 "word": {"url": "https://h:abc/"}, "closed": {"url": f"http://127.0.0.1:{port}/mcp"}})
    fake_llm.set_script([{"text": "hello"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        await client.send({"type": "prompt", "message": "hi"})  # starts the servers at once
        failed = await until_state(client, "closed", "failed")
        servers = (await client.send({"type": "get_mcp_servers"}))["data"]["servers"]
    assert [s["name"] for s in servers] == ["closed"]
    assert f"(http://127.0.0.1:{port}/mcp)" in failed["lastError"], failed
    stderr = client.stderr.decode()
    assert f"{path}:1: mcpServers.big: url 'http://127.0.0.1:99999/mcp' is not a valid URL (Port out of range" in stderr
    assert f"{path}:1: mcpServers.nohost: url 'http://:80/x' has no host; skipped" in stderr
    assert f"{path}:1: mcpServers.word: url 'https://h:abc/' is not a valid URL (Port could not be cast" in stderr
    assert "port must be 0-65535" not in stderr


def test_a_crash_mid_call_is_noticed_at_once_in_json_mode_and_its_tools_are_withdrawn(agent_env, fake_llm,
                                                                                      tmp_path):
    import subprocess
    import sys

    write_mcp(agent_env, {"tools": stdio()})
    fake_llm.set_script([{"tool_calls": [{"name": "tools_crash", "arguments": {}}]},
                         {"tool_calls": [{"name": "tools_echo", "arguments": {"text": "dead?"}}]}, {"text": "ok"}])
    result = subprocess.run([sys.executable, "-m", "agent_forge", "--mode", "json", "--no-session", "crash it"],
                            cwd=tmp_path, env=agent_env, input=b"", capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [(e["type"], e.get("state") or e.get("toolName")) for e in events
             if e["type"] in ("mcp_server_changed", "tool_execution_end")]
    crash_end = kinds.index(("tool_execution_end", "tools_crash"))
    failed = kinds.index(("mcp_server_changed", "failed"))
    assert failed < crash_end, kinds
    event = [e for e in events if e["type"] == "mcp_server_changed" and e["state"] == "failed"][0]
    assert event["tools"] == [] and "the server exited" in event["lastError"] and "restarting" in event["lastError"]
    assert "tools_echo" in offered(fake_llm.requests[0]) and not [n for n in offered(fake_llm.requests[1])
                                                                   if n.startswith("tools_")]
    assert "MCP server tools: the call of crash failed: the server exited" in tool_texts(fake_llm.requests[1])[0]
