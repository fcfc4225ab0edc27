"""End to end: a prompt sent right after a command that aborts the run in order to do something (`compact`, the
session changes), in the same write, is handled as a prompt arriving then: never cancelled by that abort (docs/rpc.md,
"What a command stops or holds follows arrival order"). The run is held mid-answer (or in a retry's backoff wait)
by the fake LLM, never by sleeping; the outcome must not depend on when the commands' work is scheduled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient

PLUGIN = str(Path(__file__).resolve().parents[1] / "plugins" / "fixtures" / "e2e_plugin.py")
W = "word " * 40  # 50 tokens at chars/4: with `keepRecentTokens: 30` an earlier exchange is summarised
SUMMARY = "<transcript>"  # occurs only in summary requests (compaction/prompts.py)
SUMMARISED = {"match": SUMMARY, "text": "## Objective\nShrunk."}
HANGING = {"text": "one two three four", "hang_after": 4, "hang_ms": 20000}
AFTER = "after compact"
ANSWER = {"match": AFTER, "text": "Answered after the compaction."}
SETTINGS = {"compaction": {"keepRecentTokens": 30}}


async def start(env: dict, cwd: Path, *args: str) -> RpcClient:
    return await RpcClient.start(list(args), cwd=str(cwd), env=env)


def write(client: RpcClient, *commands: dict) -> None:
    """All `commands` in ONE write: the agent reads them in one chunk."""
    client.write_raw(b"".join(json.dumps(c).encode() + b"\n" for c in commands))


async def streaming(client: RpcClient, message: str = "go") -> None:
    """Send `message` and return once its answer streams (the fake LLM holds it there)."""
    assert (await client.send({"type": "prompt", "message": message}))["success"] is True
    while True:
        event = await client.next_event()
        if event["type"] == "message_update" and event["assistantMessageEvent"]["type"] == "text_delta":
            return


async def settled_with(client: RpcClient, ids: set[str], *, settle: bool = True) -> tuple[dict[str, dict], list[dict]]:
    """`({id: response}, events)`: events read until every one of `ids` is answered and (when `settle`) a run
    settled."""
    replies: dict[str, dict] = {}
    events: list[dict] = []
    while set(replies) != ids or (settle and not any(e["type"] == "agent_settled" for e in events)):
        event = await client.next_event(timeout=20)
        events.append(event)
        if event["type"] == "response" and event.get("id") in ids:
            replies[event["id"]] = event
    return replies, events


def last_user_text(fake_llm) -> str:
    content = fake_llm.requests[-1]["body"]["messages"][-1]["content"]
    return content if isinstance(content, str) else content[0]["text"]


def assert_ran_after_the_compaction(replies: dict, events: list[dict], fake_llm) -> None:
    """`p` was queued, ran as the last request (on the compacted context when `c` compacted), and the session
    settled without the prompt's run being aborted."""
    assert replies["p"]["success"] is True, replies["p"].get("error")
    assert replies["p"]["data"] == {"disposition": "queued"}
    assert last_user_text(fake_llm) == AFTER
    kinds = [e["type"] for e in events]
    assert kinds.index("compaction_end") < len(kinds) - 1 - kinds[::-1].index("agent_start"), kinds
    if replies["c"]["success"]:
        assert "Shrunk." in json.dumps(fake_llm.requests[-1]["body"]["messages"])
    assert events[-1] == {"type": "agent_settled", "aborted": False}


@pytest.mark.parametrize("behavior", ["steer", "followUp"])
@pytest.mark.parametrize("compacts", [True, False], ids=["compacts", "nothing_to_compact"])
async def test_a_prompt_sent_with_compact_during_a_run_is_queued_and_runs_after_the_compaction(
        agent_env_factory, fake_llm, tmp_path, behavior, compacts):
    fake_llm.set_script([{"text": "one " + W}, HANGING, SUMMARISED, ANSWER] if compacts else [HANGING, ANSWER])
    async with await start(agent_env_factory(settings=SETTINGS), tmp_path) as client:
        if compacts:
            await client.prompt_and_wait("first " + W)
        await streaming(client)
        write(client, {"id": "c", "type": "compact"},
              {"id": "p", "type": "prompt", "message": AFTER, "streamingBehavior": behavior})
        replies, events = await settled_with(client, {"c", "p"})
    assert replies["c"]["success"] is compacts, replies["c"].get("error")
    assert_ran_after_the_compaction(replies, events, fake_llm)


async def test_a_prompt_sent_with_compact_during_a_retry_wait_is_queued_and_runs(agent_env_factory, fake_llm,
                                                                                 tmp_path):
    env = agent_env_factory(settings={**SETTINGS, "retry": {"baseDelayMs": 60000}})
    fake_llm.set_script([{"text": "one " + W}, {"status": 503}, SUMMARISED, ANSWER])
    async with await start(env, tmp_path) as client:
        await client.prompt_and_wait("first " + W)
        assert (await client.send({"type": "prompt", "message": "go"}))["success"] is True
        await client.wait_for("auto_retry_start")  # the backoff waits a minute: the run is held there
        write(client, {"id": "c", "type": "compact"},
              {"id": "p", "type": "prompt", "message": AFTER, "streamingBehavior": "steer"})
        replies, events = await settled_with(client, {"c", "p"})
    assert replies["c"]["success"] is True, replies["c"]
    assert_ran_after_the_compaction(replies, events, fake_llm)
    assert len(fake_llm.requests) == 4  # the retry never ran: the compact's abort ended its wait


