"""End to end: MCP servers that misbehave on purpose (`tests/support/mcp_hostile_server.py`, the SDK's low-level
server API) against the real CLI in RPC mode and the loopback fake LLM: an abort while a prompt waits for a server
keeps the prompt; server text has size limits; tools with schemas providers reject are withheld; a server that
exits while its child holds its stdout fails at once, and the children of servers never outlive the agent."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
from pathlib import Path

from agent_forge.modes.rpc.client import RpcClient

from support.doubles import running

from .test_mcp import offered, tool_texts, until_state, write_mcp

HOSTILE = str(Path(__file__).resolve().parents[1] / "support" / "mcp_hostile_server.py")


def hostile(mode: str, **fields) -> dict:
    return {"command": sys.executable, "args": [HOSTILE, mode], **fields}


def session_lines(agent_env: dict) -> list[dict]:
    files = list((Path(agent_env["AGENT_FORGE_DIR"]) / "sessions").rglob("*.jsonl"))
    assert len(files) == 1, files
    return [json.loads(line) for line in files[0].read_text().splitlines()]


async def test_abort_while_a_prompt_waits_for_a_server_keeps_the_prompt_and_the_run_ends_aborted(
        agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"slow": hostile("hang-list", startupTimeoutMs=60000)})
    fake_llm.set_script([{"text": "the next prompt's answer"}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        reply = await client.send({"type": "prompt", "message": "go"})
        aborted = await client.send({"type": "abort"})
        events = await client.wait_for("agent_settled")
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    kinds = [e["type"] for e in events if e["type"] in ("agent_start", "agent_end", "agent_settled")]
    assert reply["data"] == {"disposition": "started"} and aborted["success"] is True
    assert kinds == ["agent_start", "agent_end", "agent_settled"] and events[-1]["aborted"] is True
    assert [(m["role"], m.get("stopReason")) for m in messages] == [("user", None), ("assistant", "aborted")]
    assert messages[0]["content"][0]["text"] == "go" and fake_llm.requests == []
    stored = [e["message"]["role"] for e in session_lines(agent_env) if e.get("type") == "message"]
    assert stored == ["user", "assistant"]


def request_text(request: dict) -> str:
    return json.dumps(request["body"])


async def test_a_huge_json_rpc_error_message_is_cut_in_the_tool_result_and_the_next_request(agent_env, fake_llm,
                                                                                          tmp_path):
    write_mcp(agent_env, {"h": hostile("huge-error")})
    fake_llm.set_script([{"tool_calls": [{"name": "h_boom", "arguments": {}}]}, {"text": "done"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        events = await client.prompt_and_wait("boom", timeout=60)
    end = next(e for e in events if e["type"] == "tool_execution_end")
    text = end["result"]["content"][0]["text"]
    assert end["isError"] is True and text.startswith("MCP server h: the call of boom failed: EEEE")
    assert len(text) < 2_200 and "[... cut: the message has 10,485,7" in text
    assert len(request_text(fake_llm.requests[1])) < 20_000 and "[... cut: the message" in tool_texts(
        fake_llm.requests[1])[0]


async def test_huge_instructions_descriptions_titles_and_progress_messages_are_cut_and_reported(
        agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"h": hostile("huge-text")})
    fake_llm.set_script([{"tool_calls": [{"name": "h_big", "arguments": {}}]}, {"text": "done"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        events = await client.prompt_and_wait("big", timeout=60)
        server = (await client.send({"type": "get_mcp_servers"}))["data"]["servers"][0]
        commands = (await client.send({"type": "get_commands"}))["data"]["commands"]
    wordy = next(c for c in commands if c["name"] == "mcp:h:wordy")
    assert len(wordy["description"]) < 4_100 and wordy["description"].endswith("the first 4,000 are shown]")
    assert len(wordy["arguments"][0]["description"]) < 4_100
    reader = next(t["function"] for t in fake_llm.requests[0]["body"]["tools"]
                  if t["function"]["name"] == "read_mcp_resource")
    assert len(reader["description"]) < 1_000 and "file:///uuu" in reader["description"]
    first = fake_llm.requests[0]["body"]
    big = next(t["function"] for t in first["tools"] if t["function"]["name"] == "h_big")
    system = first["messages"][0]["content"]
    assert len(request_text(fake_llm.requests[0])) < 20_000 and offered(fake_llm.requests[0]).count("h_fine") == 1
    assert big["description"].startswith("DDDD") and big["description"].endswith(
        "[... cut: the server's description has 5,242,880 characters, the first 4,000 are shown]")
    assert "- h: " + "I" * 500 + "…" in system and "I" * 501 not in system
    update = next(e for e in events if e["type"] == "tool_execution_update")["partialResult"]["content"][0]["text"]
    assert len(update) < 700 and "[... cut: the progress message has 1,048,576 characters" in update
    stderr = client.stderr.decode()
    assert "MCP tool 'big' of server 'h': its description has 5,242,880 characters; the first 4,000" in stderr
    assert "MCP server 'h': the first line of its instructions has 5,242,880 characters" in stderr
    assert server["state"] == "connected" and "h_big" in server["tools"]
    assert any("its description has 5,242,880 characters" in w and len(w) < 300 for w in server["warnings"])
    assert len(stderr) < 5_000


async def test_tools_with_schemas_providers_reject_are_withheld_and_reported_the_others_go_on(
        agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"s": hostile("bad-schema"), "r": hostile("raw-schema")})
    fake_llm.set_script([{"tool_calls": [{"name": "s_fine", "arguments": {"x": "y"}}]}, {"text": "done"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        await client.prompt_and_wait("use fine", timeout=60)
        servers = {s["name"]: s for s in (await client.send({"type": "get_mcp_servers"}))["data"]["servers"]}
    names = offered(fake_llm.requests[0])
    assert "s_fine" in names, [s.get("lastError") for s in servers.values()]
    assert "s_fine" in names and not {"s_wat", "s_deep", "s_fat"} & set(names)
    assert servers["s"]["state"] == "connected" and servers["s"]["tools"] == ["s_fine"]
    assert tool_texts(fake_llm.requests[1]) == ["called fine"]
    stderr = client.stderr.decode()
    for tool, problem in [("wat", 'properties.a: type: "wat" is not a JSON Schema type'),
                          ("deep", "nested more than 64 schemas deep"),
                          ("fat", "more than the 65,536 allowed")]:
        assert f"MCP tool '{tool}' of server 's' is not offered: providers would reject its input schema" in stderr
        assert problem in stderr, problem
    assert len([w for w in servers["s"]["warnings"] if "is not offered" in w]) == 3
    # Schemas the SDK's client itself refuses are taken out of the listing: the server's other tools are offered.
    assert servers["r"]["state"] == "connected" and "r_fine" in servers["r"]["tools"], servers["r"]
    assert "r_top" not in names and any("'top' of server 'r' is not offered: its listing does not follow the "
                                        "protocol (inputSchema.type: Input should be 'object')" in w
                                        for w in servers["r"]["warnings"])


def child_pid(log: Path) -> int:
    return int(next(line for line in log.read_text().splitlines() if line.startswith("child ")).split()[1])


async def test_a_server_that_exits_while_its_child_holds_its_stdout_fails_its_call_at_once_and_the_child_dies(
        agent_env, fake_llm, tmp_path):
    log = tmp_path / "orphan.log"
    write_mcp(agent_env, {"s": hostile("orphan-exit", env={"MCP_TEST_LOG": str(log)})})
    fake_llm.set_script([{"tool_calls": [{"name": "s_fine", "arguments": {}}]}, {"text": "done"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        await until_state(client, "s", "connected")
        events = await client.prompt_and_wait("call it", timeout=20)  # its stdout never closes: no end of stream
        child = child_pid(log)
        deadline = time.monotonic() + 10  # its group is killed as the connection ends, just after the call fails
        while running(child) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert not running(child)
    end = next(e for e in events if e["type"] == "tool_execution_end")
    assert end["isError"] is True and "the call of fine failed: the server exited" in json.dumps(end)
    failed = [e for e in events if e["type"] == "mcp_server_changed" and e["state"] == "failed"]
    # the exit status is named when the agent, not asyncio's child watcher, reaps the server first
    assert failed and re.match(r"the server exited( \(exit status 3\))?; restarting in 1 s", failed[0]["lastError"])


async def test_a_child_of_a_server_that_exits_when_its_stdin_closes_dies_with_the_agent(agent_env, tmp_path):
    log = tmp_path / "child.log"
    write_mcp(agent_env, {"s": hostile("child", env={"MCP_TEST_LOG": str(log)})})
    client = await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env)
    await until_state(client, "s", "connected")
    child = child_pid(log)
    assert running(child)
    assert await client.close() == 0
    assert not running(child)


BAD_FIELD_NOTICES = [
    "MCP tool 'noschema' of server 'b' has no inputSchema; it is offered as a tool without arguments",
    "MCP tool 'arr' of server 'b' is not offered: its listing does not follow the protocol (inputSchema.type: "
    "Input should be 'object')",
    "MCP server 'b' lists a tool whose name is empty; it is not offered",
    "MCP server 'b' lists a tool whose name is not a string (int); it is not offered",
    "MCP tool 'desc' of server 'b' is not offered: its listing does not follow the protocol (description: Input "
    "should be a valid string)",
    "MCP tool 'ann' of server 'b' is not offered: its listing does not follow the protocol (annotations: Input "
    "should be a valid dictionary",
    "MCP server 'b' lists a tool whose name is missing (the item is str, not an object); it is not offered",
]


async def test_tools_with_a_field_the_protocol_does_not_allow_are_left_out_and_reported_the_others_work(
        agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"b": hostile("bad-fields")})
    fake_llm.set_script([{"tool_calls": [{"name": "b_noschema", "arguments": {}}]}, {"text": "done"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        await client.prompt_and_wait("use them", timeout=60)
        server = (await client.send({"type": "get_mcp_servers"}))["data"]["servers"][0]
    assert server["state"] == "connected" and server["tools"] == ["b_noschema", "b_fine"], server
    assert sorted(n for n in offered(fake_llm.requests[0]) if n.startswith("b_")) == ["b_fine", "b_noschema"]
    assert tool_texts(fake_llm.requests[1]) == ["called noschema"]
    assert "lastError" not in server and len(server["warnings"]) == len(BAD_FIELD_NOTICES)
    stderr = client.stderr.decode()
    for notice in BAD_FIELD_NOTICES:
        assert any(w.startswith(notice) for w in server["warnings"]) and notice in stderr, notice


def test_mcp_list_counts_the_tools_a_session_offers_and_says_why_the_others_are_not(agent_env, tmp_path):
    write_mcp(agent_env, {"b": hostile("bad-fields")})
    done = subprocess.run([sys.executable, "-m", "agent_forge", "mcp", "list"], cwd=tmp_path, env=agent_env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    row = done.stdout.splitlines()[1].split()
    assert row[:5] == ["b", "user", "stdio", "connected", "2"]
    for notice in BAD_FIELD_NOTICES:
        assert f"\nWarning: {notice}" in "\n" + done.stderr, notice


def test_a_nul_in_a_servers_command_args_or_env_is_named_and_the_server_skipped(agent_env, fake_llm, tmp_path):
    """Its start failed as a bare "embedded null byte", again at every restart (round 24)."""
    write_mcp(agent_env, {"c": {"command": "echo\u0000x"}, "a": {"command": sys.executable, "args": ["-c\u0000"]},
                          "e": {"command": sys.executable, "env": {"X": "1\u00002"}}})
    fake_llm.set_script([{"text": "answered without them"}])
    done = subprocess.run([sys.executable, "-m", "agent_forge", "-p", "hi"], cwd=tmp_path, env=agent_env,
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "answered without them\n"), done.stderr
    for name, field in (("c", "command"), ("a", "args"), ("e", "env")):
        assert f"mcpServers.{name}: {field} holds a NUL character" in done.stderr, done.stderr
    assert "embedded null byte" not in done.stderr
