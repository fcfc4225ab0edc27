"""End to end: a SIGKILLed agent takes the processes of its running commands with it (issue 10 C), and a

SIGTERM, SIGHUP or SIGINT leaves no more behind than a SIGKILL does (not even a `setsid` escapee).

Both ways a command runs: the model's `bash` tool and the RPC `bash` command. Each command reports the pids of
its shell and of a background grandchild; the test kills the agent with SIGKILL and waits (a bounded poll on
the pids, never a fixed sleep) until both are gone.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import time
from pathlib import Path

import pytest
from support.doubles import running

from agent_forge.modes.rpc.client import RpcClient, RpcError

pytestmark = pytest.mark.real_process  # kill -9 and termination signals need the agent as a process

COMMAND = 'sleep 300 & echo "pids $$ $!"; wait'
PIDS = re.compile(r"pids (\d+) (\d+)")


async def wait_until_gone(pids: list[int], timeout: float = 20) -> list[int]:
    """The pids still running after `timeout` seconds (an empty list as soon as all are gone)."""
    deadline = time.monotonic() + timeout
    while (alive := [pid for pid in pids if running(pid)]) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return alive


async def kill_agent(client: RpcClient, *unanswered: asyncio.Future) -> None:
    client.process.send_signal(signal.SIGKILL)
    assert await client.close() == -signal.SIGKILL
    for reply in unanswered:  # the client fails the requests a dead agent never answered
        assert isinstance(reply.exception(), RpcError)


async def pids_from(client: RpcClient, event_type: str, text_of) -> list[int]:
    while True:
        event = await client.next_event()
        if event["type"] == event_type and (match := PIDS.search(text_of(event))):
            return [int(pid) for pid in match.groups()]


async def test_the_bash_tool_dies_with_a_sigkilled_agent(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": COMMAND}}]}])
    client = await RpcClient.start([], cwd=str(tmp_path), env=agent_env)
    try:
        await client.send({"type": "prompt", "message": "start it"})
        pids = await pids_from(client, "tool_execution_update",
                               lambda e: e["partialResult"]["content"][0]["text"])
        assert all(running(pid) for pid in pids)
    finally:
        await kill_agent(client)
    assert await wait_until_gone(pids) == []


async def test_the_rpc_bash_command_dies_with_a_sigkilled_agent(agent_env, tmp_path):
    client = await RpcClient.start([], cwd=str(tmp_path), env=agent_env)
    try:
        reply = client.send_nowait({"type": "bash", "command": COMMAND})
        pids = await pids_from(client, "bash_execution_update", lambda e: e["delta"])
        assert all(running(pid) for pid in pids)
    finally:
        await kill_agent(client, reply)
    assert await wait_until_gone(pids) == []


def watchdogs_of(agent_pid: int) -> list[int]:
    """The agent's child processes other than shells: its watchdog."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if int(fields[1]) == agent_pid and b"AGENT_FORGE_COMMAND" in cmdline:
            found.append(int(stat.parent.name))
    return found


async def test_background_jobs_of_finished_commands_are_left_alone(agent_env, tmp_path):
    """As on SIGTERM, only what runs is stopped: a server a finished command left in the background stays."""
    client = await RpcClient.start([], cwd=str(tmp_path), env=agent_env)
    try:
        reply = await client.send({"type": "bash", "command": 'sleep 300 > /dev/null 2>&1 & echo "pid $!"'})
        server = int(reply["data"]["output"].split()[1])
        running_reply = client.send_nowait({"type": "bash", "command": COMMAND})
        pids = await pids_from(client, "bash_execution_update", lambda e: e["delta"])
        [watchdog] = watchdogs_of(client.process.pid)
    finally:
        await kill_agent(client, running_reply)
    try:
        # The watchdog exits once it has killed what it had to: after that, nothing else will be killed.
        assert await wait_until_gone([watchdog, *pids]) == []
        assert running(server)
    finally:
        os.kill(server, signal.SIGKILL)


# Processes that ignore SIGTERM, and one that left the command's process group and session (`setsid`).
STUBBORN = ("trap '' TERM; setsid sleep 301 & a=$!; (trap '' TERM; sleep 302) & b=$!; "
            'echo "pids $a $b"; sleep 303')
STUBBORN_ENV = {"AGENT_FORGE_KILL_GRACE_MS": "200"}
"""The agents running STUBBORN SIGKILL its group 0.2 s after the SIGTERM it ignores, not 2 s (procgroup.py)."""


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP", "SIGINT"])
async def test_a_termination_signal_kills_what_escaped_the_tool_s_process_group(agent_env, fake_llm, tmp_path,
                                                                               signame):
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": STUBBORN}}]}])
    signum = getattr(signal, signame)
    client = await RpcClient.start([], cwd=str(tmp_path), env={**agent_env, **STUBBORN_ENV})
    pids: list[int] = []
    try:
        await client.send({"type": "prompt", "message": "start it"})
        pids = await pids_from(client, "tool_execution_update", lambda e: e["partialResult"]["content"][0]["text"])
        assert all(running(pid) for pid in pids)
        client.process.send_signal(signum)
        assert await client.close() == 128 + signum
        assert await wait_until_gone(pids) == []
    finally:
        for pid in pids:  # a failed run must not leave its sleeps behind
            if running(pid):
                os.kill(pid, signal.SIGKILL)


async def test_sigterm_kills_what_escaped_the_rpc_bash_command_s_process_group(agent_env, tmp_path):
    client = await RpcClient.start([], cwd=str(tmp_path), env={**agent_env, **STUBBORN_ENV})
    pids: list[int] = []
    try:
        client.send_nowait({"type": "bash", "command": STUBBORN})
        pids = await pids_from(client, "bash_execution_update", lambda e: e["delta"])
        client.process.send_signal(signal.SIGTERM)
        assert await client.close() == 128 + signal.SIGTERM
        assert await wait_until_gone(pids) == []
    finally:
        for pid in pids:
            if running(pid):
                os.kill(pid, signal.SIGKILL)
