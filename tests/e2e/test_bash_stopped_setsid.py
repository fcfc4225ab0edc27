"""End to end: a command that is stopped (`abort`, the `bash` tool's `timeout`, `abort_bash`) takes every process
carrying its lifeline token with it, a `setsid` grandchild that left the command's process group too; one that
ended by itself leaves its background jobs running, as documented (docs/rpc.md, "Shell commands").

The grandchild writes its own pid file once it runs in its new session; the tests wait for that file (a bounded
poll, never a fixed sleep) and kill what they started even when they fail.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from pathlib import Path
from typing import AsyncIterator

import pytest
from support.doubles import running

from agent_forge.modes.rpc.client import RpcClient

pytestmark = [pytest.mark.real_process, pytest.mark.skipif(not os.path.isdir("/proc/self"),
                                                           reason="lifeline tokens need /proc")]

ESCAPEE = "setsid sh -c 'echo $$ > child.tmp && mv child.tmp child.pid && exec sleep 131' &"
"""A grandchild in a session of its own that writes `child.pid` (atomically) once it runs there."""
COMMAND = f"{ESCAPEE} echo ready; sleep 132"


async def child_pid(cwd: Path, timeout: float = 20) -> int:
    """The pid in `cwd/child.pid`, once the grandchild wrote it; fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not (cwd / "child.pid").exists():
        assert time.monotonic() < deadline, "the setsid grandchild never wrote its pid file"
        await asyncio.sleep(0.02)
    pid = int((cwd / "child.pid").read_text())
    assert running(pid) and os.getsid(pid) == pid  # alive, and out of the command's process group and session
    return pid


async def gone(pid: int, timeout: float = 10) -> bool:
    """Whether `pid` stops running within `timeout` seconds (at once when it already has)."""
    deadline = time.monotonic() + timeout
    while running(pid):
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.02)
    return True


@contextlib.asynccontextmanager
async def agent(cwd: Path, env: dict[str, str]) -> AsyncIterator[RpcClient]:
    """An agent process in `cwd`; afterwards (passed or failed) the agent is closed and the grandchild killed."""
    client = await RpcClient.start([], cwd=str(cwd), env={**env, "AGENT_FORGE_KILL_GRACE_MS": "200"})
    try:
        yield client
    finally:
        try:
            await client.close()
        finally:
            with contextlib.suppress(OSError, ValueError):
                os.kill(int((cwd / "child.pid").read_text()), signal.SIGKILL)


async def test_abort_kills_the_setsid_grandchild_of_a_bash_tool_call(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": COMMAND}}]}])
    async with agent(tmp_path, agent_env) as client:
        await client.send({"type": "prompt", "message": "start it"})
        pid = await child_pid(tmp_path)
        assert (await client.send({"type": "abort"}))["success"] is True
        await client.wait_for("agent_settled")
        assert await gone(pid)


async def test_a_timeout_kills_the_setsid_grandchild_of_a_bash_tool_call(agent_env, fake_llm, tmp_path):
    call = {"name": "bash", "arguments": {"command": COMMAND, "timeout": 1}}
    fake_llm.set_script([{"tool_calls": [call]}, {"text": "it timed out"}])
    async with agent(tmp_path, agent_env) as client:
        await client.send({"type": "prompt", "message": "start it"})
        pid = await child_pid(tmp_path)
        [end] = [e for e in await client.wait_for("agent_settled") if e["type"] == "tool_execution_end"]
        assert end["isError"] and "Command timed out after 1 second" in end["result"]["content"][0]["text"]
        assert await gone(pid)


async def test_abort_bash_kills_the_setsid_grandchild_of_a_user_command(agent_env, tmp_path):
    async with agent(tmp_path, agent_env) as client:
        reply = client.send_nowait({"type": "bash", "command": COMMAND})
        pid = await child_pid(tmp_path)
        assert (await client.send({"type": "abort_bash"}))["success"] is True
        assert (await reply)["data"]["cancelled"] is True
        assert await gone(pid)


async def test_a_finished_user_command_leaves_its_setsid_background_job_running(agent_env, tmp_path):
    """Only a stopped command is swept: a server a finished command started stays (documented)."""
    async with agent(tmp_path, agent_env) as client:
        reply = await client.send({"type": "bash", "command": f"{ESCAPEE} echo started"})
        assert reply["data"]["exitCode"] == 0
        pid = await child_pid(tmp_path)
        assert (await client.send({"type": "abort_bash"}))["success"] is True  # nothing runs: nothing to stop
        assert running(pid)
