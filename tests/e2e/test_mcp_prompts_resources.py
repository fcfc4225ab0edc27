"""End to end: MCP server prompts as `/mcp:<server>:<prompt>` commands (RPC `prompt`, `get_commands`, print
mode), the `read_mcp_resource` tool, what a stdio server inherits, its stderr, and the per-call time limit;
real servers (`tests/support/mcp_server.py`) against the loopback fake LLM."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

from agent_forge.modes.rpc.client import RpcClient

from .test_mcp import offered, stdio, tool_texts, until_state, write_mcp


def user_parts(request: dict) -> list[dict]:
    """The parts of the last user message of an OpenAI-completions request body."""
    content = [m for m in request["body"]["messages"] if m["role"] == "user"][-1]["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def user_text(request: dict) -> str:
    return "\n".join(p.get("text", "") for p in user_parts(request) if p.get("type") == "text")


async def test_server_prompts_are_commands_that_expand_with_their_arguments(agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"tools": stdio()})
    fake_llm.set_script([{"text": "one"}, {"text": "two"}, {"text": "three"}, {"text": "four"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        first = await client.send({"type": "prompt", "message": "/mcp:tools:review src/a.py focus=style"})
        await client.wait_for("agent_settled")  # it waited for the server to connect, then asked it
        commands = (await client.send({"type": "get_commands"}))["data"]["commands"]
        await client.prompt_and_wait('/mcp:tools:review "my file.py" naming and tests')
        await client.prompt_and_wait("/mcp:tools:pair")
        missing = await client.send({"type": "prompt", "message": "/mcp:tools:review"})
        unknown = await client.send({"type": "prompt", "message": "/mcp:tools:nope"})
        await client.prompt_and_wait("/mcp:other:x stays text")  # no such server: sent as typed
        steer = await client.send({"type": "steer", "message": "/mcp:tools:review a.py"})
    assert first["success"] and first["data"] == {"disposition": "started"}
    review = next(c for c in commands if c["name"] == "mcp:tools:review")
    assert review["source"] == "mcp" and review["description"] == "Review a file"
    assert review["argumentHint"] == "<path> [focus]" and review["sourceInfo"]["source"] == "mcp:tools"
    assert [a["name"] for a in review["arguments"]] == ["path", "focus"] and review["arguments"][0]["required"]
    assert user_text(fake_llm.requests[0]) == "Review src/a.py, looking for style."
    assert user_text(fake_llm.requests[1]) == "Review my file.py, looking for naming and tests."
    assert user_text(fake_llm.requests[2]) == "First, the question.\n\nThen, the answer."
    assert [p["type"] for p in user_parts(fake_llm.requests[2])].count("image_url") == 1
    assert not missing["success"] and "/mcp:tools:review needs path (arguments: path (required); focus)" \
        in missing["error"]
    assert not unknown["success"] and "has no prompt 'nope' (its prompts: review, pair)" in unknown["error"]
    assert user_text(fake_llm.requests[3]) == "/mcp:other:x stays text" and len(fake_llm.requests) == 4
    assert not steer["success"] and "cannot be sent with steer" in steer["error"]


async def test_a_prompt_of_a_server_that_cannot_start_is_refused_saying_why(agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"gone": {"command": str(tmp_path / "no-such-server")}})
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        reply = await client.send({"type": "prompt", "message": "/mcp:gone:anything"})
        state = await client.send({"type": "get_state"})
    assert not reply["success"] and "/mcp:gone:anything: MCP server gone is not connected (failed: cannot start" \
        in reply["error"]
    assert state["success"] and fake_llm.requests == []


def test_print_mode_runs_a_server_prompt_with_piped_text_after_it(agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"tools": stdio()})
    fake_llm.set_script([{"text": "reviewed"}])
    result = subprocess.run([sys.executable, "-m", "agent_forge", "--no-session", "-p", "/mcp:tools:review a.py"],
                            cwd=tmp_path, env=agent_env, input=b"for typos", capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().strip() == "reviewed"
    assert user_text(fake_llm.requests[0]) == "Review a.py, looking for for typos."
    refused = subprocess.run([sys.executable, "-m", "agent_forge", "--no-session", "-p", "/mcp:tools:review"],
                             cwd=tmp_path, env=agent_env, input=b"", capture_output=True, timeout=120)
    assert refused.returncode == 1 and b"/mcp:tools:review needs path" in refused.stderr
    assert len(fake_llm.requests) == 1


async def test_read_mcp_resource_reads_text_images_binary_and_templates_and_cuts_big_text(agent_env, fake_llm,
                                                                                         tmp_path):
    write_mcp(agent_env, {"tools": stdio(), "plain": stdio("twin", "only")})
    calls = [("file:///notes.txt",), ("file:///logo.png",), ("file:///data.bin",), ("note://cats",),
             ("file:///big.txt",), ("file:///missing.txt",)]
    fake_llm.set_script([{"tool_calls": [{"name": "read_mcp_resource", "arguments": {"server": "tools", "uri": u}}
                                         for (u,) in calls]
                          + [{"name": "read_mcp_resource", "arguments": {"server": "plain", "uri": "x://y"}}]},
                         {"text": "read"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        events = await client.prompt_and_wait("read them", timeout=60)
        servers = {s["name"]: s for s in (await client.send({"type": "get_mcp_servers"}))["data"]["servers"]}
    tool = next(t for t in fake_llm.requests[0]["body"]["tools"] if t["function"]["name"] == "read_mcp_resource")
    description = tool["function"]["description"]
    assert "- tools:" in description and "file:///notes.txt (notes, text/plain)" in description
    assert "template note://{topic}" in description and "- plain:" not in description
    assert tool["function"]["parameters"]["properties"]["server"]["enum"] == ["tools"]
    ids = [c["id"] for m in fake_llm.requests[1]["body"]["messages"] for c in m.get("tool_calls") or []]
    ends = sorted((e for e in events if e["type"] == "tool_execution_end"), key=lambda e: ids.index(e["toolCallId"]))
    texts = [" ".join(b.get("text", "") for b in e["result"]["content"]) for e in ends]
    assert texts[0] == "[Resource file:///notes.txt]\nthe notes"
    assert ends[1]["result"]["content"][0]["type"] == "image"
    assert "[Resource file:///data.bin: application/octet-stream, about 2.9KB, not shown]" in texts[2]
    assert texts[3] == "[Resource note://cats]\na note about cats"
    assert "[Showing the first" in texts[4] and len(texts[4].encode()) < 60_000
    assert ends[4]["result"]["details"]["fullOutputPath"].rsplit("/", 1)[1].startswith("mcp-tools-")
    assert ends[5]["isError"] and "MCP server tools: reading file:///missing.txt failed" in texts[5]
    assert ends[6]["isError"] and "No MCP server 'plain' offers resources" in texts[6]
    assert servers["tools"]["resources"] == 5 and "resources" not in servers["plain"]
    assert servers["tools"]["prompts"] == ["review", "pair"]
    assert len(tool_texts(fake_llm.requests[1])) == 7


async def test_no_read_mcp_resource_without_resources_and_the_allowlist_applies(agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"plain": stdio("twin", "only")})
    fake_llm.set_script([{"text": "one"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        await client.prompt_and_wait("which tools?")
    write_mcp(agent_env, {"tools": stdio()})
    fake_llm.set_script([{"text": "two"}])
    async with await RpcClient.start(["--no-session", "--exclude-tools", "read_mcp_resource"], cwd=str(tmp_path),
                                     env=agent_env) as client:
        await client.prompt_and_wait("which tools?")
    assert "plain_only" in offered(fake_llm.requests[0]) and "read_mcp_resource" not in offered(fake_llm.requests[0])
    assert "tools_echo" in offered(fake_llm.requests[1]) and "read_mcp_resource" not in offered(fake_llm.requests[1])


async def test_a_stdio_server_gets_a_safe_environment_and_its_env_entries(agent_env, fake_llm, tmp_path):
    env = {**agent_env, "SECRET_API_TOKEN": "hush", "LANG": "C.UTF-8"}
    write_mcp(env, {"tools": stdio(env={"GIVEN": "yes", "FROM_ENV": "${SECRET_API_TOKEN}"})})
    fake_llm.set_script([{"tool_calls": [{"name": "tools_environ", "arguments": {}}]}, {"text": "done"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=env) as client:
        await client.prompt_and_wait("show the environment")
    names = tool_texts(fake_llm.requests[1])[0].split()
    assert {"PATH", "HOME", "LANG", "GIVEN", "FROM_ENV"} <= set(names)
    assert "SECRET_API_TOKEN" not in names and "OPENAI_API_KEY" not in names and "AGENT_FORGE_DIR" not in names


async def test_a_chatty_server_that_exits_reports_the_tail_of_its_stderr(agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"chatty": stdio("chatty-exit")})
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        failed = await until_state(client, "chatty", "failed")
    assert "the last words" in failed["lastError"] and len(failed["lastError"]) < 3000


def test_print_mode_cancels_a_call_over_tool_timeout_ms_and_goes_on(agent_env, fake_llm, tmp_path):
    log = tmp_path / "server.log"
    write_mcp(agent_env, {"tools": stdio(env={"MCP_TEST_LOG": str(log)}, toolTimeoutMs=500)})
    fake_llm.set_script([{"tool_calls": [{"name": "tools_slow", "arguments": {"marker": "p1"}}]},
                         {"text": "gave up waiting"}])
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "agent_forge", "--no-session", "-p", "go slow"], cwd=tmp_path,
                            env=agent_env, input=b"", capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().strip() == "gave up waiting" and time.monotonic() - started < 60
    text = tool_texts(fake_llm.requests[1])[0]
    assert "MCP server tools: the call of slow did not end within 0.5 s (toolTimeoutMs); it was cancelled" in text
    assert "cancelled p1" in log.read_text()


async def test_the_system_prompt_lists_the_connected_servers(agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"tools": stdio(description="test tools"), "plain": stdio("twin", "only")})
    fake_llm.set_script([{"text": "hi"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        await client.prompt_and_wait("hello")
    system = json.dumps(fake_llm.requests[0]["body"]["messages"][0])
    assert "Connected MCP servers" in system and "- tools: test tools" in system
    assert "- plain" in system


async def test_a_prompt_waiting_for_its_server_is_long_get_state_and_abort_are_answered(agent_env, fake_llm,
                                                                                       tmp_path):
    write_mcp(agent_env, {"mute": stdio("hang-init", startupTimeoutMs=60000)})
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        pending = client.send_nowait({"type": "prompt", "message": "/mcp:mute:anything"})
        started = time.monotonic()
        state = await client.send({"type": "get_state"})
        aborted = await client.send({"type": "abort"})
        took = time.monotonic() - started
        refused = await asyncio.wait_for(pending, 5)
        servers = (await client.send({"type": "get_mcp_servers"}))["data"]["servers"]
    assert state["success"] and aborted["success"] and took < 1.0
    assert not refused["success"] and "Aborted while the MCP server's prompt was being fetched" in refused["error"]
    assert servers[0]["state"] == "starting" and fake_llm.requests == []


def test_json_mode_ctrl_c_during_a_hanging_call_ends_it_at_once(agent_env, fake_llm, tmp_path):
    import os
    import signal

    log = tmp_path / "server.log"
    write_mcp(agent_env, {"tools": stdio(env={"MCP_TEST_LOG": str(log)})})
    fake_llm.set_script([{"tool_calls": [{"name": "tools_slow", "arguments": {"marker": "c1"}}]}, {"text": "never"}])
    process = subprocess.Popen([sys.executable, "-m", "agent_forge", "--no-session", "--mode", "json", "go slow"],
                               cwd=tmp_path, env=agent_env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    try:
        for line in process.stdout:  # the server reported progress: the call is running there
            if json.loads(line).get("type") == "tool_execution_update":
                break
        started = time.monotonic()
        os.kill(process.pid, signal.SIGINT)
        code = process.wait(timeout=30)
        took = time.monotonic() - started
    finally:
        process.kill()
        process.communicate()
    assert code == 130 and took < 10 and "cancelled c1" in log.read_text()


async def test_prompt_names_listed_twice_or_with_spaces_are_offered_once_and_can_be_invoked(agent_env, fake_llm,
                                                                                            tmp_path):
    write_mcp(agent_env, {"p": stdio("prompts-twice")})
    fake_llm.set_script([{"text": "one"}, {"text": "two"}, {"text": "three"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        await client.prompt_and_wait("/mcp:p:dup")
        commands = (await client.send({"type": "get_commands"}))["data"]["commands"]
        await client.prompt_and_wait("/mcp:p:a_b hello")
        servers = (await client.send({"type": "get_mcp_servers"}))["data"]["servers"]
    names = [c["name"] for c in commands if c["source"] == "mcp"]
    assert names == ["mcp:p:dup", "mcp:p:a_b", "mcp:p:hang"]
    assert next(c for c in commands if c["name"] == "mcp:p:dup")["description"] == "The first dup"
    assert user_text(fake_llm.requests[0]) == "got dup {}"
    assert user_text(fake_llm.requests[1]) == 'got a b {"x": "hello"}'  # the server's own name is asked for
    assert servers[0]["prompts"] == ["dup", "a_b", "hang"]
    assert "MCP server 'p' lists the prompt 'dup' more than once; only the first is offered as /mcp:p:dup" \
        in servers[0]["warnings"]
    assert "MCP server 'p': the prompt 'a_b' would be /mcp:p:a_b, as is the prompt 'a b'; only that one is offered" \
        in servers[0]["warnings"]


async def test_stdin_eof_gives_a_hanging_prompt_fetch_plugin_handler_timeout(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"pluginHandlerTimeoutMs": 500})
    write_mcp(env, {"p": stdio("prompts-twice")})
    fake_llm.set_script([{"text": "one"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=env) as client:
        await client.prompt_and_wait("/mcp:p:dup")  # connected
        reply = client.send_nowait({"type": "prompt", "message": "/mcp:p:hang"})
        client.close_input()
        started = time.monotonic()
        answered = await asyncio.wait_for(reply, 20)
        code = await client.close(timeout=20)
        took = time.monotonic() - started
    assert code == 0 and took < 8  # not the 30 s a fetch may take while a client is there
    assert not answered["success"]
    assert "did not answer prompts/get 0.5 s after stdin closed (pluginHandlerTimeoutMs)" in answered["error"]
    assert len(fake_llm.requests) == 1


async def test_a_prompt_of_a_restarting_server_waits_for_it_to_connect_again(agent_env, fake_llm, tmp_path):
    # issue 13 (t12): sent while the crashed server waits out its 1 s backoff or starts again, the prompt failed
    # at once ("not connected (starting)"); it waits up to startupTimeoutMs, as for a server's first start
    write_mcp(agent_env, {"tools": stdio()})
    fake_llm.set_script([{"tool_calls": [{"name": "tools_crash", "arguments": {}}]}, {"text": "crashed"},
                         {"text": "reviewed"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        events = await client.prompt_and_wait("crash", timeout=60)
        reply = await client.send({"type": "prompt", "message": "/mcp:tools:review a.py"}, timeout=60)
        assert reply["success"], reply
        await client.wait_for("agent_settled", 60)
    assert any(e["type"] == "mcp_server_changed" and e["state"] == "failed" for e in events)
    assert user_text(fake_llm.requests[2]) == "Review a.py, looking for bugs."
