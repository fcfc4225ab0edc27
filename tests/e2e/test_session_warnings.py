"""End to end: a client learns that its session file was damaged. Damaged lines and a torn last line (a crash
mid-write) are `sessionWarnings` in the `switch_session` response and in `get_state`, in the words stderr
prints after `Warning: ` (docs/rpc.md, "Opening session files"; the real CLI, real files)."""

from __future__ import annotations

import json
from pathlib import Path

from agent_forge.modes.rpc.client import RpcClient
from e2e.test_cli_sessions import cli, write_session

TORN = b'{"type": "message", "id": "e00'  # a crash in the middle of a write


def damaged(tmp_path: Path, name: str = "s") -> Path:
    """Seven lines (header, model_change, q1, a1, q2, a2, q3), line 5 garbage, and a torn line 8 of 30 bytes."""
    path = write_session(tmp_path / name, f"aaaa0000-0000-4000-8000-00000000000{len(name)}",
                         ["q1", "a1", "q2", "a2", "q3"], mtime=1_000_000, cwd=str(tmp_path))
    lines = path.read_bytes().split(b"\n")
    lines[4] = b"not json"
    path.write_bytes(b"\n".join(lines) + TORN)  # the split's last item is empty: line 8 is the torn one
    return path


def expected(path: Path) -> list[dict]:
    return [{"kind": "damaged_lines", "path": str(path), "count": 1, "lines": [5],
             "message": f"session file {path}: skipped 1 damaged line ({path}:5); the entries after a skipped "
                        "line continue from the entry before it"},
            {"kind": "torn_line", "path": str(path), "count": 1, "lines": [8],
             "message": f"session file {path}: the last line ({path}:8, {len(TORN)} bytes) was cut off mid-write "
                        "(a crash?); it is left out and cut back before the next entry is written"}]


def stderr_lines(client: RpcClient) -> list[str]:
    return [line for line in client.stderr.decode().splitlines() if line.startswith("Warning: session file")]


async def test_a_resumed_damaged_file_is_named_in_get_state_and_on_stderr(agent_env, tmp_path):
    path = damaged(tmp_path)
    async with await RpcClient.start(["--session", str(path)], cwd=str(tmp_path), env=agent_env) as client:
        state = (await client.send({"type": "get_state"}))["data"]
        await client.send({"type": "new_session"})
        fresh = (await client.send({"type": "get_state"}))["data"]
    assert state["sessionWarnings"] == expected(path)
    assert stderr_lines(client) == [f"Warning: {w['message']}" for w in expected(path)]
    assert "sessionWarnings" not in fresh  # a session made in this process has read no file


async def test_switch_session_answers_what_the_file_lost(agent_env, tmp_path):
    path, intact = damaged(tmp_path), write_session(tmp_path / "ok", "bbbb0000-0000-4000-8000-000000000001",
                                                    ["q", "a"], mtime=1_000_000, cwd=str(tmp_path))
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        switched = await client.send({"type": "switch_session", "sessionPath": str(path)})
        state = (await client.send({"type": "get_state"}))["data"]
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
        clean = await client.send({"type": "switch_session", "sessionPath": str(intact)})
        after = (await client.send({"type": "get_state"}))["data"]
    assert switched["data"] == {"cancelled": False, "sessionWarnings": expected(path)}
    assert state["sessionWarnings"] == expected(path) and len(messages) == 4  # q2 (line 5) is lost
    assert clean["data"] == {"cancelled": False, "sessionWarnings": []} and "sessionWarnings" not in after
    assert stderr_lines(client) == [f"Warning: {w['message']}" for w in expected(path)]


def test_the_torn_line_is_cut_back_by_the_next_write_and_then_not_reported(agent_env, fake_llm, tmp_path):
    path = damaged(tmp_path)
    fake_llm.set_script([{"text": "one"}, {"text": "two"}])
    first = cli(agent_env, tmp_path, "--session", str(path), "-p", "more")
    second = cli(agent_env, tmp_path, "--session", str(path), "-p", "again")
    assert first.returncode == 0 and second.returncode == 0
    assert [f"Warning: {w['message']}" for w in expected(path)] == [
        line for line in first.stderr.decode().splitlines() if line.startswith("Warning: session file")]
    assert b"cut off mid-write" not in second.stderr and b"skipped 1 damaged line" in second.stderr
    lines = path.read_text().splitlines()
    assert lines[4] == "not json" and all(json.loads(line) for i, line in enumerate(lines) if i != 4)
