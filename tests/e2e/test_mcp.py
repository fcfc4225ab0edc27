"""End to end: real MCP server processes as tool sources of the real CLI in RPC mode, against the loopback fake
LLM: configuration, tools, results, progress, abort. The servers are `tests/support/mcp_server.py` (JSON-RPC by
hand, answering as the SDK's server does: `tests/support/test_mcp_lite.py`), and, where the test is about meeting
the SDK itself (the first connection, streamable HTTP), `mcp_sdk_server.py`, written with the SDK's server API."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import time
from pathlib import Path

import pytest
from support.doubles import running

from agent_forge.modes.rpc.client import RpcClient

SERVER = str(Path(__file__).resolve().parents[1] / "support" / "mcp_server.py")
SDK_SERVER = str(Path(SERVER).with_name("mcp_sdk_server.py"))
SDK_STARTUP_MS = 60_000


def stdio(mode: str = "normal", *extra: str, sdk: bool = False, **fields) -> dict:
    """A stdio server entry: `mcp_server.py MODE EXTRA...`, or with `sdk` the SDK's own (`mcp_sdk_server.py`)."""
    if sdk:  # importing the SDK (pydantic, anyio) can pass the 10 s default start-up timeout on a loaded machine
        fields = {"startupTimeoutMs": SDK_STARTUP_MS, **fields}
    return {"command": sys.executable, "args": [SDK_SERVER if sdk else SERVER, mode, *extra], **fields}


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


