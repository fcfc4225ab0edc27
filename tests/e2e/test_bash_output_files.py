"""End to end: full bash output files belong to their session (`coding/tools/output_files.py`): they live in
`<TMPDIR>/agent-forge-<uid>/bash-output/<session id>/`, outlive the process while the session file exists, go
when the session is deleted or was `--no-session`, and are pruned after the age limit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from e2e.test_full_disk import fill, mounted_tmpfs

from agent_forge.modes.rpc.client import RpcClient

BIG = "seq 1 100000"  # over the 2000-line limit: the full output goes to a file
DAY = 24 * 3600


def isolated(env: dict, tmp_path: Path) -> tuple[dict, Path]:
    """`env` with its own temp dir; returns it and the outputs root the agent will use."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    return {**env, "TMPDIR": str(temp)}, temp / f"agent-forge-{os.getuid()}" / "bash-output"


async def big_bash(client: RpcClient) -> Path:
    """Run a user bash command with long output; its response also proves the start-up prune has finished
    (the first output file waits for it)."""
    response = await client.send({"type": "bash", "command": BIG})
    assert response["success"] and response["data"]["truncated"], response
    return Path(response["data"]["fullOutputPath"])


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def plant(root: Path, name: str, *, session_file: str | None, age_days: float = 0) -> Path:
    directory = root / name
    root.parent.mkdir(mode=0o700, exist_ok=True)  # as the agent makes it: private (one open to others is refused)
    directory.mkdir(parents=True)
    (directory / "bash-old.log").write_text("old output\n")
    (directory / "owner.json").write_text(json.dumps({"sessionFile": session_file, "pid": dead_pid()}))
    stamp = time.time() - age_days * DAY
    for path in (*directory.iterdir(), directory):
        os.utime(path, (stamp, stamp))
    return directory


@pytest.mark.real_process  # outputs of a live owner process are kept: the owner must exit
async def test_outputs_live_with_the_session_and_go_when_it_is_deleted(agent_env, fake_llm, tmp_path):
    env, root = isolated(agent_env, tmp_path)
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": BIG}}]}, {"text": "done"}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=env) as client:
        user_file = await big_bash(client)
        events = await client.prompt_and_wait("run it")
        state = (await client.send({"type": "get_state"}))["data"]
    tool_end = next(e for e in events if e["type"] == "tool_execution_end")
    tool_file = Path(tool_end["result"]["details"]["fullOutputPath"])
    session_dir = root / state["sessionId"]
    assert user_file.parent == session_dir and tool_file.parent == session_dir
    assert user_file.read_text() == "".join(f"{i}\n" for i in range(1, 100_001))
    owner = json.loads((session_dir / "owner.json").read_text())
    assert owner["sessionFile"] == state["sessionFile"]

    # resumed by a later process: still referenced, so kept
    async with await RpcClient.start(["--session", state["sessionFile"]], cwd=str(tmp_path), env=env) as client:
        assert (await big_bash(client)).parent == session_dir
    assert user_file.exists() and tool_file.exists()

    os.unlink(state["sessionFile"])  # the session is deleted: the next start-up removes its outputs
    async with await RpcClient.start([], cwd=str(tmp_path), env=env) as client:
        other = await big_bash(client)
    assert not session_dir.exists() and other.exists()


async def test_old_and_orphaned_outputs_are_pruned_at_start_up(agent_env, fake_llm, tmp_path):
    env, root = isolated(agent_env, tmp_path)
    kept_session = tmp_path / "kept.jsonl"
    kept_session.write_text("{}\n")
    old = plant(root, "old-session", session_file=str(kept_session), age_days=8)
    recent = plant(root, "recent-session", session_file=str(kept_session), age_days=6)
    orphan = plant(root, "no-session-run-that-was-killed", session_file=None)
    legacy_old = root.parent.parent / "agent-forge-bash-abc123.log"
    legacy_new = root.parent.parent / "agent-forge-bash-def456.log"
    for path, age in ((legacy_old, 8), (legacy_new, 1)):
        path.write_text("output of an older version\n")
        os.utime(path, (time.time() - age * DAY,) * 2)
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=env) as client:
        state = (await client.send({"type": "get_state"}))["data"]
        assert state["sessionFile"] is None
        await big_bash(client)
    assert not old.exists() and not orphan.exists() and not legacy_old.exists()
    assert (recent / "bash-old.log").exists() and legacy_new.exists()