async def test_a_prompt_sent_with_compact_through_plugin_input_handlers_is_queued_and_runs(agent_env_factory,
                                                                                           fake_llm, tmp_path):
    """With input handlers the prompt is long: it is still in them when the compaction starts."""
    fake_llm.set_script([{"text": "one " + W}, HANGING, SUMMARISED, ANSWER])
    async with await start(agent_env_factory(settings=SETTINGS), tmp_path, "-e", PLUGIN) as client:
        await client.wait_for("extension_ui_request")  # the plugin's session_start notification: it is live
        await client.prompt_and_wait("first " + W)
        await streaming(client)
        write(client, {"id": "c", "type": "compact"},
              {"id": "p", "type": "prompt", "message": AFTER, "streamingBehavior": "followUp"})
        replies, events = await settled_with(client, {"c", "p"})
    assert replies["c"]["success"] is True, replies["c"]
    assert_ran_after_the_compaction(replies, events, fake_llm)


async def test_a_plugin_command_sent_with_compact_during_a_run_is_not_cancelled(agent_env_factory, fake_llm,
                                                                                tmp_path):
    fake_llm.set_script([HANGING])
    async with await start(agent_env_factory(settings=SETTINGS), tmp_path, "-e", PLUGIN) as client:
        await client.wait_for("extension_ui_request")
        await streaming(client)
        write(client, {"id": "c", "type": "compact"}, {"id": "p", "type": "prompt", "message": "/echo hi"})
        replies, events = await settled_with(client, {"c", "p"})
    assert replies["p"]["data"] == {"disposition": "handled"}
    notes = [e["message"] for e in events if e["type"] == "extension_ui_request" and e["method"] == "notify"]
    assert any(note.startswith("echo: hi (streaming: ") for note in notes), notes
    assert events[-1] == {"type": "agent_settled", "aborted": True}  # the compact's abort ended the run


@pytest.mark.parametrize("plugin", [False, True], ids=["quick_prompts", "through_input_handlers"])
async def test_a_prompt_between_a_starting_prompt_and_compact_is_queued_and_runs(agent_env_factory, fake_llm,
                                                                                  tmp_path, plugin):
    """Idle, one write: a prompt that starts a run, `compact`, a follow-up. The compaction aborts the run the first
    prompt started (sent before it) and runs at its hand-over; the prompt sent after it is queued and runs. With
    plugin input handlers the first prompt is still in them when `compact` arrives: the compact waits for its
    outcome instead of compacting first and leaving it refused as busy. (A steer here is queued too, but the
    aborted run's first turn takes it along: `Agent.start`, docs/rpc.md on steering and on an abort while a run
    starts.)"""
    fake_llm.set_script([{"text": "one " + W}, SUMMARISED, ANSWER, {"match": "starts", **HANGING}])
    async with await start(agent_env_factory(settings=SETTINGS), tmp_path, *(["-e", PLUGIN] if plugin else [])) \
            as client:
        if plugin:
            await client.wait_for("extension_ui_request")
        await client.prompt_and_wait("first " + W)
        write(client, {"id": "s", "type": "prompt", "message": "starts a run"}, {"id": "c", "type": "compact"},
              {"id": "p", "type": "prompt", "message": AFTER, "streamingBehavior": "followUp"})
        replies, events = await settled_with(client, {"s", "c", "p"})
    assert replies["s"]["success"] is True and replies["s"]["data"] == {"disposition": "started"}, replies["s"]
    assert replies["c"]["success"] is True, replies["c"]
    assert_ran_after_the_compaction(replies, events, fake_llm)


async def test_a_prompt_sent_before_compact_through_input_handlers_during_a_run_is_queued_not_cancelled(
        agent_env_factory, fake_llm, tmp_path):
    """During a run, one write: a steer still in plugin input handlers, then `compact`. The compact cancels no
    prompt: the steer is queued (the compact acts once it is), and runs after the compaction."""
    fake_llm.set_script([{"text": "one " + W}, HANGING, SUMMARISED, ANSWER])
    async with await start(agent_env_factory(settings=SETTINGS), tmp_path, "-e", PLUGIN) as client:
        await client.wait_for("extension_ui_request")
        await client.prompt_and_wait("first " + W)
        await streaming(client)
        write(client, {"id": "p", "type": "prompt", "message": AFTER, "streamingBehavior": "steer"},
              {"id": "c", "type": "compact"})
        replies, events = await settled_with(client, {"c", "p"})
    assert replies["c"]["success"] is True, replies["c"]
    assert_ran_after_the_compaction(replies, events, fake_llm)


