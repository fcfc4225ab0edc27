"""End to end: the agent's own stdio transport against a hand-written server (`tests/support/mcp_raw_server.py`,
no SDK, quick to start) through the real CLI in RPC mode: a 40 MB message is read (in linear time) and cut like
`bash` output; a line over the 64 MiB cap fails the server (reported, tools withdrawn, restarted) without the rest
of it being read; a burst of `tools/list_changed` costs at most two
listings and ends with the right tool set."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient

from support.doubles import running

from .test_mcp import offered, tool_texts, until_state, write_mcp

RAW = str(Path(__file__).resolve().parents[1] / "support" / "mcp_raw_server.py")
TOO_LONG = "the server wrote a message (one line of its output) longer than 64 MiB"


def raw(mode: str = "serve", *extra: str, **fields) -> dict:
    return {"command": sys.executable, "args": [RAW, mode, *extra], **fields}


def pids(log: Path) -> list[int]:
    return [int(line.split()[1]) for line in log.read_text().splitlines() if line.startswith("pid ")]


def peak_memory_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return int(next(line for line in status if line.startswith("VmHWM:")).split()[1])


@pytest.mark.real_process  # the agent's own peak memory
async def test_a_40_mb_result_is_read_and_cut_a_longer_line_fails_the_server_which_is_restarted(agent_env, fake_llm,
                                                                                               tmp_path):
    log = tmp_path / "server.log"
    write_mcp(agent_env, {"s": raw(env={"MCP_TEST_LOG": str(log)})})
    fake_llm.set_script([{"tool_calls": [{"name": "s_long", "arguments": {}}]},
                         {"tool_calls": [{"name": "s_toolong", "arguments": {}}]}, {"text": "it failed"},
                         {"tool_calls": [{"name": "s_fine", "arguments": {}}]}, {"text": "done"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        await until_state(client, "s", "connected")
        events = await client.prompt_and_wait("print long lines", timeout=90)
        state = await client.send({"type": "get_state"})  # the agent answers at once
        await until_state(client, "s", "connected")  # restarted after 1 s
        second = await client.prompt_and_wait("and now a short one", timeout=60)
        peak = peak_memory_kb(client.process.pid)
    ends = {e["toolName"]: e for e in events if e["type"] == "tool_execution_end"}
    long = ends["s_long"]["result"]
    assert ends["s_long"]["isError"] is False and long["details"]["truncation"]["totalBytes"] == 40 << 20
    text = long["content"][0]["text"]
    assert len(text) < 60_000 and "[Line 1 is longer than 50KB; only its first 50KB are shown (1 line, 40MB in all)." \
        in text, text[-300:]  # it said "the first 1 lines (50KB) of 1 lines" (round 34)
    failed = next(e for e in events if e["type"] == "mcp_server_changed" and e["state"] == "failed")
    toolong = json.dumps(ends["s_toolong"])
    assert ends["s_toolong"]["isError"] is True and f"MCP server s: the call of toolong failed: {TOO_LONG}" in toolong
    assert failed["tools"] == [] and failed["lastError"].startswith(TOO_LONG)
    assert failed["lastError"].endswith("; restarting in 1 s") and "the rest of it was not read" in failed["lastError"]
    assert not [name for name in offered(fake_llm.requests[2]) if name.startswith("s_")]  # withdrawn at once
    assert state["success"] is True
    first, restarted = pids(log)
    assert not running(first) and first != restarted
    assert tool_texts(fake_llm.requests[4])[-1] == "called fine"
    assert next(e for e in second if e["type"] == "tool_execution_end")["isError"] is False
    assert peak < 500_000, f"{peak} kB"  # 320 MB measured (the 40 MB result, its copies); the 100 MB line: capped


async def test_an_endless_line_fails_the_server_at_initialize_and_in_a_call_and_kills_it(agent_env, fake_llm,
                                                                                      tmp_path):
    log = tmp_path / "server.log"
    write_mcp(agent_env, {"init": raw("endless-init", env={"MCP_TEST_LOG": str(log)}), "call": raw()})
    fake_llm.set_script([{"tool_calls": [{"name": "call_endless", "arguments": {}}]}, {"text": "done"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        failed = await until_state(client, "init", "failed")
        events = await client.prompt_and_wait("never ends", timeout=60)
        servers = {s["name"]: s for s in (await client.send({"type": "get_mcp_servers"}))["data"]["servers"]}
    assert failed["lastError"].startswith(TOO_LONG) and failed["lastError"].endswith("; restarting in 1 s")
    assert not running(pids(log)[0])  # killed: it would have written for ever
    end = next(e for e in events if e["type"] == "tool_execution_end")
    assert end["isError"] is True and TOO_LONG in json.dumps(end)
    assert TOO_LONG in servers["call"]["lastError"]


async def test_a_burst_of_tools_list_changed_costs_at_most_two_listings_and_ends_with_the_new_tools(
        agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"s": raw()})
    fake_llm.set_script([{"tool_calls": [{"name": "s_burst", "arguments": {}}]}, {"text": "sent"},
                         {"tool_calls": [{"name": "s_count", "arguments": {}}]}, {"text": "counted"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        await until_state(client, "s", "connected")
        events = await client.prompt_and_wait("burst", timeout=60)
        changed = next((e for e in events if _lists(e, "s_extra")), None) or await _until_tools(client, "s_extra")
        await client.prompt_and_wait("count", timeout=60)
    assert "s_extra" in changed["tools"] and "s_extra" in offered(fake_llm.requests[2])
    lists = int(tool_texts(fake_llm.requests[3])[-1].split()[1])
    assert 2 <= lists <= 3, lists  # the first listing at connection, then one or two for the 3000 announcements


def _lists(event: dict, tool: str) -> bool:
    return event["type"] == "mcp_server_changed" and tool in event.get("tools", [])


async def _until_tools(client: RpcClient, tool: str) -> dict:
    while not _lists(event := await client.next_event(), tool):
        pass
    return event


async def test_http_answers_have_the_same_cap_and_one_over_it_fails_only_that_call(agent_env, fake_llm, tmp_path):
    """The SDK's own cap on a server-sent event (1 MiB) made a 3 MB result fail; a JSON response had none."""
    import asyncio

    from .test_mcp import SDK_SERVER as SERVER, _listening

    servers = {}
    for name, extra in (("sse", ()), ("json", ("--json",))):
        port_file = tmp_path / f"{name}.port"
        servers[name] = (await asyncio.create_subprocess_exec(
            sys.executable, SERVER, "normal", "--http", str(port_file), *extra, stderr=asyncio.subprocess.DEVNULL),
            port_file)
    try:
        urls = {name: f"http://127.0.0.1:{await _listening(port_file, __import__('socket'))}/mcp"
                for name, (_, port_file) in servers.items()}
        write_mcp(agent_env, {name: {"url": url} for name, url in urls.items()})
        calls = [{"name": name, "arguments": {"size": size}} for name, size in (
            ("sse_huge", 3_000_000), ("json_huge", 3_000_000), ("json_huge", 34_000_000))]  # 34 MB: 69 MB sent
        fake_llm.set_script([{"tool_calls": calls}, {"tool_calls": [{"name": "json_echo", "arguments": {
            "text": "still here"}}]}, {"text": "done"}])
        async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
            events = await client.prompt_and_wait("huge over http", timeout=120)
    finally:
        for process, _ in servers.values():
            process.kill()
            await process.wait()
    args = {e["toolCallId"]: e["args"] for e in events if e["type"] == "tool_execution_start"}
    ends = {(e["toolName"], args[e["toolCallId"]]["size"] if "size" in args[e["toolCallId"]] else 0): e
            for e in events if e["type"] == "tool_execution_end"}
    for name in ("sse", "json"):
        small = ends[(f"{name}_huge", 3_000_000)]
        assert small["isError"] is False and small["result"]["details"]["truncation"]["totalBytes"] == 3_000_000
    big = json.dumps(ends[("json_huge", 34_000_000)])
    assert ends[("json_huge", 34_000_000)]["isError"] is True
    assert "the server's answer is longer than 64 MiB" in big and "the rest of it was not read" in big
    assert tool_texts(fake_llm.requests[2])[-1] == "echo: still here"  # the server stayed connected


