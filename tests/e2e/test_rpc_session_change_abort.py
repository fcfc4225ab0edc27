"""End to end: an `abort` reaches a session change that waits on a plugin hook (the real CLI with a plugin loaded
by `-e` whose `session_before_change` or `session_start` handler waits until it is cancelled, the loopback fake
LLM): a change still asking is cancelled (it answers `cancelled: true` before the `abort` response, nothing is
switched or written, the old session goes on), one already made stays made."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from .test_rpc_plugin_hangs import env_with, start
from .test_rpc_plugin_stubborn import stubborn  # noqa: F401  (the fixture, shared)

pytestmark = pytest.mark.real_process  # the change's hook must be cut short in the real agent

HOLDING = textwrap.dedent('''
    import asyncio

    HOLD = set()  # which hooks wait: "veto" (session_before_change), "start" (session_start after a change)


    def setup(plugin):
        @plugin.command("hold")
        async def hold(args, ctx):
            HOLD.add(args)

        @plugin.on("session_before_change")
        async def veto(event, ctx):
            if "veto" in HOLD:
                ctx.ui.notify(f"asked {event.action}")
                await asyncio.sleep(3600)  # released by its cancellation (abort) or the handler timeout

        @plugin.on("session_start")
        async def started(event, ctx):
            if "start" in HOLD and event.reason != "startup":
                ctx.ui.notify(f"starting after {event.reason}")
                await asyncio.sleep(3600)
''')

CANCELLED = {"new_session": {"cancelled": True}, "switch_session": {"cancelled": True, "sessionWarnings": []},
             "fork": {"text": "first question", "cancelled": True}, "clone": {"cancelled": True}}


@pytest.fixture
def holding(tmp_path):
    path = tmp_path / "holding.py"
    path.write_text(HOLDING)
    return str(path)


def session_files(env) -> list[Path]:
    return sorted((Path(env["AGENT_FORGE_DIR"]) / "sessions").rglob("*.jsonl"))


async def notified(client, message: str) -> None:
    while True:
        event = await client.next_event(timeout=10)
        if event.get("method") == "notify" and event.get("message") == message:
            return


async def hold(client, hook: str) -> None:
    await client.send({"type": "prompt", "message": f"/hold {hook}"})
    await client.wait_for("agent_settled", timeout=10)


def change_command(action: str, entry_id: str, other: Path) -> dict:
    return {"new_session": {"type": "new_session"}, "clone": {"type": "clone"},
            "fork": {"type": "fork", "entryId": entry_id},
            "switch_session": {"type": "switch_session", "sessionPath": str(other)}}[action]


@pytest.mark.parametrize("action", list(CANCELLED))
async def test_abort_cancels_a_change_waiting_for_its_veto_hook_and_the_old_session_goes_on(
        agent_env_factory, fake_llm, tmp_path, holding, action):
    fake_llm.set_script([{"text": "first answer"}, {"text": "second answer"}])
    env = env_with(agent_env_factory, handler_timeout_ms=120000)  # only the abort can end the hook's wait
    client = await start(env, tmp_path, holding)
    await client.prompt_and_wait("first question", timeout=20)
    state = (await client.send({"type": "get_state"}))["data"]
    entry_id = (await client.send({"type": "get_fork_messages"}))["data"]["messages"][0]["entryId"]
    other = tmp_path / "other.jsonl"
    shutil.copy(state["sessionFile"], other)
    await hold(client, "veto")
    before = Path(state["sessionFile"]).read_bytes()
    files = session_files(env)
    changing = client.send_nowait(change_command(action, entry_id, other))
    await notified(client, f"asked {action}")
    aborted = await client.send({"type": "abort"}, timeout=10)
    assert changing.done()  # answered before the abort's own response
    reply = changing.result()
    after = (await client.send({"type": "get_state"}))["data"]
    assert Path(state["sessionFile"]).read_bytes() == before and session_files(env) == files
    events = await client.prompt_and_wait("second question", timeout=20)  # the old session is still usable
    await client.close()
    assert reply["success"] is True and reply["data"] == CANCELLED[action]
    assert aborted == {"type": "response", "id": aborted["id"], "command": "abort", "success": True}
    assert (after["sessionId"], after["sessionFile"]) == (state["sessionId"], state["sessionFile"])
    assert events[-1] == {"type": "agent_settled", "aborted": False}
    assert b"second question" in Path(state["sessionFile"]).read_bytes()
    assert not any(r.get("type") == "extension_error" for r in client.records)  # an abort is no plugin failure


async def test_abort_ends_the_session_start_hook_of_a_change_already_made(agent_env_factory, fake_llm, tmp_path,
                                                                         holding):
    env = env_with(agent_env_factory, handler_timeout_ms=120000)
    client = await start(env, tmp_path, holding)
    old = (await client.send({"type": "get_state"}))["data"]
    await hold(client, "start")
    changing = client.send_nowait({"type": "new_session"})
    await notified(client, "starting after new_session")
    aborted = await client.send({"type": "abort"}, timeout=10)
    assert changing.done()
    state = (await client.send({"type": "get_state"}))["data"]
    await client.close()
    assert changing.result()["data"] == {"cancelled": False} and aborted["success"] is True
    assert state["sessionId"] != old["sessionId"]


async def test_abort_cancels_a_change_whose_veto_hook_ignores_its_cancellation(agent_env_factory, tmp_path,
                                                                               stubborn):
    env = env_with(agent_env_factory, handler_timeout_ms=120000)
    client = await start(env, tmp_path, stubborn)
    old = (await client.send({"type": "get_state"}))["data"]
    changing = client.send_nowait({"type": "new_session"})
    await client.send({"type": "get_state"})  # the change is asking by now (commands in order)
    aborted = await client.send({"type": "abort"}, timeout=10)
    assert changing.done()
    state = (await client.send({"type": "get_state"}))["data"]
    await client.close()
    assert changing.result()["data"] == {"cancelled": True} and aborted["success"] is True
    assert state["sessionId"] == old["sessionId"]
    said = [r["error"] for r in client.records if r.get("type") == "extension_error"]
    assert len(said) == 1 and "ignored its cancellation" in said[0]  # given up after its grace, and said so


SLOW_TO_STOP = "trap 'sleep 0.5; exit 1' TERM; sleep 30 & wait"  # the run settles half a second after its abort


@pytest.mark.parametrize("action", ["new_session", "clone"])
async def test_a_compact_during_the_run_a_change_stops_does_not_cancel_the_change(agent_env, fake_llm, tmp_path,
                                                                                  action):
    """Only `abort` cancels a waiting change (docs/rpc.md): the run a `compact` stops is the one the change
    stopped already, and the compaction happens at its hand-over."""
    from agent_forge.modes.rpc.client import RpcClient

    fake_llm.set_script([{"text": "first answer"},
                         {"tool_calls": [{"name": "bash", "arguments": {"command": SLOW_TO_STOP}}]},
                         {"text": "the summary"}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        await client.prompt_and_wait("first question")
        await client.send({"type": "prompt", "message": "run it"})
        while (await client.next_event())["type"] != "tool_execution_start":
            pass
        change = client.send_nowait({"type": action})
        compact = client.send_nowait({"type": "compact"})
        changed, compacted = await change, await compact
    assert changed["success"] and changed["data"]["cancelled"] is False, changed
    assert compacted["type"] == "response", compacted
