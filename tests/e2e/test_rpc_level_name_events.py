"""End to end: `thinking_level_changed` and `session_info_changed` over RPC (the real CLI, the loopback fake LLM):
each sent once, before the response of the command that changed the value, and never when nothing changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_forge.modes.rpc.client import RpcClient
from support.model_entries import model_entry

WATCHED = ("thinking_level_changed", "session_info_changed")
MODELS = [model_entry("alpha"), model_entry("beta", reasoning=False)]


async def start(env: dict[str, str], cwd: Path, *args: str) -> RpcClient:
    return await RpcClient.start(list(args), cwd=str(cwd), env=env)


async def command(client: RpcClient, **fields: Any) -> tuple[list[dict[str, Any]], Any]:
    """Send a command while the agent is idle: (the watched events written since it was sent, its data)."""
    first = len(client.records)
    reply = await client.send(fields)
    assert reply["success"] is True, reply
    records = client.records[first:]
    assert records[-1] is reply  # nothing after the response: the events come before it
    return [r for r in records if r.get("type") in WATCHED], reply.get("data")


def level(value: str) -> dict[str, str]:
    return {"type": "thinking_level_changed", "level": value}


def named(value: str | None) -> dict[str, str]:
    return {"type": "session_info_changed", **({"name": value} if value is not None else {})}


def watched(client: RpcClient) -> list[dict[str, Any]]:
    return [r for r in client.records if r.get("type") in WATCHED]


async def test_thinking_level_commands_announce_each_change_once(agent_env_factory, tmp_path):
    env = agent_env_factory(model_id="alpha", models=MODELS)
    async with await start(env, tmp_path) as client:
        assert (await command(client, type="set_thinking_level", level="high"))[0] == [level("high")]
        assert (await command(client, type="set_thinking_level", level="high"))[0] == []  # no change: no event
        events, cycled = await command(client, type="cycle_thinking_level")
        assert events == [level(cycled["level"])] and cycled["level"] != "high"
        refused = await client.send({"type": "set_thinking_level", "level": "bogus"})
        assert refused["success"] is False
        assert (await command(client, type="get_state"))[0] == []
    assert watched(client) == [level("high"), level(cycled["level"])]  # none at start-up, none for the refusal


async def test_a_model_change_announces_the_level_only_when_it_clamps_it(agent_env_factory, tmp_path):
    env = agent_env_factory(model_id="alpha", models=MODELS)
    async with await start(env, tmp_path) as client:
        await command(client, type="set_thinking_level", level="high")
        clamped, _ = await command(client, type="set_model", provider="fake", modelId="beta")
        back, _ = await command(client, type="set_model", provider="fake", modelId="alpha")
        await command(client, type="set_thinking_level", level="low")
        cycled, data = await command(client, type="cycle_model")
        state = (await command(client, type="get_state"))[1]
    assert clamped == [level("off")]  # beta cannot think
    assert back == []  # alpha can, but the level stays off
    assert data["model"]["id"] == "beta" and cycled == [level("off")]
    assert state["thinkingLevel"] == "off"


async def test_set_session_name_announces_the_stored_name_once(agent_env_factory, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "ok"}])
    async with await start(agent_env_factory(), tmp_path) as client:
        assert (await command(client, type="set_session_name", name="  my work  "))[0] == [named("my work")]
        assert (await command(client, type="set_session_name", name="my work"))[0] == []
        assert (await client.send({"type": "set_session_name", "name": "a\nb"}))["success"] is False
        await client.prompt_and_wait("hi")
        assert (await command(client, type="set_session_name", name="other"))[0] == [named("other")]
    assert watched(client) == [named("my work"), named("other")]


async def test_session_changes_announce_a_level_or_name_that_differs(agent_env_factory, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "one"}, {"text": "two"}])
    async with await start(agent_env_factory(), tmp_path) as client:
        await client.prompt_and_wait("first")  # at the start-up level, medium
        await command(client, type="set_thinking_level", level="high")
        await command(client, type="set_session_name", name="A")
        await client.prompt_and_wait("second")
        first_file = (await command(client, type="get_state"))[1]["sessionFile"]
        cloned, _ = await command(client, type="clone")  # the same branch: same level and name
        new, _ = await command(client, type="new_session")  # no name; the level carries over
        await command(client, type="set_thinking_level", level="low")
        back, _ = await command(client, type="switch_session", sessionPath=first_file)
        again, _ = await command(client, type="switch_session", sessionPath=first_file)
        users = (await command(client, type="get_fork_messages"))[1]["messages"]
        forked, _ = await command(client, type="fork", entryId=users[0]["entryId"])  # before the level and name
        state = (await command(client, type="get_state"))[1]
    assert cloned == []
    assert new == [named(None)]
    assert back == [named("A"), level("high")]
    assert again == []
    assert forked == [named(None), level("medium")]
    assert state["thinkingLevel"] == "medium" and "sessionName" not in state
