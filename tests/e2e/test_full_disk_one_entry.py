"""End to end: the messages about session entries a full disk keeps from the file agree in number with a single
entry ("1 session entry ... is", "waits"), as they do for several (round-3 findings, issue 10)."""

from __future__ import annotations

import signal

import pytest

from agent_forge.modes.rpc.client import RpcClient
from e2e.test_cli_sessions import write_session
from e2e.test_full_disk import fill, mounted_tmpfs


@pytest.mark.real_process  # SIGTERM and the exit-time rescue file need the agent as a process
async def test_one_unwritten_entry_is_one_entry_in_every_message(agent_env, tmp_path):
    with mounted_tmpfs(tmp_path / "disk") as disk:
        path = write_session(disk, "eeee0000-0000-4000-8000-000000000001", ["q", "a"], mtime=1_000_000,
                             cwd=str(tmp_path))
        fill(disk)
        client = await RpcClient.start(["--session", str(path)], cwd=str(tmp_path), env=agent_env)
        try:  # output longer than what is left of the file's last page: its one entry cannot be written
            # (a long session name did this until names were capped at 200 characters)
            named = await client.send({"type": "bash", "command": "head -c 8000 /dev/zero | tr '\\0' n"})
            pending = (await client.send({"type": "get_state"}))["data"]["sessionWriteError"]["pendingEntries"]
            refused = await client.send({"type": "new_session"})
            client.process.send_signal(signal.SIGTERM)
            await client.process.wait()
        finally:
            await client.close()
    stderr = client.stderr.decode()
    assert named["success"] is True and pending == 1
    assert f"1 session entry of {path} is not on disk yet." in refused["error"]
    assert "(1 session entry waits in memory)" in stderr
    [saved] = (tmp_path / "agent-tmp").glob("*.recovered-*.jsonl")
    assert (f"agent-forge: 1 session entry could not be written to {path} (No space left on device): the whole "
            f"session is saved to {saved} as session ") in stderr, stderr