async def test_no_session_outputs_are_removed_at_exit(agent_env, fake_llm, tmp_path):
    env, root = isolated(agent_env, tmp_path)
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=env) as client:
        first = await big_bash(client)
        assert first.exists()  # while the session that references it runs
        assert (await client.send({"type": "new_session"}))["success"]
        second = await big_bash(client)
        assert second.parent != first.parent and first.exists()
    assert not first.parent.exists() and not second.parent.exists()
    assert list(root.iterdir()) == []


def test_print_mode_without_a_session_removes_its_outputs(agent_env, fake_llm, tmp_path):
    env, root = isolated(agent_env, tmp_path)
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": BIG}}]}, {"text": "done"}])
    result = subprocess.run([sys.executable, "-m", "agent_forge", "--no-session", "-p", "run it"], cwd=tmp_path,
                            env=env, input=b"", capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr
    tool_result = fake_llm.requests[1]["body"]["messages"][-1]
    assert str(root) in json.dumps(tool_result)  # the model was told where the full output was
    assert list(root.iterdir()) == []


# When the full output cannot be kept (tester finding 2), the result says why, and nothing is left behind.

HUGE = "seq 1 200001"


def tool_text(events: list[dict]) -> str:
    end = next(e for e in events if e["type"] == "tool_execution_end")
    return end["result"]["content"][0]["text"]


async def run_both_ways(client: RpcClient, fake_llm, command: str) -> tuple[dict, str]:
    """The RPC `bash` response data and the `bash` tool's result text for `command`."""
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}, {"text": "ok"}])
    response = await client.send({"type": "bash", "command": command})
    assert response["success"], response
    return response["data"], tool_text(await client.prompt_and_wait("run it"))


async def test_a_missing_temp_dir_is_named_in_the_result(agent_env, fake_llm, tmp_path):
    missing = tmp_path / "missing"
    env = {**agent_env, "TMPDIR": str(missing)}
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=env) as client:
        data, text = await run_both_ways(client, fake_llm, HUGE)
    reason = f"No such file or directory: {missing}/agent-forge-{os.getuid()}"
    assert data["truncated"] and "fullOutputPath" not in data and data["fullOutputError"] == reason
    assert text.endswith(f"[Showing last 2000 lines of 200001. Full output not saved: {reason}]")
    # the model is told of the user's command too
    assert f"[Output truncated. Full output not saved: {reason}]" in json.dumps(fake_llm.requests[0]["body"])
    assert not missing.exists()


async def test_a_full_temp_dir_is_named_and_a_clean_exit_leaves_nothing(agent_env, fake_llm, tmp_path):
    with mounted_tmpfs(tmp_path / "tmp", "256k") as temp:
        fill(temp)
        env = {**agent_env, "TMPDIR": str(temp)}
        async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=env) as client:
            data, text = await run_both_ways(client, fake_llm, HUGE)
        assert data["fullOutputError"] == "No space left on device"
        assert text.endswith("[Showing last 2000 lines of 200001. Full output not saved: No space left on device]")
        root = temp / f"agent-forge-{os.getuid()}" / "bash-output"
        assert list(root.iterdir()) == []  # no directory, no `.owner.json.<pid>`


async def test_a_temp_dir_that_fills_up_midway_drops_the_partial_file(agent_env, fake_llm, tmp_path):
    with mounted_tmpfs(tmp_path / "tmp", "1m") as temp:
        env = {**agent_env, "TMPDIR": str(temp)}
        async with await RpcClient.start([], cwd=str(tmp_path), env=env) as client:
            data, text = await run_both_ways(client, fake_llm, "seq 1 500000")  # 3.4 MB
            assert data["fullOutputError"] == "No space left on device" and "fullOutputPath" not in data
            assert text.endswith("of 500000. Full output not saved: No space left on device]")
            leftovers = [p.name for p in temp.rglob("*.log")]
            assert leftovers == []  # the incomplete files are gone, and the disk has room again
