"""End to end: errors that name what was wrong. A NUL in a path field, a session's `.lock` file given as a
session, and a line that is not UTF-8 (whose id is still given back) over the real CLI's RPC mode."""

from __future__ import annotations

import re

import pytest

from agent_forge.modes.rpc.client import RpcClient

HOSTILE = "\u001b[2J\u202e\n"
SHOWN = "\\x1b[2J\\u202e\\n"
ECHOING = [  # (command, the error it must give, with the outside value escaped)
    ({"type": "set_model", "provider": "fake", "modelId": HOSTILE}, f"Model not found: fake/{SHOWN}"),
    ({"type": "set_model", "provider": HOSTILE, "modelId": "m"}, f"Model not found: {SHOWN}/m"),
    ({"type": "set_steering_mode", "mode": HOSTILE}, f"Invalid mode: {SHOWN}. Valid modes: all, one-at-a-time"),
    ({"type": "set_follow_up_mode", "mode": HOSTILE}, f"Invalid mode: {SHOWN}. Valid modes: all, one-at-a-time"),
    ({"type": "get_entries", "since": HOSTILE}, f"Entry not found: {SHOWN}"),
    ({"type": HOSTILE}, f"Unknown command: {SHOWN}"),
    ({"type": "bash", "command": "echo hi"}, "Cannot run the command: No such file or directory: /no/sh\\n-x"),
]


async def test_nul_in_a_path_field_is_a_field_error(agent_env, tmp_path):
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        switch = await client.send({"type": "switch_session", "sessionPath": "a\u0000b.jsonl"})
        export = await client.send({"type": "export_html", "outputPath": "x\u0000.html"})
    assert switch["error"] == "Field 'sessionPath' must not contain NUL characters"
    assert export["error"] == "Field 'outputPath' must not contain NUL characters"
    assert "Internal error" not in client.stderr.decode()


async def test_switch_session_to_a_lock_file_says_it_is_not_a_session_file(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "hi"}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        await client.prompt_and_wait("hello")
        session_file = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
        reply = await client.send({"type": "switch_session", "sessionPath": session_file + ".lock"})
        after = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    assert reply["success"] is False and reply["error"].startswith("not a session file: ")
    assert "lock file" in reply["error"] and "in use" not in reply["error"] and after == session_file


async def test_a_line_that_is_not_utf8_still_gets_its_id(agent_env, tmp_path):
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        client.write_raw(b'{"id":"u-1","type":"get_state","note":"\xff\xfe"}\n')
        client.write_raw(b'{"id":"u-\xff","type":"get_state"}\n')
        first, second = await client.next_event(), await client.next_event()
    assert first == {"type": "response", "command": "parse", "success": False, "id": "u-1",
                     "error": "Failed to parse command: invalid UTF-8 at byte 39"}
    assert "id" not in second and second["error"].startswith("Failed to parse command: invalid UTF-8")


@pytest.mark.parametrize("command, error", ECHOING, ids=[c["type"] if c["type"].isidentifier() else "type" for c, _ in ECHOING])
async def test_an_error_naming_an_outside_value_shows_it_escaped(command, error, agent_env_factory, tmp_path):
    env = agent_env_factory(settings={"shellPath": "/no/sh\n-x"})
    async with await RpcClient.start([], cwd=str(tmp_path), env=env) as client:
        reply = await client.send(command)
    assert reply["success"] is False and reply["error"].startswith(error)
    assert not re.search("[\x00-\x1f\u202e]", reply["error"])