async def test_twenty_thousand_lines_that_are_not_json_rpc_are_reported_in_a_few_events_with_their_count(
        agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"s": raw("garbage", "20000")})
    fake_llm.set_script([{"tool_calls": [{"name": "s_fine", "arguments": {}}]}, {"text": "done"}])
    events = []
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        counted = connected = False  # under load the burst's last report can come before the handshake ends
        while not (counted and connected):
            events.append(event := await client.next_event())  # the last report follows the burst within a second
            if event["type"] == "mcp_server_changed":
                counted |= "(20,000 lines skipped so far)" in event.get("lastError", "")
                connected |= event["state"] == "connected"
        run = await client.prompt_and_wait("still works?", timeout=60)
    reports = [e for e in events if e["type"] == "mcp_server_changed" and "not JSON-RPC" in e.get("lastError", "")]
    assert 1 <= len(reports) < 20, len(reports)  # one event per line before
    assert reports[0]["lastError"].startswith("the server wrote something that is not JSON-RPC: 'this is not JSON")
    assert tool_texts(fake_llm.requests[1])[-1] == "called fine"
    assert next(e for e in run if e["type"] == "tool_execution_end")["isError"] is False


async def test_twenty_thousand_log_messages_before_an_answer_are_dropped_and_the_call_answers(agent_env, fake_llm,
                                                                                            tmp_path):
    write_mcp(agent_env, {"s": raw("log-flood", "20000")})
    fake_llm.set_script([{"tool_calls": [{"name": "s_fine", "arguments": {}}]}, {"text": "done"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        run = await client.prompt_and_wait("log a lot", timeout=60)
        servers = (await client.send({"type": "get_mcp_servers"}))["data"]["servers"]
    assert next(e for e in run if e["type"] == "tool_execution_end")["isError"] is False
    assert tool_texts(fake_llm.requests[1])[-1] == "called fine"
    assert servers[0]["state"] == "connected" and not servers[0].get("lastError")


async def test_http_servers_whose_answers_are_wrong_fail_saying_how_and_an_endless_body_is_cut_off(agent_env,
                                                                                                 tmp_path):
    import subprocess

    async with raw_http_server(tmp_path) as port:
        # `stray` never answers: its timeout is what the test waits for, so it is short; the others fail on
        # their answer (64 MiB for `huge`) long before theirs
        write_mcp(agent_env, {name: {"url": f"http://127.0.0.1:{port}/{name}",
                                     "startupTimeoutMs": 1000 if name == "stray" else 30000}
                              for name in ("html", "garbage", "stray", "huge")})
        listed = subprocess.run([sys.executable, "-m", "agent_forge", "mcp", "list"], cwd=tmp_path, env=agent_env,
                                capture_output=True, text=True, timeout=60)
    rows = {line.split()[0]: line for line in listed.stdout.splitlines()[1:]}
    assert "failed" in rows["html"] and "Unexpected content type: text/html" in rows["html"]
    assert "failed" in rows["garbage"] and "Failed to parse JSON response" in rows["garbage"]
    assert "failed" in rows["stray"] and "no answer to initialize within 1 s" in rows["stray"]  # its answer: ignored
    assert "failed" in rows["huge"] and "the server's answer is longer than 64 MiB" in rows["huge"]
    assert f"(http://127.0.0.1:{port}/huge)" in rows["huge"] and "Traceback" not in listed.stderr


async def test_lone_surrogates_become_replacement_characters_and_an_unreadable_answer_fails_its_call_at_once(
        agent_env, fake_llm, tmp_path):
    """A `\\ud800` escape without its other half (valid JSON, what `json.dumps` writes for a string cut inside a
    surrogate pair) made the whole message "not JSON-RPC": the answer was lost and the call waited for ever."""
    import subprocess

    write_mcp(agent_env, {"s": raw("lone")})
    listed = subprocess.run([sys.executable, "-m", "agent_forge", "mcp", "list"], cwd=tmp_path, env=agent_env,
                            capture_output=True, text=True, timeout=60)
    calls = [{"name": f"s_{name}", "arguments": {}} for name in ("lone", "broken", "shape")]
    fake_llm.set_script([{"tool_calls": calls}, {"text": "done"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        events = await client.prompt_and_wait("surrogates", timeout=60)
    row = next(line.split() for line in listed.stdout.splitlines() if line.startswith("s "))
    assert listed.returncode == 0 and row[3:5] == ["connected", "9"], (listed.stdout, listed.stderr)
    tools = {t["function"]["name"]: t["function"] for t in fake_llm.requests[0]["body"]["tools"]}
    assert tools["s_lone"]["description"] == "lone \ufffd cut"
    ends = {e["toolName"]: e for e in events if e["type"] == "tool_execution_end"}
    assert ends["s_lone"]["isError"] is False and ends["s_lone"]["result"]["content"][0]["text"] == "lone \ufffd here"
    broken, shape = (ends[f"s_{name}"]["result"]["content"][0]["text"] for name in ("broken", "shape"))
    assert ends["s_broken"]["isError"] is True and broken.startswith(
        "MCP server s: the call of broken failed: the server's answer could not be read (Invalid JSON: invalid escape")
    assert "'{\"jsonrpc\": \"2.0\", \"id\": " in broken  # the line, quoted
    assert ends["s_shape"]["isError"] is True and "the server's answer could not be read (not JSON-RPC: " \
        "JSONRPCResponse.result: Input should be an object)" in shape
    assert tool_texts(fake_llm.requests[1]) == ["lone \ufffd here", broken, shape]


async def test_lone_surrogates_over_http_become_replacement_characters_in_json_and_sse_answers(agent_env, fake_llm,
                                                                                             tmp_path):
    """The SDK's HTTP client failed every such answer (`Failed to parse JSON response: Invalid JSON: unexpected end
    of hex escape`): the server could not even connect."""
    async with raw_http_server(tmp_path) as port:
        write_mcp(agent_env, {"json": {"url": f"http://127.0.0.1:{port}/lone"},
                              "sse": {"url": f"http://127.0.0.1:{port}/lone-sse"}})
        fake_llm.set_script([{"tool_calls": [{"name": "json_lone", "arguments": {}},
                                             {"name": "sse_lone", "arguments": {}}]}, {"text": "done"}])
        async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
            events = await client.prompt_and_wait("surrogates over http", timeout=60)
    tools = {t["function"]["name"]: t["function"] for t in fake_llm.requests[0]["body"].get("tools", [])}
    assert tools["json_lone"]["description"] == tools["sse_lone"]["description"] == "lone \ufffd cut", tools
    ends = [e for e in events if e["type"] == "tool_execution_end"]
    assert [(e["isError"], e["result"]["content"][0]["text"]) for e in ends] == [(False, "lone \ufffd here")] * 2


async def test_http_error_statuses_are_named_and_401_says_what_to_configure(agent_env, tmp_path):
    """The SDK's client said `Server returned an error response` whatever the status, 401 included."""
    import subprocess

    async with raw_http_server(tmp_path) as port:
        write_mcp(agent_env, {f"s{code}": {"url": f"http://127.0.0.1:{port}/{code}"} for code in (401, 403, 500)})
        listed = subprocess.run([sys.executable, "-m", "agent_forge", "mcp", "list"], cwd=tmp_path, env=agent_env,
                                capture_output=True, text=True, timeout=60)
    rows = {line.split()[0]: line for line in listed.stdout.splitlines()[1:]}
    assert listed.returncode == 1 and "Server returned an error response" not in listed.stdout, listed.stdout
    assert "failed" in rows["s401"] and 'HTTP 401 Unauthorized: the server needs authentication (WWW-Authenticate: ' \
        'Bearer realm="mcp"); give its credentials in the entry\'s "headers" in mcp.json, e.g. "headers": ' \
        '{"Authorization": "Bearer ${TOKEN}"} (OAuth is not supported)' in rows["s401"]
    assert "HTTP 403 Forbidden: the server refused the credentials sent" in rows["s403"]
    assert f"HTTP 500 Internal Server Error (http://127.0.0.1:{port}/500)" in rows["s500"]


async def test_http_statuses_the_server_repeats_fail_at_once_and_only_5xx_is_retried(agent_env, tmp_path):
    """A 401 (or 403, 404, 405) was retried after 1, 2, 4 ... 60 s for ever, as if the server could change its
    mind: one request, a failure that says what to configure, no restart; a 500 is still retried."""
    lasting = (401, 403, 404, 405)
    async with raw_http_server(tmp_path) as port:
        write_mcp(agent_env, {f"s{code}": {"url": f"http://127.0.0.1:{port}/{code}"} for code in (*lasting, 500)})
        async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
            failed = await failures_until_retried(client, "s500", [f"s{code}" for code in lasting])
        requests = (tmp_path / "port.requests").read_text().splitlines()
    assert requests.count("POST /500 initialize") >= 2  # retried: the other servers had the same time to be
    for code in lasting:
        assert requests.count(f"POST /{code} initialize") == 1, requests
        [error] = failed[f"s{code}"]
        assert error.startswith(f"HTTP {code} ") and error.endswith(
            f"(http://127.0.0.1:{port}/{code}); not restarted (the server gives this answer until its entry in "
            "mcp.json changes)"), error
    assert 'the server needs authentication (WWW-Authenticate: Bearer realm="mcp"); give its credentials in the ' \
        'entry\'s "headers" in mcp.json' in failed["s401"][0]
    assert "the server refused the credentials sent, or needs others" in failed["s403"][0]
    assert failed["s500"][0].endswith("; restarting in 1 s")


async def failures_until_retried(client: RpcClient, retried: str, others: list[str]) -> dict[str, list[str]]:
    """The `lastError` of each `failed` event, by server, once `retried` failed a second time (after its first
    restart) and each of `others` failed."""
    failed: dict[str, list[str]] = {}
    while len(failed.get(retried, [])) < 2 or not all(name in failed for name in others):
        event = await client.next_event(timeout=30)
        if event["type"] == "mcp_server_changed" and event["state"] == "failed":
            failed.setdefault(event["name"], []).append(event["lastError"])
    return failed


@contextlib.asynccontextmanager
async def raw_http_server(tmp_path):
    """`tests/support/mcp_raw_http_server.py` running on a loopback port (yielded); killed on the way out."""
    import asyncio
    import socket

    from .test_mcp import _listening

    port_file = tmp_path / "port"
    script = str(Path(__file__).resolve().parents[1] / "support" / "mcp_raw_http_server.py")
    server = await asyncio.create_subprocess_exec(sys.executable, script, str(port_file))
    try:
        yield await _listening(port_file, socket)
    finally:
        server.kill()
        await server.wait()
