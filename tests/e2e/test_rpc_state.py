"""End to end: state commands over RPC (get_state, get_session_stats, set_session_name, new_session,
get_commands) with the real CLI against the loopback fake LLM server."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient

STATE_KEYS = {"model", "thinkingLevel", "isStreaming", "isCompacting", "steeringMode", "followUpMode",
              "sessionFile", "sessionId", "autoCompactionEnabled", "messageCount", "pendingMessageCount",
              "approvals"}  # approvals: an addition to the seed fields (docs/rpc.md, "Approvals")
STATS_KEYS = {"sessionFile", "sessionId", "userMessages", "assistantMessages", "toolCalls", "toolResults",
              "totalMessages", "tokens", "cost", "contextUsage"}


async def start(env, cwd, *args):
    return await RpcClient.start(list(args), cwd=str(cwd), env=env)


async def data(client, command_type, **fields):
    reply = await client.send({"type": command_type, **fields})
    assert reply["success"] is True, reply
    return reply.get("data")


def session_lines(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def keyless_env(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(AGENT_FORGE_DIR=str(tmp_path / "agent"), HOME=str(tmp_path))
    return env


# -- get_state ----------------------------------------------------------------------------------------


async def test_fresh_state_has_every_seed_field(agent_env, tmp_path):
    async with await start(agent_env, tmp_path) as client:
        state = await data(client, "get_state")
    assert set(state) == STATE_KEYS  # sessionName omitted while unset
    assert state["model"]["id"] == "fake-model" and state["model"]["contextWindow"] == 128000
    assert state["thinkingLevel"] == "medium"
    assert (state["isStreaming"], state["isCompacting"], state["autoCompactionEnabled"]) == (False, False, True)
    assert (state["steeringMode"], state["followUpMode"]) == ("one-at-a-time", "one-at-a-time")
    assert (state["messageCount"], state["pendingMessageCount"]) == (0, 0)
    assert state["sessionFile"].endswith(f"_{state['sessionId']}.jsonl")
    assert not Path(state["sessionFile"]).exists()  # written with the first message


async def test_state_reflects_settings(agent_env_factory, tmp_path):
    env = agent_env_factory(settings={"compaction": {"enabled": False}, "steeringMode": "all",
                                      "followUpMode": "all"})
    async with await start(env, tmp_path) as client:
        state = await data(client, "get_state")
    assert state["autoCompactionEnabled"] is False
    assert (state["steeringMode"], state["followUpMode"]) == ("all", "all")


async def test_without_a_model_state_says_null_and_stats_omit_context_usage(tmp_path):
    async with await start(keyless_env(tmp_path), tmp_path, "--no-session") as client:
        state = await data(client, "get_state")
        stats = await data(client, "get_session_stats")
    assert state["model"] is None and "model" in state
    assert state["thinkingLevel"] == "off" and state["sessionFile"] is None
    assert set(stats) == STATS_KEYS - {"contextUsage"}
    assert stats["sessionFile"] is None and stats["sessionId"] == state["sessionId"]


# -- get_session_stats --------------------------------------------------------------------------------


async def test_fresh_stats_are_zero_with_context_window(agent_env, tmp_path):
    async with await start(agent_env, tmp_path) as client:
        stats = await data(client, "get_session_stats")
        state = await data(client, "get_state")
    assert set(stats) == STATS_KEYS
    assert stats["sessionFile"] == state["sessionFile"] and stats["sessionId"] == state["sessionId"]
    assert stats["tokens"] == {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    assert stats["contextUsage"] == {"tokens": 0, "contextWindow": 128000, "percent": 0}


async def test_stats_after_a_plain_answer_match_the_reference_numbers(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "Hello! I am a mock model.", "usage": {"input": 1200, "output": 12}}])
    async with await start(agent_env, tmp_path) as client:
        await client.prompt_and_wait("Say hello")
        stats = await data(client, "get_session_stats")
    assert (stats["userMessages"], stats["assistantMessages"], stats["totalMessages"]) == (1, 1, 2)
    assert stats["tokens"] == {"input": 1200, "output": 12, "cacheRead": 0, "cacheWrite": 0, "total": 1212}
    assert stats["cost"] == pytest.approx(0.00378)
    assert stats["contextUsage"]["tokens"] == 1212
    assert stats["contextUsage"]["percent"] == pytest.approx(0.946875)


async def test_stats_count_tool_calls_and_sum_every_turn(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo one"}},
                        {"name": "bash", "arguments": {"command": "echo two"}}],
         "usage": {"input": 100, "output": 20, "cache_read": 50}},
        {"text": "Both ran.", "usage": {"input": 300, "output": 10}},
    ])
    async with await start(agent_env, tmp_path) as client:
        await client.prompt_and_wait("run two commands")
        stats = await data(client, "get_session_stats")
    assert (stats["toolCalls"], stats["toolResults"], stats["assistantMessages"]) == (2, 2, 2)
    assert stats["totalMessages"] == 5
    assert stats["tokens"] == {"input": 400, "output": 30, "cacheRead": 50, "cacheWrite": 0, "total": 480}
    assert stats["cost"] == pytest.approx((400 * 3 + 30 * 15 + 50 * 0.3) / 1e6)
    assert stats["contextUsage"]["tokens"] == 310  # the last answer measured the whole context


async def test_stats_count_every_message_of_the_file_after_a_compaction_and_in_a_fork(agent_env_factory, fake_llm,
                                                                                        tmp_path):
    """The reference's counts (found by experiment): every message entry of the file, compacted history
    included, while get_state's messageCount is the conversation the model sees; a fork's file holds its copy."""
    words = "word " * 40
    env = agent_env_factory(settings={"compaction": {"keepRecentTokens": 60}})
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": "echo one"}}]},
                         {"text": "one " + words}, {"text": "two " + words}, {"text": "three " + words},
                         {"match": "<transcript>", "text": "Summary."}, {"text": "on the fork"}])
    async with await start(env, tmp_path) as client:
        for question in ("first " + words, "second " + words, "third " + words):
            await client.prompt_and_wait(question)
        await data(client, "compact")
        stats = await data(client, "get_session_stats")
        state = await data(client, "get_state")
        users = (await data(client, "get_fork_messages"))["messages"]
        await data(client, "fork", entryId=users[1]["entryId"])
        forked = await data(client, "get_session_stats")
        await client.prompt_and_wait("again")
        forked_after = await data(client, "get_session_stats")
        await data(client, "switch_session", sessionPath=state["sessionFile"])
        original = await data(client, "get_session_stats")

    def counts(stats):
        return tuple(stats[key] for key in ("userMessages", "assistantMessages", "toolCalls", "toolResults",
                                             "totalMessages"))

    assert state["messageCount"] < 9  # the compacted conversation
    assert counts(stats) == (3, 4, 1, 1, 8) == counts(original)
    assert counts(forked) == (1, 2, 1, 1, 4)  # the fork's file: the first exchange
    assert counts(forked_after) == (2, 3, 1, 1, 6)


# -- session names ------------------------------------------------------------------------------------


async def test_set_session_name_is_stripped_persisted_and_restored(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "ok"}])
    async with await start(agent_env, tmp_path) as client:
        await client.prompt_and_wait("hi")
        reply = await client.send({"id": "n1", "type": "set_session_name", "name": "  my work  "})
        state = await data(client, "get_state")
    assert reply == {"id": "n1", "type": "response", "command": "set_session_name", "success": True}
    assert state["sessionName"] == "my work"
    info = [line for line in session_lines(state["sessionFile"]) if line["type"] == "session_info"]
    assert [entry["name"] for entry in info] == ["my work"]
    async with await start(agent_env, tmp_path, "--session", state["sessionFile"]) as client:
        resumed = await data(client, "get_state")
    assert resumed["sessionName"] == "my work" and resumed["sessionId"] == state["sessionId"]


@pytest.mark.parametrize("name", ["", "   "])
async def test_empty_session_name_is_an_error_with_the_id(agent_env, tmp_path, name):
    async with await start(agent_env, tmp_path) as client:
        reply = await client.send({"id": 7, "type": "set_session_name", "name": name})
        state = await data(client, "get_state")
    assert reply["success"] is False and reply["id"] == 7 and "empty" in reply["error"]
    assert "sessionName" not in state


@pytest.mark.parametrize("flag", ["--name", "-n"])
async def test_name_flag_sets_the_name_at_start(agent_env, fake_llm, tmp_path, flag):
    fake_llm.set_script([{"text": "ok"}])
    async with await start(agent_env, tmp_path, flag, "feature-x") as client:
        state = await data(client, "get_state")
        await client.prompt_and_wait("hi")
    assert state["sessionName"] == "feature-x"
    types = [line["type"] for line in session_lines(state["sessionFile"])]
    assert types[:4] == ["session", "model_change", "thinking_level_change", "session_info"]


async def test_empty_name_flag_is_a_startup_error(agent_env, tmp_path):
    client = await start(agent_env, tmp_path, "--name", " ")
    code = await client.close()
    assert code == 2 and b"Session name cannot be empty" in client.stderr  # a usage error


@pytest.mark.parametrize("name, problem", [
    ("\x1b[31mred", "one line of printable text (it holds '\\x1b' at character 1)"),
    ("bell\x07", "'\\x07' at character 5"), ("two\nlines", "'\\n'"), ("tab\there", "'\\t'"),
    ("evil\u202egnp.exe", "'\\u202e'"), ("x" * 100_000, "too long (100,000 characters; at most 200)")])
async def test_a_name_holding_control_characters_or_too_long_is_refused(agent_env, tmp_path, name, problem):
    async with await start(agent_env, tmp_path) as client:
        reply = await client.send({"id": 8, "type": "set_session_name", "name": name})
        state = await data(client, "get_state")
    assert reply["success"] is False and problem in reply["error"], reply
    assert "sessionName" not in state
    client = await start(agent_env, tmp_path, "--name", name)  # the flag: the same rule, at start-up
    assert await client.close() == 2 and problem.encode() in client.stderr


# -- new_session --------------------------------------------------------------------------------------


async def test_new_session_starts_fresh_with_same_model_and_parent(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "first"}, {"text": "second"}])
    async with await start(agent_env, tmp_path, "--thinking", "high") as client:
        await client.prompt_and_wait("one")
        await data(client, "set_session_name", name="old")
        before = await data(client, "get_state")
        reply = await client.send({"id": "ns", "type": "new_session", "parentSession": before["sessionFile"]})
        after = await data(client, "get_state")
        messages = (await data(client, "get_messages"))["messages"]
        stats = await data(client, "get_session_stats")
        await client.prompt_and_wait("two")
    assert reply["data"] == {"cancelled": False} and reply["id"] == "ns"
    assert after["sessionId"] != before["sessionId"] and after["sessionFile"] != before["sessionFile"]
    assert Path(after["sessionFile"]).parent == Path(before["sessionFile"]).parent
    assert messages == [] and after["messageCount"] == 0 and "sessionName" not in after
    assert (after["model"], after["thinkingLevel"]) == (before["model"], "high")
    assert stats["tokens"]["total"] == 0 and stats["userMessages"] == 0
    lines = session_lines(after["sessionFile"])
    assert lines[0]["parentSession"] == before["sessionFile"] and lines[0]["id"] == after["sessionId"]
    assert [line["type"] for line in lines[1:3]] == ["model_change", "thinking_level_change"]
    assert lines[2]["thinkingLevel"] == "high"
    assert [line["message"]["role"] for line in lines if line["type"] == "message"] == ["user", "assistant"]
    old = session_lines(before["sessionFile"])
    assert [line["message"]["content"][0]["text"] for line in old if line["type"] == "message"] == ["one", "first"]
    sent = [m for m in fake_llm.requests[1]["body"]["messages"] if m["role"] != "system"]
    assert len(sent) == 1  # the new conversation does not carry the old one


async def test_new_session_without_parent_has_no_parent_field(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "ok"}])
    async with await start(agent_env, tmp_path) as client:
        await data(client, "new_session")
        state = await data(client, "get_state")
        await client.prompt_and_wait("hi")
    assert "parentSession" not in session_lines(state["sessionFile"])[0]


async def test_new_session_in_memory_stays_in_memory(agent_env, tmp_path):
    async with await start(agent_env, tmp_path, "--no-session") as client:
        before = await data(client, "get_state")
        await data(client, "new_session")
        after = await data(client, "get_state")
    assert after["sessionFile"] is None and after["sessionId"] != before["sessionId"]
    assert not (Path(agent_env["AGENT_FORGE_DIR"]) / "sessions").exists()


async def test_new_session_while_streaming_aborts_the_run_first(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "this answer never finishes", "hang_after": 3, "hang_ms": 30000}])
    async with await start(agent_env, tmp_path) as client:
        await client.send({"type": "prompt", "message": "long task"})
        await client.send({"type": "follow_up", "message": "queued for the old session"})
        await client.wait_for("message_update")
        await asyncio.to_thread(fake_llm.wait_for, lambda: fake_llm.requests[0]["hanging"])
        old = await data(client, "get_state")
        reply = await client.send({"id": "ns", "type": "new_session"}, timeout=15)
        state = await data(client, "get_state")
    order = [r.get("type") if r.get("type") != "response" else r.get("id") for r in client.records]
    assert order.index("agent_settled") < order.index("ns")  # settled before the answer
    settled = next(r for r in client.records if r.get("type") == "agent_settled")
    assert settled["aborted"] is True and reply["data"] == {"cancelled": False}
    updates = [r for r in client.records if r.get("type") == "queue_update"]
    assert updates[-1] == {"type": "queue_update", "steering": [], "followUp": []}
    assert (state["isStreaming"], state["messageCount"], state["pendingMessageCount"]) == (False, 0, 0)
    roles = [(line["message"]["role"], line["message"].get("stopReason"))
             for line in session_lines(old["sessionFile"]) if line["type"] == "message"]
    assert roles == [("user", None), ("assistant", "aborted")]
    assert len(fake_llm.requests) == 1  # the queued follow-up was dropped, not sent


# -- get_commands and settings ------------------------------------------------------------------------


async def test_get_commands_is_empty_without_plugins_or_templates(agent_env, tmp_path):
    async with await start(agent_env, tmp_path) as client:
        reply = await client.send({"id": "gc", "type": "get_commands"})
    assert reply == {"id": "gc", "type": "response", "command": "get_commands", "success": True,
                     "data": {"commands": []}}


async def test_setting_commands_never_rewrite_settings_files(agent_env_factory, tmp_path):
    env = agent_env_factory(settings={"steeringMode": "all"})
    project = tmp_path / "project"
    (project / ".agent-forge" / "agent").mkdir(parents=True)
    project_settings = project / ".agent-forge" / "agent" / "settings.json"
    project_settings.write_text('{"followUpMode": "all"}\n')
    global_settings = Path(env["AGENT_FORGE_DIR"]) / "settings.json"
    before = (global_settings.read_bytes(), project_settings.read_bytes())
    async with await start(env, project) as client:
        for command in ({"type": "set_steering_mode", "mode": "one-at-a-time"},
                        {"type": "set_follow_up_mode", "mode": "one-at-a-time"},
                        {"type": "set_thinking_level", "level": "low"},
                        {"type": "set_model", "provider": "fake", "modelId": "fake-model"},
                        {"type": "set_session_name", "name": "n"}, {"type": "new_session"}):
            await data(client, command["type"], **{k: v for k, v in command.items() if k != "type"})
        state = await data(client, "get_state")
    assert (state["steeringMode"], state["followUpMode"], state["thinkingLevel"]) == (
        "one-at-a-time", "one-at-a-time", "low")
    assert (global_settings.read_bytes(), project_settings.read_bytes()) == before
    # the named session is saved (sessions/), but no settings file is written or added
    assert sorted(p.name for p in global_settings.parent.iterdir()) == ["models.json", "sessions", "settings.json"]


async def test_a_missing_model_or_key_is_one_line_on_stderr_at_start_up(agent_env, tmp_path):
    """Without a key RPC mode starts (stdout stays protocol-only) and says on stderr what prompts lack."""
    bare = dict(agent_env, HOME=str(tmp_path / "h1"), AGENT_FORGE_DIR=str(tmp_path / "a1"))  # keys scrubbed
    named = dict(bare, AGENT_FORGE_DIR=str(tmp_path / "a2"))
    (tmp_path / "a2").mkdir()
    (tmp_path / "a2" / "settings.json").write_text(
        json.dumps({"defaultProvider": "anthropic", "defaultModel": "claude-sonnet-4-5"}))
    stderr = {}
    for label, env in (("none", bare), ("no-key", named), ("ok", agent_env)):
        client = await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=env)
        reply = await client.send({"type": "get_state"})
        assert await client.close() == 0 and reply["success"] is True and client.invalid_lines == []
        stderr[label] = [line for line in client.stderr.decode().splitlines() if "prompts will fail" in line]
    [none], [no_key] = stderr["none"], stderr["no-key"]
    assert "No model available" in none and "ANTHROPIC_API_KEY" in none and "models.json" in none
    assert "model anthropic/claude-sonnet-4-5" in no_key and "ANTHROPIC_API_KEY" in no_key
    assert stderr["ok"] == []
