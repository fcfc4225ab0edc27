"""End to end: a session file truncated or appended to in place by another process while the agent runs
(`truncate -s 0`, logrotate's copytruncate, `echo -n >>`) is noticed at the next append and written again
whole, so resuming it gives every message the client saw (issue 10)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient


def _truncate_to(size: int):
    def change(path: Path) -> None:
        with open(path, "r+b") as handle:
            handle.truncate(size)
    return change


def _overwrite_same_size(garbage: bool):
    """Overwrite the file in place, its size unchanged: with garbage of the same length, or (`garbage` False)
    only its first bytes, far from its end, by a program that wrote it a second after the agent did (the
    modification time then shows it: the last page is as the agent left it)."""
    def change(path: Path) -> None:
        size, before = path.stat().st_size, path.stat().st_mtime_ns
        with open(path, "r+b") as handle:
            handle.write(bytes(i % 251 for i in range(size)) if garbage else b'{"type":"sessio!"')
        if not garbage:
            assert size > 2 * 4096  # the change is outside the last page
            os.utime(path, ns=(before + 10**9, before + 10**9))
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
    "same-size garbage": (_overwrite_same_size(True), "overwritten in place by another process (same size, ", None),
    "same-size edit far from the end": (_overwrite_same_size(False),
                                        "overwritten in place by another process (same size, ", None),
}
LONG_PROMPT = "first " + "x" * 9000  # a file of more than two pages


async def _run_with_change(env, fake_llm, cwd, change, args=()) -> tuple[RpcClient, Path, list[dict]]:
    """Prompt, `change(session file)`, prompt again; returns the client, the path and every message the client
    saw in a `message_end`."""
    fake_llm.set_script([{"text": "answer 1"}, {"text": "answer 2"}])
    async with await RpcClient.start(list(args), cwd=str(cwd), env=env) as client:
        await client.prompt_and_wait(LONG_PROMPT)
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
    if name.startswith("same-size"):
        assert errors[0]["error"].endswith(f"(what was there is kept as {backup})")
        assert backup.read_bytes().startswith(b"\x00\x01\x02" if name == "same-size garbage" else b'{"type":"sessio!"')


async def test_every_change_gets_a_backup_of_its_own(agent_env, fake_llm, tmp_path):
    """Backups are numbered (`.changed.bak`, `.changed.1.bak`, ...): none overwrites an earlier one, not even
    one left by an earlier run."""
    fake_llm.set_script([{"text": f"answer {n}"} for n in range(1, 4)])
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        await client.prompt_and_wait("first")
        path = Path((await client.send({"type": "get_state"}))["data"]["sessionFile"])
        path.with_name(path.name + ".changed.bak").write_bytes(b"an earlier run's backup\n")
        for second in (b"change one\n", b"change two\n"):
            _append(second)(path)
            await client.prompt_and_wait("next")
    names = [path.name + suffix for suffix in (".changed.bak", ".changed.1.bak", ".changed.2.bak")]
    assert [path.with_name(name).read_bytes()[-11:] for name in names] == [
        b"n's backup\n", b"change one\n", b"change two\n"]
    errors = [r["error"] for r in client.records if r.get("type") == "session_write_error"]
    assert [e.endswith(f"kept as {path.with_name(name)})") for e, name in zip(errors, names[1:])] == [True, True]


NO_HEADER = {
    "garbage": (bytes(i % 251 for i in range(3000)), "line 1 is not a JSON object, nor is any later line"),
    "no object": (b"\n  \nnot json\n[1, 2]\n", "line 3 is not a JSON object, nor is any later line"),
    "an entry first": (b"\n\n" + json.dumps({"type": "message", "id": "a"}).encode() + b"\n",
                       "line 3, its first JSON object, is not a session header"),
}


@pytest.mark.parametrize("name", list(NO_HEADER))
def test_resuming_a_file_with_no_header_names_the_file_and_line(tmp_path, agent_env, name):
    content, why = NO_HEADER[name]
    path = tmp_path / "garbage.jsonl"
    path.write_bytes(content)
    result = subprocess.run([sys.executable, "-m", "agent_forge", "-p", "hi", "--session", str(path)],
                            capture_output=True, env=agent_env, cwd=tmp_path, timeout=60)
    assert result.returncode == 1, result.stderr
    assert result.stderr.decode() == f"agent-forge: session file {path}: it has no valid session header ({why})\n"
    assert path.read_bytes() == content  # left as it was
