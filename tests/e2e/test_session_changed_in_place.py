"""End to end: a session file truncated or appended to in place by another process while the agent runs
(`truncate -s 0`, logrotate's copytruncate, `echo -n >>`) is noticed at the next append and written again
whole, so resuming it gives every message the client saw (issue 10)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient


def _truncate_to(size: int):
    def change(path: Path) -> None:
        with open(path, "r+b") as handle:
            handle.truncate(size)
    return change


def _append(data: bytes):
    def change(path: Path) -> None:
        with open(path, "ab") as handle:
            handle.write(data)
    return change


FOREIGN_LINE = b'{"type":"custom","id":"f00d","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}\n'
CHANGES = {
    "truncated to 0": (_truncate_to(0), "truncated to 0 of ", b""),
    "truncated to 10": (_truncate_to(10), "truncated to 10 of ", None),
    "junk without LF": (_append(b"stray bytes, no newline"), "appended to by another process (23 bytes)", None),
    "a foreign line": (_append(FOREIGN_LINE), f"appended to by another process ({len(FOREIGN_LINE)} bytes)", None),
}


async def _run_with_change(env, fake_llm, cwd, change, args=()) -> tuple[RpcClient, Path, list[dict]]:
    """Prompt, `change(session file)`, prompt again; returns the client, the path and every message the client
    saw in a `message_end`."""
    fake_llm.set_script([{"text": "answer 1"}, {"text": "answer 2"}])
    async with await RpcClient.start(list(args), cwd=str(cwd), env=env) as client:
        await client.prompt_and_wait("first")
        path = Path((await client.send({"type": "get_state"}))["data"]["sessionFile"])
        change(path)
        await client.prompt_and_wait("second")
    streamed = [r["message"] for r in client.records if r.get("type") == "message_end"]
    return client, path, streamed


async def _resumed_messages(env, cwd, path: Path) -> list[dict]:
    async with await RpcClient.start(["--session", str(path)], cwd=str(cwd), env=env) as client:
        return (await client.send({"type": "get_messages"}))["data"]["messages"]


@pytest.mark.parametrize("name", list(CHANGES))
async def test_a_session_file_changed_in_place_loses_no_streamed_message(agent_env, fake_llm, tmp_path, name):
    change, how, kept = CHANGES[name]
    client, path, streamed = await _run_with_change(agent_env, fake_llm, tmp_path, change)
    errors = [r for r in client.records if r.get("type") == "session_write_error"]
    assert len(errors) == 1 and errors[0]["error"].startswith(f"the session file was {how}")
    assert any(r.get("type") == "session_write_resumed" for r in client.records)
    assert [m["role"] for m in streamed] == ["user", "assistant"] * 2
    assert await _resumed_messages(agent_env, tmp_path, path) == streamed
    assert json.loads(path.read_bytes().splitlines()[0])["type"] == "session"
    backup = path.with_name(path.name + ".changed.bak")
    assert backup.exists() == (kept is None)  # the foreign bytes are kept; an emptied file has none
    if name in ("junk without LF", "a foreign line"):
        assert backup.read_bytes().endswith(FOREIGN_LINE if name == "a foreign line" else b"no newline")


async def test_a_resumed_file_changed_before_its_first_append_is_written_again(agent_env, fake_llm, tmp_path):
    _, path, streamed = await _run_with_change(agent_env, fake_llm, tmp_path, lambda path: None)
    fake_llm.set_script([{"text": "answer 3"}])
    async with await RpcClient.start(["--session", str(path)], cwd=str(tmp_path), env=agent_env) as client:
        assert (await client.send({"type": "get_state"}))["success"]  # the agent has read the file
        _truncate_to(0)(path)  # ... and not yet appended to it
        await client.prompt_and_wait("third")
    streamed += [r["message"] for r in client.records if r.get("type") == "message_end"]
    assert any(r.get("type") == "session_write_resumed" for r in client.records)
    assert await _resumed_messages(agent_env, tmp_path, path) == streamed
    assert len(streamed) == 6


async def test_an_unchanged_file_gets_no_write_event(agent_env, fake_llm, tmp_path):
    client, path, streamed = await _run_with_change(agent_env, fake_llm, tmp_path, lambda path: None)
    assert not [r for r in client.records if r.get("type", "").startswith("session_write")]
    assert not path.with_name(path.name + ".changed.bak").exists()
    assert await _resumed_messages(agent_env, tmp_path, path) == streamed
