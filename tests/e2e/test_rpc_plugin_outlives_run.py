"""End to end (issue 10, docs/rpc.md "handled" prompts): a plugin command that outlives a run over RPC —
one it started, or one already going when it was sent — ends its prompt with exactly one `agent_settled`,
after all the command did. The command waits for a gate file the test creates once the run is over."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient

GATED_PLUGIN = '''
import asyncio
from pathlib import Path


def setup(plugin):
    @plugin.command("gated")
    async def gated(args, ctx):
        start_run, gate = args.split(" ", 1)
        if start_run.startswith("run"):
            ctx.session.send_user_message("asked by the command")
        while not Path(gate).exists():  # the test opens the gate when the run is over
            await asyncio.sleep(0.01)
        ctx.ui.notify("gated done")
        if start_run.endswith("fail"):
            raise RuntimeError("gated failed")
'''


async def start(env, tmp_path: Path) -> RpcClient:
    plugin = tmp_path / "gated.py"
    plugin.write_text(GATED_PLUGIN)
    return await RpcClient.start(["-e", str(plugin)], cwd=str(tmp_path), env=env)


def types_after(client: RpcClient, request_id: str) -> list[str]:
    """Event types after the response to `request_id` (other responses left out), notifications by text."""
    index = next(i for i, r in enumerate(client.records) if r.get("id") == request_id)
    return [r.get("message") if r.get("method") == "notify" else r["type"]
            for r in client.records[index + 1:] if r["type"] != "response"]


async def finish(client: RpcClient, gate: Path) -> list[str]:
    """Open the gate, wait for the prompt's `agent_settled`, then a round trip (any extra one would be sent by
    then: the command is over)."""
    gate.touch()
    await client.wait_for("agent_settled")
    await client.send({"type": "get_state", "id": "after"})
    return types_after(client, "gated")


@pytest.mark.parametrize("how", ["run", "run-fail"])
async def test_a_command_that_outlives_the_run_it_started_settles_once_at_its_end(agent_env, fake_llm, tmp_path,
                                                                                  how):
    fake_llm.set_script([{"text": "answered"}])
    gate = tmp_path / "gate"
    async with await start(agent_env, tmp_path) as client:
        reply = await client.send({"type": "prompt", "message": f"/gated {how} {gate}",
                                   "id": "gated"})
        await client.wait_for("agent_end")
        assert "agent_settled" not in types_after(client, "gated")  # the command is still waiting
        events = await finish(client, gate)
    assert reply["data"] == {"disposition": "handled"}
    assert events.count("agent_settled") == 1 and events[-1] == "agent_settled"
    assert events.index("agent_end") < events.index("gated done") < events.index("agent_settled")
    if how == "run-fail":
        assert events.index("extension_error") < events.index("agent_settled")


@pytest.mark.parametrize("how", ["wait", "fail"])
async def test_a_command_sent_during_a_run_that_outlives_it_settles_once_after_it(agent_env, fake_llm, tmp_path,
                                                                                 how):
    fake_llm.set_script([{"text": "a long answer that hangs half way", "hang_after": 3, "hang_ms": 30000}])
    gate = tmp_path / "gate"
    async with await start(agent_env, tmp_path) as client:
        await client.send({"type": "prompt", "message": "write", "id": "write"})
        async for _ in client.events_until("message_update"):
            pass
        reply = await client.send({"type": "prompt", "message": f"/gated {how} {gate}", "id": "gated"})
        fake_llm.release_hangs()
        await client.wait_for("agent_end")
        assert "agent_settled" not in types_after(client, "write")  # the command is still waiting
        events = await finish(client, gate)
    assert reply["data"] == {"disposition": "handled"}
    assert events.count("agent_settled") == 1 and events[-1] == "agent_settled"
    assert events.index("agent_end") < events.index("gated done") < events.index("agent_settled")
    if how == "fail":
        assert events.index("extension_error") < events.index("agent_settled")
