"""The packaged RPC client survives a misbehaving agent process (non-JSON stdout, early exit)."""

from __future__ import annotations

import sys

import pytest

from agent_forge.modes.rpc.client import RpcClient, RpcError

# A stand-in "agent" that prints garbage, then answers one command by id, then exits.
_FAKE_AGENT = r"""
import json, sys
print("not json at all", flush=True)
print("[1, 2]", flush=True)
command = json.loads(sys.stdin.readline())
print(json.dumps({"type": "response", "command": command["type"], "success": True, "id": command["id"]}),
      flush=True)
"""


async def test_non_json_lines_are_kept_aside_and_responses_still_arrive():
    client = await RpcClient.start(command=[sys.executable, "-c", _FAKE_AGENT])
    reply = await client.send({"type": "get_state"}, timeout=10)
    await client.close()
    assert reply["success"] is True
    assert client.invalid_lines == [b"not json at all", b"[1, 2]"]


async def test_exit_before_answering_raises_rpc_error():
    client = await RpcClient.start(command=[sys.executable, "-c", "import sys; sys.stderr.write('boom')"])
    with pytest.raises(RpcError, match="boom"):
        await client.send({"type": "get_state"}, timeout=10)
    await client.close()


_DEEP_AGENT = r"""
import json, sys
command = json.loads(sys.stdin.readline())
depth = 20000
sys.stdout.write('{"type":"response","command":"get_tree","success":true,"id":' + json.dumps(command["id"])
                 + ',"data":' + '{"children":[' * depth + ']}' * depth + '}\n')
sys.stdout.flush()
"""


async def test_responses_nested_deeper_than_the_recursion_limit_are_parsed():
    client = await RpcClient.start(command=[sys.executable, "-c", _DEEP_AGENT])
    reply = await client.send({"type": "get_tree"}, timeout=30)
    await client.close()
    node, depth = reply["data"], 0
    while node["children"]:
        node, depth = node["children"][0], depth + 1
    assert reply["success"] is True and depth == 19999 and client.invalid_lines == []


async def test_a_second_command_with_a_pending_id_is_refused():
    client = await RpcClient.start(command=[sys.executable, "-c", _FAKE_AGENT])
    first = client.send_nowait({"id": "same", "type": "get_state"})
    with pytest.raises(ValueError, match="'same' is still waiting"):
        client.send_nowait({"id": "same", "type": "get_state"})
    reply = await first
    await client.close()
    assert reply["id"] == "same" and reply["success"] is True