@pytest.mark.real_process  # the SDK's first import, in the agent's own process
async def test_a_prompt_waits_for_a_starting_server_and_its_tools_results_reach_the_next_request(agent_env, fake_llm,
                                                                                                 tmp_path):
    write_mcp(agent_env, {"tools": stdio(description="test tools", sdk=True)})
    fake_llm.set_script([
        {"tool_calls": [{"name": "tools_echo", "arguments": {"text": "hi"}},
                        {"name": "tools_add", "arguments": {"a": 2, "b": 3}},
                        {"name": "tools_readme", "arguments": {}},
                        {"name": "tools_picture", "arguments": {}},
                        {"name": "tools_fail", "arguments": {}}]},
        {"text": "done"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        state = await client.send({"type": "get_state"})
        reply = await client.send({"type": "prompt", "message": "use the tools"})
        events = await client.wait_for("agent_settled")
        servers = (await client.send({"type": "get_mcp_servers"}))["data"]["servers"]
    assert state["success"] and reply["data"] == {"disposition": "started"}
    assert {"tools_echo", "tools_add", "tools_slow"} <= set(offered(fake_llm.requests[0]))
    ends = {e["toolName"]: e for e in events if e["type"] == "tool_execution_end"}
    assert ends["tools_fail"]["isError"] is True and "this tool always fails" in json.dumps(ends["tools_fail"])
    assert ends["tools_picture"]["result"]["content"][0]["type"] == "image"
    texts = " ".join(tool_texts(fake_llm.requests[1]))
    assert "echo: hi" in texts and '"sum": 5' in texts and "[Resource file:///readme.md]\n# Readme" in texts
    assert servers[0]["name"] == "tools" and servers[0]["state"] == "connected" and servers[0]["scope"] == "user"
    assert servers[0]["transport"] == "stdio" and "tools_echo" in servers[0]["tools"]


async def test_abort_cancels_a_hanging_call_within_a_second_and_the_server_is_told(agent_env, fake_llm, tmp_path):
    log = tmp_path / "server.log"
    write_mcp(agent_env, {"tools": stdio(env={"MCP_TEST_LOG": str(log)})})
    fake_llm.set_script([{"tool_calls": [{"name": "tools_slow", "arguments": {"marker": "m1"}}]}, {"text": "after"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        await client.send({"type": "prompt", "message": "go slow"})
        updates = [e async for e in client.events_until("tool_execution_update")]
        started = time.monotonic()
        reply = await client.send({"type": "abort"})
        took = time.monotonic() - started
        await client.wait_for("agent_settled")  # the aborted run's (sent before the answer)
        events = await client.prompt_and_wait("again")  # the session goes on, the server too
    assert reply["success"] and took < 1.0
    assert updates[-1]["partialResult"]["content"][0]["text"] == "progress 1/2: half way"
    assert "cancelled m1" in log.read_text()  # written by the server's cancelled handler before the next prompt ran
    end = [json.dumps(m) for m in fake_llm.requests[1]["body"]["messages"] if m["role"] == "tool"][0]
    assert "notifications/cancelled" in end and "Tool execution was aborted." in end
    assert events[-1] == {"type": "agent_settled", "aborted": False}


async def test_faulty_servers_are_reported_and_the_session_goes_on(agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"missing": {"command": str(tmp_path / "no-such-server")}, "quits": stdio("exit"),
                          "mute": stdio("hang-init", startupTimeoutMs=500), "noisy": stdio("garbage"),
                          "tools": stdio(), "odd": stdio("malformed")})
    fake_llm.set_script([{"tool_calls": [{"name": "noisy_echo", "arguments": {"text": "still works"}},
                                         {"name": "odd_bad", "arguments": {}}]},
                         {"tool_calls": [{"name": "tools_crash", "arguments": {}}]}, {"text": "ok"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        events = await client.prompt_and_wait("try them", timeout=60)
        crashed = next((e for e in events if e["type"] == "mcp_server_changed" and e["name"] == "tools"
                        and e["state"] == "failed"), None) or await until_state(client, "tools", "failed")
        restarted = await until_state(client, "tools", "connected")
        servers = {s["name"]: s for s in (await client.send({"type": "get_mcp_servers"}))["data"]["servers"]}
    notices = [e["message"] for e in events if e["type"] == "mcp_server_changed" and "message" in e]
    assert any("MCP server mute is not ready (starting" in n and "this prompt runs without its tools" in n
               for n in notices), notices  # still starting when the prompt's wait ended
    assert any("MCP server missing is not ready (failed" in n for n in notices)  # the prompt runs without it
    said = [e for e in events if e["type"] == "mcp_server_changed" and e["name"] == "missing"]
    failures = list(dict.fromkeys(e["lastError"] for e in said if e["state"] == "failed"))  # each failure once
    assert "restarting in 1 s" in failures[0] and all("restarting in 1 s" not in f for f in failures[1:]), failures
    assert "cannot start" in servers["missing"]["lastError"] and "No such file" in servers["missing"]["lastError"]
    assert servers["quits"]["state"] in ("failed", "starting") and "exited" in servers["quits"]["lastError"]
    assert "no answer to initialize within 0.5 s" in servers["mute"]["lastError"]
    assert servers["noisy"]["state"] == "connected"
    assert "wrote something that is not JSON-RPC: 'this is not JSON-RPC'" in servers["noisy"]["lastError"]
    texts = tool_texts(fake_llm.requests[2])  # both results, in order
    assert "echo: still works" in texts[0]
    assert "MCP server odd: the call of bad failed: the server's answer is malformed (" in texts[1]
    assert "MCP server tools: the call of crash failed: the server exited" in texts[2]
    assert servers["odd"]["state"] == "connected"
    assert crashed["state"] == "failed" and crashed["tools"] == [] and "restarting in 1 s" in crashed["lastError"]
    assert restarted["tools"]


async def test_tools_allowlists_and_clashing_names(agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"a": stdio("twin", "x_y"), "a_x": stdio("twin", "y"),
                          "tools": stdio(excludeTools=["crash", "h*"])})
    fake_llm.set_script([{"text": "one"}, {"text": "two"}, {"text": "three"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        await client.prompt_and_wait("list")
        servers = {s["name"]: s for s in (await client.send({"type": "get_mcp_servers"}))["data"]["servers"]}
    async with await RpcClient.start(["--no-session", "--tools", "read,tools_e*"], cwd=str(tmp_path),
                                     env=agent_env) as client:
        await client.prompt_and_wait("list")
    stderr = client.stderr.decode()
    async with await RpcClient.start(["--no-session", "--no-tools"], cwd=str(tmp_path), env=agent_env) as client:
        await client.send({"type": "get_state"})
        await until_state(client, "tools", "connected")
        await client.prompt_and_wait("list")
    first, second = offered(fake_llm.requests[0]), offered(fake_llm.requests[1])
    assert offered(fake_llm.requests[2]) == []
    twins = servers["a"]["tools"] + servers["a_x"]["tools"]
    assert len(twins) == 2 and len(set(twins)) == 2 and all(t.startswith("a_x_y_") and len(t) == 14 for t in twins)
    assert set(twins) <= set(first) and "tools_crash" not in first and "tools_huge" not in first
    assert "tools_echo" in first and second == ["read", "tools_echo", "tools_environ"]
    assert "the name a_x_y is not unique" in stderr


async def test_project_servers_need_trust_and_override_user_entries(agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"tools": stdio(), "other": stdio()})
    write_mcp(agent_env, {"tools": {"enabled": False}, "local": stdio("twin", "here")},
              tmp_path / ".agent-forge" / "agent" / "mcp.json")
    async with await RpcClient.start(["--no-session", "--no-approve"], cwd=str(tmp_path), env=agent_env) as client:
        untrusted = (await client.send({"type": "get_mcp_servers"}))["data"]["servers"]
    untrusted_stderr = client.stderr.decode()
    async with await RpcClient.start(["--no-session", "--approve"], cwd=str(tmp_path), env=agent_env) as client:
        trusted = (await client.send({"type": "get_mcp_servers"}))["data"]["servers"]
    assert [(s["name"], s["scope"]) for s in untrusted] == [("tools", "user"), ("other", "user")]
    assert "project MCP servers (.agent-forge/agent/mcp.json) skipped: the project" in untrusted_stderr
    assert [(s["name"], s["scope"], s["state"] == "disabled") for s in trusted] == [
        ("tools", "user", True), ("other", "user", False), ("local", "project", False)]


async def test_a_huge_result_is_cut_like_bash_output_with_the_full_text_in_a_file(agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"tools": stdio()})
    fake_llm.set_script([{"tool_calls": [{"name": "tools_huge", "arguments": {"size": 10_000_000}}]}, {"text": "ok"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        events = await client.prompt_and_wait("big", timeout=60)
    end = next(e for e in events if e["type"] == "tool_execution_end")
    text = end["result"]["content"][0]["text"]
    details = end["result"]["details"]
    assert len(text.encode()) < 60_000 and "[Showing the first" in text and "of 100000 lines" in text
    assert details["truncation"]["totalBytes"] == 10_000_000 and f"Full output: {details['fullOutputPath']}" in text
    assert len(tool_texts(fake_llm.requests[1])[0]) < 60_000
    saved = Path(details["fullOutputPath"])  # named for the server, not as a bash command's output (--no-session:
    assert re.fullmatch(r"mcp-tools-[0-9a-f]{16}\.log", saved.name)  # removed at exit)


async def test_a_server_over_streamable_http_on_loopback(agent_env, fake_llm, tmp_path):
    import asyncio
    import socket

    port_file = tmp_path / "port"
    server = await asyncio.create_subprocess_exec(sys.executable, SDK_SERVER, "normal", "--http", str(port_file),
                                                  stderr=asyncio.subprocess.DEVNULL)
    try:
        port = await _listening(port_file, socket)
        write_mcp(agent_env, {"web": {"url": f"http://127.0.0.1:{port}/mcp", "headers": {"X-Test": "${HOME}"}}})
        fake_llm.set_script([{"tool_calls": [{"name": "web_echo", "arguments": {"text": "over http"}}]},
                             {"text": "done"}])
        async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
            await client.prompt_and_wait("call it")
            servers = (await client.send({"type": "get_mcp_servers"}))["data"]["servers"]
    finally:
        server.kill()
        await server.wait()
    assert servers[0]["transport"] == "http" and servers[0]["state"] == "connected"
    assert "echo: over http" in tool_texts(fake_llm.requests[1])[0]


async def _listening(port_file: Path, socket) -> int:
    """The HTTP server's port once it accepts connections (it starts in well under the 30 s allowed)."""
    import asyncio

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if port_file.exists():
            port = int(port_file.read_text())
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                return port
            except OSError:
                pass
        await asyncio.sleep(0.05)
    raise AssertionError("the MCP HTTP server did not start")


async def _server_pids(client: RpcClient, log: Path, count: int) -> list[int]:
    connected: set[str] = set()
    while len(connected) < count:  # in either order
        event = await client.next_event()
        if event["type"] == "mcp_server_changed" and event["state"] == "connected":
            connected.add(event["name"])
    return [int(line.split()[1]) for line in log.read_text().splitlines() if line.startswith("pid ")]


@pytest.mark.real_process  # SIGTERM
async def test_servers_are_stopped_on_stdin_eof_and_on_sigterm(agent_env, tmp_path):
    for how in ("eof", "sigterm"):
        log = tmp_path / f"{how}.log"
        write_mcp(agent_env, {name: stdio(env={"MCP_TEST_LOG": str(log)}) for name in ("one", "two")})
        client = await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env)
        pids = await _server_pids(client, log, 2)
        assert len(pids) == 2 and all(running(pid) for pid in pids)
        if how == "sigterm":
            os.kill(client.process.pid, signal.SIGTERM)
        code = await client.close()
        assert code == (128 + signal.SIGTERM if how == "sigterm" else 0), client.stderr.decode()
        assert not any(running(pid) for pid in pids), how


async def test_an_http_server_that_goes_away_is_reported_and_its_calls_fail(agent_env, fake_llm, tmp_path):
    import asyncio
    import socket

    port_file = tmp_path / "port"
    server = await asyncio.create_subprocess_exec(sys.executable, SDK_SERVER, "normal", "--http", str(port_file),
                                                  stderr=asyncio.subprocess.DEVNULL)
    port = await _listening(port_file, socket)
    write_mcp(agent_env, {"web": {"url": f"http://127.0.0.1:{port}/mcp"}})
    fake_llm.set_script([{"tool_calls": [{"name": "web_echo", "arguments": {"text": "gone?"}}]}, {"text": "done"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        await until_state(client, "web", "connected")
        server.kill()
        await server.wait()
        events = await client.prompt_and_wait("call it", timeout=60)
        failed = await until_state(client, "web", "failed") if not any(
            e["type"] == "mcp_server_changed" and e["state"] == "failed" for e in events) else None
    end = next(e for e in events if e["type"] == "tool_execution_end")
    assert end["isError"] is True and "MCP server web: the call of echo failed" in json.dumps(end)
    assert failed is None or "restarting" in failed["lastError"]


async def test_the_off_the_shelf_mcp_server_time_from_pypi(agent_env, fake_llm, tmp_path):
    pytest.importorskip("mcp_server_time")  # the test extra installs it
    write_mcp(agent_env, {"time": {"command": sys.executable,
                                   "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
                                   "startupTimeoutMs": SDK_STARTUP_MS}})  # an SDK server: slow to import
    fake_llm.set_script([{"tool_calls": [{"name": "time_get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}]},
                         {"text": "It is late in Tokyo."}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        await client.prompt_and_wait("what time is it in Tokyo?", timeout=60)
    assert {"time_get_current_time", "time_convert_time"} <= set(offered(fake_llm.requests[0]))
    result = json.loads(tool_texts(fake_llm.requests[1])[0])
    assert result["timezone"] == "Asia/Tokyo" and "+09:00" in result["datetime"]


async def test_closing_does_not_wait_for_a_server_hanging_in_initialize(agent_env, tmp_path):
    log = tmp_path / "hang.log"
    write_mcp(agent_env, {"mute": stdio("hang-init", startupTimeoutMs=60000, env={"MCP_TEST_LOG": str(log)})})
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        pid = await _logged_pid(log)
        state = (await client.send({"type": "get_mcp_servers"}))["data"]["servers"][0]["state"]
        started = time.monotonic()
        code = await client.close()
    assert state == "starting" and code == 0 and time.monotonic() - started < 5 and not running(pid)


async def _logged_pid(log: Path) -> int:
    """The pid a server wrote to `log` when it started (it starts within the 30 s allowed)."""
    import asyncio

    deadline = time.monotonic() + 30
    while not (log.exists() and log.read_text().endswith("\n")):
        assert time.monotonic() < deadline, "the MCP server did not start"
        await asyncio.sleep(0.05)
    return int(log.read_text().split()[1])


async def test_changed_tool_and_prompt_lists_are_listed_again(agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"tools": stdio()})
    fake_llm.set_script([{"tool_calls": [{"name": "tools_grow", "arguments": {}}]}, {"text": "grown"},
                         {"tool_calls": [{"name": "tools_extra", "arguments": {}}]}, {"text": "done"},
                         {"text": "later"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        events = await client.prompt_and_wait("grow")
        if not any(e["type"] == "mcp_server_changed" and "tools_extra" in e["tools"] for e in events):
            await until_state(client, "tools", "connected")  # the listing may come after the run
        await client.prompt_and_wait("use it")
        while "later" not in (await client.send({"type": "get_mcp_servers"}))["data"]["servers"][0]["prompts"]:
            await until_state(client, "tools", "connected")  # the prompt list is listed again after the tools'
        commands = [c["name"] for c in (await client.send({"type": "get_commands"}))["data"]["commands"]]
        await client.prompt_and_wait("/mcp:tools:later")
    assert "tools_extra" not in offered(fake_llm.requests[0]) and "tools_extra" in offered(fake_llm.requests[2])
    assert tool_texts(fake_llm.requests[3])[-1] == "extra!"
    assert "mcp:tools:later" in commands and "mcp:tools:review" in commands
    assert fake_llm.requests[4]["body"]["messages"][-1]["content"] == [{"type": "text", "text": "the later prompt"}]


@pytest.mark.real_process  # kill -9
async def test_a_stubborn_server_dies_with_a_killed_agent(agent_env, tmp_path):
    import asyncio

    log = tmp_path / "stubborn.log"
    write_mcp(agent_env, {"stubborn": stdio("stubborn", env={"MCP_TEST_LOG": str(log)})})
    client = await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env)
    pid = await _logged_pid(log)
    os.kill(client.process.pid, signal.SIGKILL)
    await client.close()
    deadline = time.monotonic() + 30  # the lifeline watchdog scans /proc once the agent is gone
    while running(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not running(pid)


async def test_abort_ends_a_prompts_wait_for_a_starting_server(agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"mute": stdio("hang-init", startupTimeoutMs=60000)})
    fake_llm.set_script([{"text": "never asked"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        reply = await client.send({"type": "prompt", "message": "wait for it"})
        started = time.monotonic()
        aborted = await client.send({"type": "abort"})
        took = time.monotonic() - started
        settled = (await client.wait_for("agent_settled"))[-1]
    assert reply["data"] == {"disposition": "started"} and aborted["success"] and took < 1.0
    assert settled == {"type": "agent_settled", "aborted": True} and fake_llm.requests == []


async def test_stdin_eof_gives_a_call_that_never_ends_plugin_handler_timeout_then_cancels_it(
        agent_env_factory, fake_llm, tmp_path):
    log = tmp_path / "server.log"
    env = agent_env_factory(settings={"pluginHandlerTimeoutMs": 500})
    write_mcp(env, {"tools": stdio(env={"MCP_TEST_LOG": str(log)})})
    fake_llm.set_script([{"tool_calls": [{"name": "tools_slow", "arguments": {"marker": "m1"}}]}, {"text": "after"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=env) as client:
        await client.send({"type": "prompt", "message": "go slow"})
        await client.wait_for("tool_execution_update")  # the call runs on the server
        started = time.monotonic()
        code = await client.close(timeout=20)
        took = time.monotonic() - started
    assert code == 0 and took < 8
    assert "cancelled m1" in log.read_text()  # the server was sent notifications/cancelled
    text = tool_texts(fake_llm.requests[1])[0]
    assert "was still running 0.5 s after stdin closed or the session was closed (pluginHandlerTimeoutMs)" in text
    assert len(fake_llm.requests) == 2


async def test_stdin_eof_ends_a_prompts_wait_for_a_starting_server_at_once(agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"mute": stdio("hang-init", startupTimeoutMs=60000)})
    fake_llm.set_script([{"text": "without the server"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        reply = await client.send({"type": "prompt", "message": "wait for it"})
        started = time.monotonic()
        code = await client.close(timeout=20)
        took = time.monotonic() - started
    assert reply["data"] == {"disposition": "started"} and code == 0 and took < 8
    assert len(fake_llm.requests) == 1 and "mute_" not in " ".join(offered(fake_llm.requests[0]))


async def test_a_tool_listed_twice_by_its_server_is_offered_once_and_reported_until_fixed(agent_env, fake_llm,
                                                                                          tmp_path):
    write_mcp(agent_env, {"d": stdio("twice")})
    fake_llm.set_script([{"tool_calls": [{"name": "d_echo", "arguments": {}}]}, {"text": "done"},
                         {"tool_calls": [{"name": "d_other", "arguments": {}}]}, {"text": "fixed"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        await client.prompt_and_wait("echo")
        server = (await client.send({"type": "get_mcp_servers"}))["data"]["servers"][0]
        events = await client.prompt_and_wait("fix it")
        fixed = next((e for e in events if e["type"] == "mcp_server_changed"), None) \
            or await until_state(client, "d", "connected")
    names = offered(fake_llm.requests[0])
    assert len(names) == len(set(names)) and {"d_echo", "d_other"} <= set(names)
    echo = [t for t in fake_llm.requests[0]["body"]["tools"] if t["function"]["name"] == "d_echo"][0]
    assert echo["function"]["description"] == "The first echo" and tool_texts(fake_llm.requests[1]) == ["called echo"]
    problem = "MCP server 'd' lists the tool 'echo' more than once; only the first is offered"
    assert server["tools"] == ["d_echo", "d_other"] and server["warnings"] == [problem]
    assert "lastError" not in server and problem in client.stderr.decode()
    assert fixed["tools"] == ["d_echo", "d_other"] and "warnings" not in fixed and "lastError" not in fixed


async def test_no_mcp_starts_none_of_the_configured_servers(agent_env, fake_llm, tmp_path):
    log = tmp_path / "server.log"
    write_mcp(agent_env, {"tools": stdio(env={"MCP_TEST_LOG": str(log)})})
    fake_llm.set_script([{"text": "no tools from MCP"}])
    async with await RpcClient.start(["--no-session", "--no-mcp"], cwd=str(tmp_path), env=agent_env) as client:
        await client.prompt_and_wait("which tools?")
        servers = (await client.send({"type": "get_mcp_servers"}))["data"]["servers"]
    assert servers == [] and not log.exists()
    assert not [name for name in offered(fake_llm.requests[0]) if name.startswith("tools_")]


@pytest.mark.real_process
@pytest.mark.parametrize("open_stream", [False, True])
async def test_an_http_server_that_dies_mid_call_is_reported_once_in_clear_words(open_stream, agent_env, fake_llm,
                                                                                 tmp_path):
    """One `failed` report per death, the clear one (not a second with the HTTP client's bare `ReadError`, which
    came when another call's answer stream was open; nor none, the server left `connected`, when none was); the
    next report is its restart."""
    import asyncio
    import socket

    port_file = tmp_path / "port"
    server = await asyncio.create_subprocess_exec(sys.executable, SDK_SERVER, "normal", "--http", str(port_file),
                                                  stderr=asyncio.subprocess.DEVNULL)
    port = await _listening(port_file, socket)
    write_mcp(agent_env, {"web": {"url": f"http://127.0.0.1:{port}/mcp"}})
    deaf = [{"tool_calls": [{"name": "web_deaf", "arguments": {}}]}] if open_stream else []
    # the call beside the crash never answers (`deaf`): a quick one could be answered before the server dies
    fake_llm.set_script([*deaf, {"tool_calls": [{"name": "web_crash", "arguments": {}},
                                                {"name": "web_deaf", "arguments": {}}]}, {"text": "done"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        await until_state(client, "web", "connected")
        if open_stream:
            await client.send({"type": "prompt", "message": "wait"})
            await client.wait_for("tool_execution_update")
            await client.send({"type": "abort"})  # the server goes on with the call: its answer stream stays open
            await client.wait_for("agent_settled")
        events = await client.prompt_and_wait("crash it", timeout=60)
        await server.wait()
        reports = [e for e in events if e["type"] == "mcp_server_changed" and e["name"] == "web"]
        while not reports or reports[-1]["state"] != "starting":
            reports.append(await until_state(client, "web", "failed", "starting", "connected"))
    assert [r["state"] for r in reports] == ["failed", "starting"], reports
    assert reports[0]["lastError"].startswith("the server closed the connection (http://127.0.0.1:"), reports[0]
    assert reports[0]["lastError"].endswith("; restarting in 1 s")
    ends = [e for e in events if e["type"] == "tool_execution_end"]
    assert len(ends) == 2 and all(e["isError"] and "MCP server web: the call of" in json.dumps(e) for e in ends)


async def test_a_call_of_a_crashed_servers_tool_says_which_server_and_that_it_restarts(agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"tools": stdio()})
    fake_llm.set_script([{"tool_calls": [{"name": "tools_crash", "arguments": {}}]},
                         {"tool_calls": [{"name": "tools_echo", "arguments": {"text": "again"}},
                                         {"name": "nosuch", "arguments": {}}]}, {"text": "ok"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        await client.prompt_and_wait("crash then call", timeout=60)
    crashed, later = tool_texts(fake_llm.requests[1])[0], tool_texts(fake_llm.requests[2])[1:]
    assert "MCP server tools: the call of crash failed: the server exited" in crashed
    assert later[0].startswith("Tool tools_echo is not available now: MCP server tools is "), later[0]
    assert "the server exited" in later[0] and later[0].endswith("Its tools come back when it is connected again")
    assert later[1] == "Tool nosuch not found"  # a name no server had: as before
