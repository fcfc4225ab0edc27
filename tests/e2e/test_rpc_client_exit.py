"""End to end: the packaged RpcClient against the real CLI once the agent has exited: a command fails at once
with the exit code instead of waiting for its timeout."""

from __future__ import annotations

import pytest

from agent_forge.modes.rpc.client import RpcClient, RpcError


async def test_send_after_the_agent_exited_fails_at_once_with_its_code(agent_env, tmp_path):
    client = await RpcClient.start([], cwd=str(tmp_path), env=agent_env)
    assert (await client.send({"type": "get_state"}))["success"] is True
    assert await client.close() == 0
    with pytest.raises(RpcError, match=r"^agent exited \(code 0\)"):
        await client.send({"type": "get_state"}, timeout=60)
    with pytest.raises(RpcError, match=r"^agent exited \(code 0\)"):
        await client.next_event(timeout=60)
