"""The example plugin (`examples/plugins/example_plugin.py`) does what its docstring says, loaded with `-e` into the
real CLI in RPC mode against the loopback fake LLM."""

from __future__ import annotations

import json
from pathlib import Path

from agent_forge.modes.rpc.client import RpcClient

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "example_plugin.py"


async def next_request(client, method, seen=None):
    """The next interaction request of `method`; the events before it go to `seen`."""
    while True:
        event = await client.next_event()
        if event["type"] == "extension_ui_request" and event["method"] == method:
            return event
        if seen is not None:
            seen.append(event)


def answer(client, request_id, **fields):
    client.write_raw(json.dumps({"type": "extension_ui_response", "id": request_id, **fields}).encode() + b"\n")


async def test_example_plugin_over_rpc(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([
        {"tool_calls": [{"name": "notes", "arguments": {}},
                        {"name": "bash", "arguments": {"command": "rm -rf build"}}]},
        {"text": "Milk."},
    ])
    (tmp_path / "build").mkdir()
    async with await RpcClient.start(["-e", str(EXAMPLE)], cwd=str(tmp_path), env=agent_env) as client:
        status = await next_request(client, "setStatus")
        await client.send({"type": "prompt", "message": "/note buy milk"})
        noted = await next_request(client, "notify")
        await client.send({"type": "prompt", "message": "?? what should I buy"})
        events: list[dict] = []
        risky = await next_request(client, "confirm", events)
        answer(client, risky["id"], cancelled=True)
        events += await client.wait_for("agent_settled")
        new = client.send_nowait({"type": "new_session"})
        keep = await next_request(client, "confirm")
        answer(client, keep["id"], confirmed=False)
        reply = await new
    assert status["statusText"] == "notes plugin ready (startup)" and noted["message"] == "Noted (1 so far)"
    assert risky["message"] == "rm -rf build" and risky["timeout"] == 30000
    ends = {e["toolName"]: e for e in events if e["type"] == "tool_execution_end"}
    assert ends["notes"]["result"]["content"][0]["text"] == "1. buy milk"
    assert ends["bash"]["isError"] is True and (tmp_path / "build").is_dir()
    first = fake_llm.requests[0]["body"]["messages"]
    assert first[-2]["content"] == [{"type": "text", "text": "Answer in one or two sentences: what should I buy"}]
    assert "- buy milk" in first[-1]["content"][0]["text"]
    assert reply["data"] == {"cancelled": True}
