"""`agent_forge.testing.rpc`: RPC mode in this process sees the client's cwd and environment only while it
runs, one agent at a time, and answers like the process would."""

from __future__ import annotations

import os
import tempfile

import pytest

from agent_forge.testing import rpc


async def test_the_agent_runs_in_the_given_cwd_and_env_and_both_are_restored(agent_env, tmp_path):
    cwd_before, env_before = os.getcwd(), dict(os.environ)
    project = tmp_path / "project"
    project.mkdir()
    client = await rpc.start_in_process([], cwd=str(project), env=agent_env)
    async with client:
        assert os.getcwd() == str(project) and os.environ["AGENT_FORGE_DIR"] == agent_env["AGENT_FORGE_DIR"]
        assert tempfile.gettempdir() == agent_env["TMPDIR"]
        state = (await client.send({"type": "get_state"}))["data"]
    assert state["sessionFile"].startswith(agent_env["AGENT_FORGE_DIR"])
    assert client.returncode == 0 and not rpc.busy()
    assert os.getcwd() == cwd_before and dict(os.environ) == env_before
    assert tempfile.gettempdir() != agent_env["TMPDIR"]


async def test_one_in_process_agent_at_a_time(agent_env, tmp_path):
    client = await rpc.start_in_process(["--no-session"], cwd=str(tmp_path), env=agent_env)
    async with client:
        assert rpc.busy()
        with pytest.raises(RuntimeError, match="already running"):
            await rpc.start_in_process([], cwd=str(tmp_path), env=agent_env)
    assert not rpc.busy()


async def test_bad_arguments_exit_2_with_the_reason_on_stderr(agent_env, tmp_path):
    client = await rpc.start_in_process(["--session-id", "no/slash"], cwd=str(tmp_path), env=agent_env)
    assert await client.close() == 2
    assert b"--session-id" in client.stderr