# -- an `abort` sent right after `compact` stops it, though its compaction has not begun ------------------------

def assert_nothing_compacted(replies: dict, entries: list[dict], fake_llm) -> None:
    """`c` answered aborted and `a` succeeded; no summary was asked for and no compaction entry written."""
    assert replies["a"]["success"] is True, replies["a"]
    assert replies["c"]["success"] is False and replies["c"]["error"] == "Compaction aborted", replies["c"]
    assert not any(SUMMARY in json.dumps(r["body"]) for r in fake_llm.requests)
    assert "compaction" not in [e["type"] for e in entries]


@pytest.mark.parametrize("during_run", [False, True], ids=["idle", "in_run"])
async def test_an_abort_sent_right_after_compact_stops_it(agent_env_factory, fake_llm, tmp_path, during_run):
    """`compact` then `abort`, one write: idle, the compaction is stopped before its first step; during a run, the
    request waiting for the aborted run's hand-over ends aborted, and the run settles aborted."""
    fake_llm.set_script([{"text": "one " + W}, *([HANGING] if during_run else []), SUMMARISED])
    async with await start(agent_env_factory(settings=SETTINGS), tmp_path) as client:
        await client.prompt_and_wait("first " + W)
        if during_run:
            await streaming(client)
        write(client, {"id": "c", "type": "compact"}, {"id": "a", "type": "abort"})
        replies, events = await settled_with(client, {"c", "a"}, settle=during_run)
        entries = (await client.send({"type": "get_entries"}))["data"]["entries"]
    assert_nothing_compacted(replies, entries, fake_llm)
    kinds = [e["type"] for e in events]
    assert "compaction_start" not in kinds and "compaction_end" not in kinds, kinds
    settled = [e for e in events if e["type"] == "agent_settled"]
    assert settled == ([{"type": "agent_settled", "aborted": True}] if during_run else []), settled


async def test_an_abort_after_a_prompt_and_compact_through_input_handlers_stops_both(agent_env_factory,
                                                                                      fake_llm, tmp_path):
    """Idle, one write: a prompt still in plugin input handlers, `compact` waiting for its outcome, `abort`. The
    abort refuses the prompt and stops the compact, which never begins."""
    fake_llm.set_script([{"text": "one " + W}, SUMMARISED, {"match": "starts", **HANGING}])
    async with await start(agent_env_factory(settings=SETTINGS), tmp_path, "-e", PLUGIN) as client:
        await client.wait_for("extension_ui_request")
        await client.prompt_and_wait("first " + W)
        write(client, {"id": "s", "type": "prompt", "message": "starts a run"}, {"id": "c", "type": "compact"},
              {"id": "a", "type": "abort"})
        replies, events = await settled_with(client, {"s", "c", "a"}, settle=False)
        entries = (await client.send({"type": "get_entries"}))["data"]["entries"]
    assert replies["s"]["success"] is False, replies["s"]
    assert replies["s"]["error"] == "Aborted while plugin input handlers were running: the prompt was not sent"
    assert_nothing_compacted(replies, entries, fake_llm)
    assert len(fake_llm.requests) == 1 and [e["type"] for e in events if e["type"] != "response"] == []


# -- the session changes: the prompt waits for the change and runs in the session that exists -----------------

async def change_command(client: RpcClient, kind: str) -> dict:
    """`kind` with the fields it needs, taken from the running session."""
    if kind == "switch_session":
        return {"type": kind, "sessionPath": (await client.send({"type": "get_state"}))["data"]["sessionFile"]}
    if kind == "fork":
        forks = (await client.send({"type": "get_fork_messages"}))["data"]["messages"]
        return {"type": kind, "entryId": forks[-1]["entryId"]}
    return {"type": kind}


@pytest.mark.parametrize("kind", ["new_session", "switch_session", "fork", "clone"])
async def test_a_prompt_sent_with_a_session_change_during_a_run_is_not_cancelled_by_its_abort(
        agent_env, fake_llm, tmp_path, kind):
    fake_llm.set_script([HANGING, {"match": AFTER, "text": "Answered in the session that exists."}])
    async with await start(agent_env, tmp_path) as client:
        await streaming(client)
        command = await change_command(client, kind)
        write(client, {**command, "id": "c"},
              {"id": "p", "type": "prompt", "message": AFTER, "streamingBehavior": "steer"})
        replies, events = await settled_with(client, {"c", "p"})
        if not any(e["type"] == "agent_settled" for e in events[events.index(replies["p"]):]):
            await client.wait_for("agent_settled", timeout=20)  # the aborted run settled before `p` started its own
    assert replies["c"]["success"] is True and replies["c"]["data"]["cancelled"] is False, replies["c"]
    assert replies["p"]["success"] is True and replies["p"]["data"] == {"disposition": "started"}, replies["p"]
    assert last_user_text(fake_llm) == AFTER and len(fake_llm.requests) == 2
