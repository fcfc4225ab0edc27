"""RPC end-to-end tests run in-process by default: `RpcClient.start` becomes `agent_forge.testing.rpc.
start_in_process` (same arguments, cwd and env, isolated per client). Tests that need a real process (signals,
stdout/stdin claiming, start-up imports, crash safety, kill -9, a full disk, `client.process`) are marked
`@pytest.mark.real_process`; a second agent started while an in-process one runs is a process too."""

from __future__ import annotations

import pytest

from agent_forge.modes.rpc.client import RpcClient
from agent_forge.testing import rpc as in_process

_spawn = RpcClient.start.__func__  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def rpc_in_process(request, monkeypatch):
    """`RpcClient.start` in-process unless the test is marked `real_process`."""
    if request.node.get_closest_marker("real_process") is not None:
        yield
        return

    async def start(cls, args=(), *, cwd=None, env=None, command=None):
        if command is not None or in_process.busy():
            return await _spawn(cls, args, cwd=cwd, env=env, command=command)
        return await in_process.start_in_process(args, cwd=cwd, env=env)

    monkeypatch.setattr(RpcClient, "start", classmethod(start))
    yield
    assert not in_process.busy(), "an in-process agent was left running: close its client"
