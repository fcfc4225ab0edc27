"""End to end: a resumed session is the session that was left — the real CLI in RPC mode against the loopback
fake LLM server. The same file gives the same messages, stats and state live and resumed (after retries,
compactions, aborts, forks and clones), and resuming, switching, forking or cloning keeps the branch's model,
thinking level and context window, writing nothing until something changes (issue 10, points 1 and 2)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient

W = "word " * 40  # 50 tokens at chars/4
SUMMARY = "<transcript>"  # occurs only in summary requests (compaction/prompts.py)


def model(model_id: str, context_window: int = 128_000, **extra) -> dict:
    """A models.json `models[]` item of a reasoning model (conftest's `model_entry` is not importable here)."""
    return {"id": model_id, "reasoning": True, "input": ["text"], "contextWindow": context_window,
            "maxTokens": 16384, "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}, **extra}


WIDE = model("wide", 400_000, contextWindowOptions=[400_000, 1_000_000])
OTHER = model("other")
STATE_FIELDS = ("model", "thinkingLevel", "isStreaming", "isCompacting", "steeringMode", "followUpMode",
                "sessionFile", "sessionId", "autoCompactionEnabled", "messageCount", "pendingMessageCount",
                "sessionName")


async def start(env, cwd, *args):
    return await RpcClient.start(list(args), cwd=str(cwd), env=env)


def lines(path) -> list[str]:
    return Path(path).read_text().splitlines()


def entries(path) -> list[dict]:
    return [json.loads(line) for line in lines(path)[1:]]


async def data(client, kind: str, **fields):
    reply = await client.send({"type": kind, **fields})
    assert reply["success"] is True, reply
    return reply.get("data")


async def snapshot(client) -> dict:
    """What a client sees of the session: messages, stats, state (all but what describes the process)."""
    state = await data(client, "get_state")
    return {"messages": (await data(client, "get_messages"))["messages"],
            "stats": await data(client, "get_session_stats"),
            "state": {key: state.get(key) for key in STATE_FIELDS},
            "windows": await data(client, "get_available_context_windows")}


async def abort_mid_answer(client):
    await client.send({"type": "prompt", "message": "write at length"})
    while True:
        event = await client.next_event()
        if event["type"] == "message_update" and event["assistantMessageEvent"]["type"] == "text_delta":
            break
    await client.send({"type": "abort"})
    assert (await client.wait_for("agent_settled"))[-1]["aborted"] is True  # already sent before the response


async def compact(client):
    reply = asyncio.ensure_future(client.send({"type": "compact"}))
    await client.wait_for("compaction_end")
    assert (await reply)["success"] is True


async def fork_at_last_question(client):
    questions = (await data(client, "get_fork_messages"))["messages"]
    assert (await data(client, "fork", entryId=questions[-1]["entryId"]))["cancelled"] is False


async def clone(client):
    assert (await data(client, "clone"))["cancelled"] is False


async def new_session(client):
    assert (await data(client, "new_session"))["cancelled"] is False
    await client.prompt_and_wait("in the new session")


OVERFLOW = {"status": 400, "body": {"error": {"message": "This model's maximum context length is 128000 tokens. "
                                              "Please reduce the length of the messages.",
                                              "type": "invalid_request_error", "code": "context_length_exceeded"}}}
RETRY = [{"status": 503}, {"text": "answer after the retry"}]
HANG = {"text": "this answer is cut off " + W, "hang_after": 4, "hang_ms": 30000}
SCENARIOS = {
    "retry": (RETRY, [lambda c: c.prompt_and_wait("hello")]),
    "retry-twice-then-more": (
        [{"status": 503}, {"status": 502}, {"text": "second try"}, {"text": "plain"}],
        [lambda c: c.prompt_and_wait("one"), lambda c: c.prompt_and_wait("two")]),
    "compaction": (
        [{"text": "one " + W}, {"status": 503}, {"text": "two " + W},
         {"match": SUMMARY, "text": "## Objective\nTrivia."}, {"text": "after"}],
        [lambda c: c.prompt_and_wait("first " + W), lambda c: c.prompt_and_wait("second " + W), compact,
         lambda c: c.prompt_and_wait("third")]),
    "abort": ([{"text": "fine"}, HANG, {"text": "again"}],
              [lambda c: c.prompt_and_wait("first"), abort_mid_answer, lambda c: c.prompt_and_wait("retry it")]),
    "fork": ([{"status": 503}, {"text": "one"}, {"text": "two"}],
             [lambda c: c.prompt_and_wait("first"), lambda c: c.prompt_and_wait("second"), fork_at_last_question]),
    "overflow": ([{"text": "one " + W}, OVERFLOW, {"match": SUMMARY, "text": "## Objective\nTrivia."},
                  {"text": "recovered"}],
                 [lambda c: c.prompt_and_wait("first " + W), lambda c: c.prompt_and_wait("second " + W)]),
    "new-session": ([{"status": 503}, {"text": "one"}, {"text": "two"}],
                    [lambda c: c.prompt_and_wait("first"), new_session]),
    "user-bash": ([{"text": "seen"}],
                  [lambda c: data(c, "bash", command="echo kept"),
                   lambda c: data(c, "bash", command="echo private", excludeFromContext=True),
                   lambda c: c.prompt_and_wait("what ran?")]),
    "clone": ([{"status": 503}, {"text": "one"}, {"status": 500}, {"text": "two"}],
              [lambda c: c.prompt_and_wait("first"), lambda c: c.prompt_and_wait("second"), clone]),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
async def test_live_and_resumed_sessions_agree(agent_env_factory, fake_llm, tmp_path, scenario):
    script, steps = SCENARIOS[scenario]
    env = agent_env_factory(settings={"retry": {"baseDelayMs": 1}, "compaction": {"keepRecentTokens": 60}})
    fake_llm.set_script(script)
    async with await start(env, tmp_path) as client:
        for step in steps:
            await step(client)
        live = await snapshot(client)
    path = live["state"]["sessionFile"]
    on_disk = lines(path)
    async with await start(env, tmp_path, "--session", path) as client:
        resumed = await snapshot(client)
    assert resumed == live
    assert lines(path) == on_disk  # resuming wrote nothing
    # retried attempts and the overflowed one that compaction recovered from are hidden, live and resumed
    assert not [m for m in live["messages"] if m.get("stopReason") == "error"]


async def test_resumed_retry_never_sends_the_hidden_attempt(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"retry": {"baseDelayMs": 1}})
    fake_llm.set_script([*RETRY, {"text": "next"}])
    async with await start(env, tmp_path) as client:
        await client.prompt_and_wait("hello")
        path = (await data(client, "get_state"))["sessionFile"]
    async with await start(env, tmp_path, "--session", path) as client:
        await client.prompt_and_wait("and now")
    roles = [m["role"] for m in fake_llm.requests[-1]["body"]["messages"] if m["role"] != "system"]
    assert roles == ["user", "assistant", "user"]
    edits = [e for e in entries(path) if e["type"] == "context_edit"]
    assert len(edits) == 1 and edits[0]["replacement"] is None


# -- point 1: the branch's configuration survives resume, switch, fork and clone -------------------------------


def configured_env(agent_env_factory):
    return agent_env_factory(models=[model("fake-model"), WIDE, OTHER])


async def low_thinking_session(env, cwd, *, wide: bool = False) -> str:
    """A saved session whose branch ends on `thinking_level_change: low` (and a 1m window on `wide`)."""
    args = ("--model", "wide") if wide else ()
    async with await start(env, cwd, *args) as client:
        await data(client, "set_thinking_level", level="low")
        if wide:
            await data(client, "set_context_window", contextWindow="1m")
        await client.prompt_and_wait("hello")
        return (await data(client, "get_state"))["sessionFile"]


def config_entries(path, since: int) -> list[dict]:
    return [{k: v for k, v in e.items() if k in ("type", "provider", "modelId", "thinkingLevel", "contextWindow")}
            for e in entries(path)[since:] if e["type"] != "message"]


@pytest.mark.parametrize("flags", [(), ("--provider", "fake", "--model", "wide"), ("--model", "fake/wide")])
async def test_resume_keeps_the_branch_configuration_and_writes_nothing(agent_env_factory, fake_llm, tmp_path,
                                                                         flags):
    env = configured_env(agent_env_factory)
    fake_llm.set_script([{"text": "one"}, {"text": "two"}])
    path = await low_thinking_session(env, tmp_path, wide=True)
    before = lines(path)
    async with await start(env, tmp_path, "--session", path, *flags) as client:
        state = await data(client, "get_state")
        windows = await data(client, "get_available_context_windows")
        assert lines(path) == before
        await client.prompt_and_wait("again")
    assert (state["model"]["id"], state["thinkingLevel"]) == ("wide", "low")
    assert windows["currentContextWindow"] == 1_000_000
    assert [e["type"] for e in entries(path)[len(before) - 1:]] == ["message", "message"]
    assert fake_llm.requests[-1]["body"]["model"] == "wide"


async def test_continue_and_a_new_session_keep_the_configuration(agent_env_factory, fake_llm, tmp_path):
    env = configured_env(agent_env_factory)
    fake_llm.set_script([{"text": "one"}, {"text": "two"}])
    path = await low_thinking_session(env, tmp_path, wide=True)
    async with await start(env, tmp_path, "-c") as client:
        continued = await data(client, "get_state")
        await new_session(client)
        live = await snapshot(client)
    assert continued["sessionFile"] == path and continued["thinkingLevel"] == "low"
    assert live["state"]["thinkingLevel"] == "low" and live["windows"]["currentContextWindow"] == 1_000_000
    async with await start(env, tmp_path, "--session", live["state"]["sessionFile"]) as client:
        assert await snapshot(client) == live


async def test_the_fork_flag_keeps_the_configuration(agent_env_factory, fake_llm, tmp_path):
    env = configured_env(agent_env_factory)
    fake_llm.set_script([{"text": "one"}])
    path = await low_thinking_session(env, tmp_path, wide=True)
    async with await start(env, tmp_path, "--fork", path, "--model", "wide") as client:
        state = await data(client, "get_state")
        windows = await data(client, "get_available_context_windows")
    assert state["sessionFile"] != path
    assert (state["model"]["id"], state["thinkingLevel"], windows["currentContextWindow"]) == ("wide", "low", 1_000_000)
    assert [e["id"] for e in entries(state["sessionFile"])] == [e["id"] for e in entries(path)]  # a copy, no more


async def test_a_session_whose_model_is_gone_keeps_its_thinking_level(agent_env_factory, fake_llm, tmp_path):
    env = configured_env(agent_env_factory)
    fake_llm.set_script([{"text": "one"}])
    async with await start(env, tmp_path, "--model", "other", "--thinking", "low") as client:
        await client.prompt_and_wait("hello")
        path = (await data(client, "get_state"))["sessionFile"]
    env = agent_env_factory(models=[model("fake-model")])  # models.json no longer lists `other`
    count = len(entries(path))
    async with await start(env, tmp_path, "--session", path) as client:
        state = await data(client, "get_state")
    assert (state["model"]["id"], state["thinkingLevel"]) == ("fake-model", "low")
    assert "The session's model fake/other is not available: continuing with fake/fake-model" in client.stderr.decode()
    assert config_entries(path, count) == [{"type": "model_change", "provider": "fake", "modelId": "fake-model"},
                                           {"type": "thinking_level_change", "thinkingLevel": "low"}]


@pytest.mark.parametrize("flags", [("--thinking", "high"), ("--model", "fake-model:high"),
                                   ("--provider", "fake", "--model", "fake-model", "--thinking", "high")])
async def test_an_explicit_thinking_level_on_resume_is_recorded_once(agent_env_factory, fake_llm, tmp_path, flags):
    env = configured_env(agent_env_factory)
    fake_llm.set_script([{"text": "one"}, {"text": "two"}])
    path = await low_thinking_session(env, tmp_path)
    count = len(entries(path))
    async with await start(env, tmp_path, "--session", path, *flags) as client:
        state = await data(client, "get_state")
        await client.prompt_and_wait("again")
    assert (state["model"]["id"], state["thinkingLevel"]) == ("fake-model", "high")
    assert config_entries(path, count) == [{"type": "thinking_level_change", "thinkingLevel": "high"}]


async def test_a_different_model_on_resume_is_recorded_once_and_keeps_the_level(agent_env_factory, fake_llm,
                                                                                 tmp_path):
    env = configured_env(agent_env_factory)
    fake_llm.set_script([{"text": "one"}, {"text": "two"}])
    path = await low_thinking_session(env, tmp_path)
    count = len(entries(path))
    async with await start(env, tmp_path, "--session", path, "--model", "other") as client:
        state = await data(client, "get_state")
        await client.prompt_and_wait("again")
    assert (state["model"]["id"], state["thinkingLevel"]) == ("other", "low")
    assert config_entries(path, count) == [{"type": "model_change", "provider": "fake", "modelId": "other"}]
    assert fake_llm.requests[-1]["body"]["model"] == "other"


async def test_switch_fork_and_clone_keep_the_branch_configuration(agent_env_factory, fake_llm, tmp_path):
    env = configured_env(agent_env_factory)
    fake_llm.set_script([{"text": "one"}])
    path = await low_thinking_session(env, tmp_path, wide=True)
    before = lines(path)
    async with await start(env, tmp_path, "--model", "other", "--thinking", "high") as client:
        assert (await data(client, "switch_session", sessionPath=path))["cancelled"] is False
        switched = await data(client, "get_state")
        switched_window = (await data(client, "get_available_context_windows"))["currentContextWindow"]
        assert lines(path) == before
        await fork_at_last_question(client)
        forked = await data(client, "get_state")
        await data(client, "switch_session", sessionPath=path)
        await clone(client)
        cloned = await data(client, "get_state")
        cloned_window = (await data(client, "get_available_context_windows"))["currentContextWindow"]
    assert lines(path) == before
    for state in (switched, forked, cloned):
        assert (state["model"]["id"], state["thinkingLevel"]) == ("wide", "low")
    assert switched_window == cloned_window == 1_000_000
    assert forked["sessionFile"] != path != cloned["sessionFile"]
