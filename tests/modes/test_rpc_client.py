"""The packaged RPC client survives a misbehaving agent process (non-JSON stdout, early exit)."""

from __future__ import annotations

import asyncio
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


_EXIT_AGENT = r"""
import json, sys
command = json.loads(sys.stdin.readline())
print(json.dumps({"type": "response", "command": "get_state", "success": True, "id": command["id"]}), flush=True)
sys.stdin.readline()  # the second command is never answered
sys.exit(3)
"""


async def test_after_the_agent_exits_every_wait_fails_at_once_with_its_code():
    client = await RpcClient.start(command=[sys.executable, "-c", _EXIT_AGENT])
    assert (await client.send({"type": "get_state"}, timeout=30))["success"] is True
    with pytest.raises(RpcError, match=r"^agent exited \(code 3\) before responding"):
        await client.send({"type": "get_state"}, timeout=30)  # pending when it exits
    for _ in range(2):
        with pytest.raises(RpcError, match=r"^agent exited \(code 3\)"):
            await client.send({"type": "get_state"}, timeout=30)  # a timeout would say "timed out"
        with pytest.raises(RpcError, match=r"^agent exited \(code 3\)"):
            await client.next_event(timeout=30)
    assert await client.close() == 3


_DEEP_ID_AGENT = r"""
import json, sys
command = json.loads(sys.stdin.readline())
depth = 100000
sys.stdout.write('{"type":"response","command":"x","success":true,"id":' + "[" * depth + "]" * depth + "}\n")
print(json.dumps({"type": "response", "command": "get_state", "success": True, "id": command["id"]}), flush=True)
sys.stdin.readline()
"""


async def test_a_response_with_an_id_nested_too_deep_to_match_is_an_event_and_the_reader_lives():
    client = await RpcClient.start(command=[sys.executable, "-c", _DEEP_ID_AGENT])
    reply = await client.send({"type": "get_state"}, timeout=30)
    deep = await client.next_event(timeout=30)
    await client.close()
    assert reply["success"] is True and deep["command"] == "x" and isinstance(deep["id"], list)


_ECHO_TWO = r"""
import json, sys
commands = [json.loads(sys.stdin.readline()) for _ in range(2)]
for command in reversed(commands):
    print(json.dumps({"type": "response", "command": "get_state", "success": True, "id": command["id"],
                      "data": {"sent": command["id"]}}), flush=True)
"""


async def test_ids_equal_as_text_but_not_as_json_are_told_apart():
    """Round 4: `{"id": 1}` and `{"id": "1"}` were one key (`str()`), so the second send was refused."""
    client = await RpcClient.start(command=[sys.executable, "-c", _ECHO_TWO])
    number = client.send_nowait({"id": 1, "type": "get_state"})
    text = client.send_nowait({"id": "1", "type": "get_state"})
    replies = await asyncio.gather(number, text)
    await client.close()
    assert [reply["data"]["sent"] for reply in replies] == [1, "1"]
