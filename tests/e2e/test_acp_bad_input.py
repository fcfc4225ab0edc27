"""End to end: what ACP mode does with bad input: malformed JSON-RPC, unknown methods, wrong params, and a
client that goes away mid-turn. Every answer is checked against the schema (tests/support/acp_client.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.acp_client import AcpClient, AcpReplyError


def answers(client: AcpClient) -> list[dict]:
    return [m for m in client.incoming() if "method" not in m]


async def test_malformed_lines_get_parse_and_invalid_request_errors_and_the_agent_goes_on(agent_env, project):
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    for line in (b"{not json\n", b"\xff\xfe\n", b"[1, 2]\n", b'{"jsonrpc": "1.0", "id": 5, "method": "initialize"}\n',
                 b'{"jsonrpc": "2.0", "id": {"x": 1}, "method": "initialize"}\n', b"\n"):
        client.send_raw(line)
    result = await client.initialize()
    assert result["protocolVersion"] == 1
    errors = [m["error"]["code"] for m in answers(client) if "error" in m]
    assert errors == [-32700, -32700, -32600, -32600, -32600]
    ids = [m["id"] for m in answers(client) if "error" in m]
    assert ids == [None, None, None, 5, None]  # an unusable id is never echoed
    assert await client.close() == 0


async def test_session_methods_before_initialize_are_refused(agent_env, project):
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    for method, params in (("session/new", {"cwd": str(project), "mcpServers": []}), ("session/list", {}),
                           ("authenticate", {"methodId": "fake"}),
                           ("session/load", {"sessionId": "x", "cwd": str(project), "mcpServers": []})):
        with pytest.raises(AcpReplyError) as refused:
            await client.request(method, params)
        assert refused.value.code == -32600 and "initialize first" in refused.value.message
    with pytest.raises(AcpReplyError) as unknown:
        await client.request("session/frobnicate", {}, checked=False)
    assert unknown.value.code == -32601  # an unknown method is still unknown
    await client.initialize()
    assert (await client.request("session/list", {}))["sessions"] == []
    assert await client.close() == 0


async def test_unknown_methods_and_wrong_params_are_answered_with_their_codes(agent_env, project):
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    await client.initialize()
    cases = [
        ("session/frobnicate", {}, -32601),
        ("initialize", {"protocolVersion": "one"}, -32602),
        ("session/new", {"cwd": "relative/dir", "mcpServers": []}, -32602),
        ("session/new", {"cwd": str(project / "missing"), "mcpServers": []}, -32602),
        ("session/new", {"cwd": str(project), "mcpServers": [{"name": "x", "type": "sse", "url": "http://h",
                                                             "headers": []}]}, -32602),
        ("session/list", {"cursor": "bogus"}, -32602),
        ("session/list", {"cursor": "٣"}, -32602),  # ASCII digits only, as nextCursor gives them
        ("session/prompt", {"sessionId": 5, "prompt": []}, -32602),  # it said "Unknown session: 5" (round 32)
        ("session/set_mode", {"modeId": "ask"}, -32602),
        ("session/prompt", {"sessionId": "no-such-session", "prompt": []}, -32002),
    ]
    for method, params, code in cases:
        client._ids += 1
        client.send_raw(json.dumps({"jsonrpc": "2.0", "id": client._ids, "method": method,
                                    "params": params}).encode() + b"\n")
    await client.wait_for(lambda: len(answers(client)) == 1 + len(cases))
    got = [m["error"]["code"] for m in answers(client)[1:]]
    assert got == [code for _, _, code in cases]
    session_id = await client.new_session(str(project))
    with pytest.raises(AcpReplyError) as caught:
        await client.request("session/prompt", {"sessionId": session_id, "prompt": "not a list"}, checked=False)
    assert caught.value.code == -32602
    with pytest.raises(AcpReplyError) as caught:
        await client.request("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text"}]}, checked=False)
    assert caught.value.code == -32602 and "prompt[0].text" in caught.value.message
    assert await client.close() == 0


async def test_stdin_eof_mid_turn_saves_the_turn_and_exits_0(agent_env, project, fake_llm):
    fake_llm.set_script([{"text": "partial answer here", "hang_after": 4}])
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    await client.initialize()
    session_id = await client.new_session(str(project))
    client.request_nowait("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]})
    await client.wait_for(lambda: client.updates(session_id, "agent_message_chunk"))
    assert await client.close(timeout=5) == 0
    [session_file] = Path(agent_env["AGENT_FORGE_DIR"], "sessions").rglob(f"*{session_id}.jsonl")
    entries = [json.loads(line) for line in session_file.read_text().splitlines()]
    messages = [e["message"] for e in entries if e.get("type") == "message"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[1]["stopReason"] == "aborted"
    assert not list(session_file.parent.glob("*.lock"))


@pytest.mark.real_process  # a signal
async def test_sigterm_mid_turn_saves_the_turn_and_exits_143(agent_env, project, fake_llm):
    import signal

    fake_llm.set_script([{"text": "partial answer here", "hang_after": 4}])
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    await client.initialize()
    session_id = await client.new_session(str(project))
    client.request_nowait("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]})
    await client.wait_for(lambda: client.updates(session_id, "agent_message_chunk"))
    client.process.send_signal(signal.SIGTERM)
    assert await client.close(timeout=10) == 128 + signal.SIGTERM
    [session_file] = Path(agent_env["AGENT_FORGE_DIR"], "sessions").rglob(f"*{session_id}.jsonl")
    assert '"stopReason":"aborted"' in session_file.read_text().replace(" ", "")
    assert not list(session_file.parent.glob("*.lock"))


async def test_the_acp_alias_and_its_usage_error(agent_env, project):
    import asyncio
    import sys

    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agent_forge", "acp", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, cwd=str(project), env=agent_env)
    out, _ = await proc.communicate(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n')
    assert json.loads(out.splitlines()[0])["result"]["protocolVersion"] == 1 and proc.returncode == 0
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agent_forge", "--mode", "acp", "hello", stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=str(project), env=agent_env)
    out, err = await proc.communicate()
    assert (proc.returncode, out) == (2, b"")
    assert "--mode acp reads its prompts from the editor" in err.decode()


async def test_notifications_with_unusable_params_are_ignored_and_the_turn_goes_on(agent_env, project, fake_llm):
    """`session/cancel` with a list or object as its id once crashed the agent (unhashable type): a
    notification cannot be answered, so whatever its params hold it is ignored, and a real cancel still works."""
    fake_llm.set_script([{"text": "partial answer here", "hang_after": 4}])
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    await client.initialize()
    session_id = await client.new_session(str(project))
    client.request_nowait("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]})
    await client.wait_for(lambda: client.updates(session_id, "agent_message_chunk"))
    for bad in ([1], {"x": 1}, None, 7):
        client.send_raw(json.dumps({"jsonrpc": "2.0", "method": "session/cancel",
                                    "params": {"sessionId": bad}}).encode() + b"\n")
    client.send_raw(b'{"jsonrpc": "2.0", "method": "session/cancel", "params": [1]}\n')
    assert await client.request("session/list", {}) is not None  # still serving
    client.send_raw(json.dumps({"jsonrpc": "2.0", "method": "session/cancel",
                                "params": {"sessionId": session_id}}).encode() + b"\n")
    await client.wait_for(lambda: any(m.get("result", {}).get("stopReason") == "cancelled"
                                      for m in answers(client) if isinstance(m.get("result"), dict)))
    assert await client.close() == 0


@pytest.mark.real_process  # the agent's memory is read from /proc/<pid>
async def test_deep_params_a_cancel_request_and_an_oversized_line_get_clear_answers(agent_env, project):
    from agent_forge.modes.rpc.framing import MAX_COMMAND_BYTES

    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    await client.initialize()
    session_id = await client.new_session(str(project))
    client.send_raw(b'{"jsonrpc":"2.0","id":"deep","method":"session/list","params":' + b"[" * 5000 + b"]" * 5000
                    + b"}\n")
    client.send_raw(b'{"jsonrpc":"2.0","method":"session/cancel","params":' + b"[" * 5000 + b"]" * 5000 + b"}\n")
    client.send_raw(json.dumps({"jsonrpc": "2.0", "id": "c", "method": "session/cancel",
                                "params": {"sessionId": session_id}}).encode() + b"\n")  # a notification as a request
    [cancel] = await client.wait_for(lambda: [m for m in answers(client) if m.get("id") == "c"])
    assert cancel == {"jsonrpc": "2.0", "id": "c", "result": None}
    # the schema knows session/cancel only as a notification, so the observer calls this answer unknown
    client.problems[:] = [p for p in client.problems if "'id': 'c', 'result': None" not in p]
    [deep] = [m for m in answers(client) if m.get("id") == "deep"]
    assert deep["error"]["code"] == -32602 and "nested too deeply" in deep["error"]["message"]
    status = f"/proc/{client.process.pid}/status"
    before = _peak_kib(status)
    chunk = b"x" * (1 << 20)
    for _ in range(80):
        client.send_raw(chunk)
        await client.process.stdin.drain()
    client.send_raw(b"\n")
    assert (await client.request("session/list", {}, timeout=60))["sessions"] == []
    assert _peak_kib(status) - before < (MAX_COMMAND_BYTES >> 10) + 40_000  # the limit (plus slack), not the line
    [oversized] = [m for m in answers(client) if m.get("error", {}).get("code") == -32700]
    assert f"{80 << 20} bytes long" in oversized["error"]["message"] and oversized["id"] is None
    assert await client.close() == 0


def _peak_kib(status_path: str) -> int:
    for line in open(status_path):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM in " + status_path)


@pytest.mark.parametrize("server, problem", [
    ({"name": "e", "command": "", "args": [], "env": []}, "mcpServers[0] ('e'): command must be a non-empty string"),
    ({"name": "u", "type": "http", "url": "not a url", "headers": []},
     "mcpServers[0] ('u'): url must start with http:// or https://, got 'not a url'"),
    ({"name": "p", "type": "http", "url": "http://h:99999/mcp", "headers": []}, "mcpServers[0] ('p'): url "),
    ({"name": "v", "command": "x", "args": [], "env": {"A": "1"}},  # it said `env items need ...` (round 36)
     'mcpServers[0].env must be an array of {"name", "value"} objects'),
])
async def test_an_editor_server_with_a_bad_field_is_refused_naming_the_field(server, problem, agent_env, project):
    """As for an SSE server or a missing name: -32602 naming the field, no session, rather than a session whose
    server is skipped with only a line on stderr."""
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    await client.initialize()
    with pytest.raises(AcpReplyError) as refused:
        await client.request("session/new", {"cwd": str(project), "mcpServers": [server]}, checked=False)
    assert refused.value.code == -32602 and refused.value.message.startswith(f"Invalid params: {problem}")
    assert (await client.request("session/list", {}))["sessions"] == []
    assert await client.close() == 0


@pytest.mark.parametrize("flags, named", [(["--session", "abc"], "--session does"), (["-c"], "--continue does"),
                                          (["--fork", "abc", "--name", "n"], "--fork and --name do"),
                                          (["--session", "a", "--session-id", "b", "--name", "n"],
                                           "--session, --session-id and --name do"),
                                          (["--session-id", "abc"], "--session-id does")])
def test_flags_that_choose_the_session_are_a_usage_error_in_acp_mode(agent_env, project, flags, named):
    """They were ignored without a word: the editor chooses sessions (round 30)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "agent_forge", "--mode", "acp", *flags], cwd=project, env=agent_env,
                          input=b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n',
                          capture_output=True, timeout=60)
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr.decode() == (f"agent-forge: {named} not apply in ACP mode: the editor chooses the sessions "
                                    "(session/new, session/load)\n")


def test_resume_in_acp_mode_points_to_the_editor_not_to_flags_acp_mode_refuses(agent_env, project):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "agent_forge", "--mode", "acp", "-r"], cwd=project, env=agent_env,
                          input=b"", capture_output=True, timeout=60)
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr.decode() == ("agent-forge: -r/--resume opens the session selector of the terminal UI: run it "
                                    "in a terminal (in ACP mode the editor chooses the sessions: session/new, "
                                    "session/load)\n")
