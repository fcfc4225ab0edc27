"""Stray output (plugin prints, raw writes to fd 1, child processes) never reaches the RPC protocol stream."""

from __future__ import annotations

import pytest

from agent_forge.modes.rpc.client import RpcClient

pytestmark = pytest.mark.real_process  # the claimed stdout/stdin of a real process

NOISY_PLUGIN = '''
import os, subprocess

print("import-time print")

def setup(plugin):
    print("setup print")
    os.write(1, b"raw fd write\\n")
    subprocess.run(["echo", "child echo"])
'''


async def test_plugin_output_goes_to_stderr_not_into_the_protocol(agent_env, tmp_path):
    plugin = tmp_path / "noisy.py"
    plugin.write_text(NOISY_PLUGIN)
    client = await RpcClient.start(["--no-session", "-e", str(plugin)], cwd=str(tmp_path), env=agent_env)
    reply = await client.send({"type": "get_state"})
    await client.close()
    assert reply["success"] is True
    assert client.invalid_lines == []
    for text in (b"import-time print", b"setup print", b"raw fd write", b"child echo"):
        assert text in client.stderr
