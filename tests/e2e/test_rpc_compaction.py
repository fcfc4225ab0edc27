"""End to end: compaction over RPC, the real CLI against the loopback fake LLM server (`compact`,
`set_auto_compaction`, `compaction_start/end`, `summarization_retry_*`, overflow recovery, both strategies)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient
from support.doubles import roles_and_texts

W = "word " * 40  # 50 tokens at chars/4
SUMMARY = "<transcript>"  # occurs only in our summary requests (prompts.summary_prompt)
VERBATIM = "deletion range"  # occurs only in verbatim-line requests (prompts.verbatim_prompt)
OVERFLOW = {"status": 400, "body": {"error": {"message": "This model's maximum context length is 128000 tokens. "
                                              "Please reduce the length of the messages.",
                                              "type": "invalid_request_error", "code": "context_length_exceeded"}}}


async def start(env, cwd, *args):
    return await RpcClient.start(list(args), cwd=str(cwd), env=env)


def types(events):
    return [e["type"] for e in events if e["type"] != "message_update"]


def sent(fake_llm, index):
    """(role, text) of each message of request `index`, system prompt left out."""
    return roles_and_texts(fake_llm.requests[index]["body"]["messages"])


def session_entries(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()[1:]]


async def exchanges(client, *questions):
    for question in questions:
        await client.prompt_and_wait(question)


async def test_manual_summary_compaction(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"compaction": {"keepRecentTokens": 60}})
    fake_llm.set_script([{"text": "one " + W}, {"match": SUMMARY, "text": "## Objective\nTrivia so far.",
                                                "usage": {"input": 500, "output": 30}},
                         {"text": "two " + W}, {"text": "after"}])
    async with await start(env, tmp_path) as client:
        await exchanges(client, "first " + W, "second " + W)
        reply_task = asyncio.ensure_future(client.send({"type": "compact", "customInstructions": "Trivia only"}))
        events = await client.wait_for("compaction_end")
        reply = await reply_task
        state = (await client.send({"type": "get_state"}))["data"]
        stats = (await client.send({"type": "get_session_stats"}))["data"]
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
        entries = (await client.send({"type": "get_entries"}))["data"]["entries"]
        await client.prompt_and_wait("third")
        stats_after = (await client.send({"type": "get_session_stats"}))["data"]
    assert types(events) == ["compaction_start", "compaction_end"]
    assert events[0] == {"type": "compaction_start", "reason": "manual"}
    assert reply["success"] is True and events[1]["result"] == reply["data"]
    data = reply["data"]
    assert data["summary"] == "## Objective\nTrivia so far." and data["usage"]["input"] == 500
    assert data["details"]["strategy"] == "summary" and data["tokensBefore"] > 0
    user_entries = [e for e in entries if e["type"] == "message" and e["message"]["role"] == "user"]
    assert data["firstKeptEntryId"] == user_entries[1]["id"]
    assert "pay particular attention to: Trivia only" in sent(fake_llm, 2)[0][1]
    assert [role for role, _ in sent(fake_llm, 2)] == ["user"]
    assert "tools" not in fake_llm.requests[2]["body"]
    assert state["isCompacting"] is False and state["messageCount"] == 3
    assert [m["role"] for m in messages] == ["compactionSummary", "user", "assistant"]
    assert stats["contextUsage"]["tokens"] is None and stats["contextUsage"]["percent"] is None
    assert stats["tokens"]["input"] >= 500  # the summary's usage counts
    assert [e["message"]["role"] for e in entries if e["type"] == "message"] == ["user", "assistant"] * 2
    assert entries[-1]["type"] == "compaction"  # get_entries keeps the pre-compaction history
    roles = sent(fake_llm, 3)
    assert roles[0][0] == "user" and "Trivia so far." in roles[0][1]
    assert [text[:6] for _, text in roles[1:]] == ["second", "two wo", "third"]
    assert stats_after["contextUsage"]["tokens"] is not None


async def test_manual_verbatim_compaction_and_resume_in_a_new_process(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"compaction": {"strategy": "verbatim-lines"}})
    fake_llm.set_script([{"text": "one"}, {"text": "two"}, {"text": "three"},
                         {"match": VERBATIM, "text": "1,2"}, {"text": "four"}, {"text": "five"}])
    async with await start(env, tmp_path) as client:
        await exchanges(client, "first", "second", "third")
        path = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
        before = Path(path).read_bytes()
        reply = await client.send({"type": "compact"})
        end = (await client.wait_for("compaction_end"))[-1]
        await client.prompt_and_wait("fourth")
    data = reply["data"]
    assert reply["success"] is True and end["result"] == data
    assert data["compactedText"] == "(filtered 2 lines)\n[User]: second\n[Assistant]: two"
    assert data["rung"] == "planned" and data["promptVersion"] >= 1
    assert data["parameters"] == {"compression_ratio": 0.5, "preserve_recent": 2, "query": "third"}
    assert data["stats"]["linesBefore"] == 4 and data["stats"]["linesDeleted"] == 2
    assert data["stats"]["rangeCount"] == 1 and Path(data["backupPath"]).read_bytes() == before
    stored = session_entries(path)
    compaction = next(e for e in stored if e["type"] == "compaction")
    assert compaction["details"]["strategy"] == "verbatim-lines"
    assert compaction["firstKeptEntryId"] == data["firstKeptEntryId"]
    first_view = sent(fake_llm, 4)
    assert "(filtered 2 lines)" in first_view[0][1] and [t for _, t in first_view[1:]] == ["third", "three", "fourth"]

    async with await start(env, tmp_path, "--session", path) as client:
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
        await client.prompt_and_wait("fifth")
    assert messages[0]["role"] == "compactionSummary"
    resumed_view = sent(fake_llm, 5)
    assert resumed_view == [*first_view, ("assistant", "four"), ("user", "fifth")]


async def test_threshold_compaction_during_a_long_tool_loop(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(context_window=8000, settings={
        "compaction": {"keepRecentTokens": 10, "reserveTokens": 2000}})
    call = {"name": "bash", "arguments": {"command": "echo step"}}
    fake_llm.set_script([
        {"tool_calls": [call], "usage": {"input": 1000}},
        {"tool_calls": [call], "usage": {"input": 3000}},
        {"tool_calls": [call], "usage": {"input": 6500}},  # over 8000 - 2000 after this turn's tools
        {"match": SUMMARY, "text": "## Objective\nLooping.", "usage": {"input": 300, "output": 20}},
        {"tool_calls": [call], "usage": {"input": 1500}},
        {"text": "loop done", "usage": {"input": 1600}},
    ])
    async with await start(env, tmp_path) as client:
        events = await client.prompt_and_wait("run the loop", timeout=60)
        stats = (await client.send({"type": "get_session_stats"}))["data"]
    kinds = types(events)
    assert kinds.count("compaction_start") == 1 and kinds.count("agent_start") == 1
    position = kinds.index("compaction_start")
    assert kinds[position - 1] == "turn_end" and kinds[position + 1:position + 3] == ["compaction_end", "turn_start"]
    assert kinds.count("turn_end") == 5  # three turns before, two after
    end = next(e for e in events if e["type"] == "compaction_end")
    assert end["reason"] == "threshold" and end["result"]["tokensBefore"] >= 6500
    summary_prompt = sent(fake_llm, 3)[0][1]
    assert "<request-in-progress>\n[User]: run the loop" in summary_prompt
    assert '[Tool call]: bash {"command": "echo step"}' in summary_prompt
    after = fake_llm.requests[4]["body"]["messages"]
    assert [m["role"] for m in after if m["role"] != "system"][:1] == ["user"]
    assert "Looping." in json.dumps(after) and "run the loop" not in json.dumps(after)
    assert [m["role"] for m in after][-2:] == ["assistant", "tool"]  # the kept call and its result
    assert stats["contextUsage"]["tokens"] == 1600 + 20


async def test_overflow_compacts_and_retries_the_prompt(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"compaction": {"keepRecentTokens": 30}})
    fake_llm.set_script([{"text": "one " + W}, OVERFLOW, {"match": SUMMARY, "text": "## Objective\nShrunk."},
                         {"text": "recovered answer"}])
    async with await start(env, tmp_path) as client:
        await client.prompt_and_wait("first " + W)
        events = await client.prompt_and_wait("second " + W)
    assert types(events)[types(events).index("agent_end"):] == [
        "agent_end", "compaction_start", "compaction_end", "agent_start", "turn_start", "message_start",
        "message_end", "turn_end", "agent_end", "agent_settled"]
    first_end, second_end = [e for e in events if e["type"] == "agent_end"]
    assert first_end["willRetry"] is True and first_end["messages"][-1]["stopReason"] == "error"
    assert second_end["willRetry"] is False and second_end["messages"][0]["content"][0]["text"] == "recovered answer"
    start_event, end = [e for e in events if e["type"].startswith("compaction")]
    assert start_event == {"type": "compaction_start", "reason": "overflow"}
    assert end["reason"] == "overflow" and end["willRetry"] is True and end["aborted"] is False
    assert end["result"]["summary"] == "## Objective\nShrunk."
    assert events[-1] == {"type": "agent_settled", "aborted": False}
    retried = sent(fake_llm, 3)
    assert "Shrunk." in retried[0][1] and [t[:6] for _, t in retried[1:]] == ["second"]


async def test_a_second_overflow_is_reported_as_unresolved(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"compaction": {"keepRecentTokens": 30}})
    fake_llm.set_script([{"text": "one " + W}, OVERFLOW, {"match": SUMMARY, "text": "## Objective\nShrunk."},
                         OVERFLOW, {"text": "never requested"}])
    async with await start(env, tmp_path) as client:
        await client.prompt_and_wait("first " + W)
        events = await client.prompt_and_wait("second " + W)
        state = (await client.send({"type": "get_state"}))["data"]
    assert len(fake_llm.requests) == 4
    assert [e["willRetry"] for e in events if e["type"] == "agent_end"] == [True, False]
    assert types(events)[-4:] == ["agent_end", "compaction_start", "compaction_end", "agent_settled"]
    final = [e for e in events if e["type"] == "compaction_end"][-1]
    assert final["unresolvedOverflow"] is True and final["result"] is None and final["willRetry"] is False
    assert final["errorMessage"].startswith("Context overflow persists after compaction: HTTP 400 from ")
    assert state["isStreaming"] is False and state["isCompacting"] is False


async def test_a_503_during_summarisation_is_retried_with_events(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"compaction": {"keepRecentTokens": 60}, "retry": {"baseDelayMs": 1}})
    fake_llm.set_script([{"text": "one " + W}, {"match": SUMMARY, "status": 503},
                         {"match": SUMMARY, "text": "## Objective\nAfter a retry."}, {"text": "two " + W}])
    async with await start(env, tmp_path) as client:
        await exchanges(client, "first " + W, "second " + W)
        reply = await client.send({"type": "compact"})
        events = [r for r in client.records if r.get("type", "").startswith(("summarization", "compaction"))]
    assert reply["success"] is True and reply["data"]["summary"] == "## Objective\nAfter a retry."
    assert [e["type"] for e in events] == [
        "compaction_start", "summarization_retry_scheduled", "summarization_retry_attempt_start",
        "summarization_retry_finished", "compaction_end"]
    scheduled = events[1]
    assert (scheduled["attempt"], scheduled["maxAttempts"], scheduled["delayMs"]) == (1, 3, 1)
    assert scheduled["errorMessage"].startswith("HTTP 503 from ")
    assert events[2] == {"type": "summarization_retry_attempt_start", "source": "compaction", "reason": "manual"}
    assert events[3] == {"type": "summarization_retry_finished"}


async def test_end_of_input_ends_a_summarisation_retry_wait_as_it_ends_a_runs(agent_env_factory, fake_llm, tmp_path):
    """A summary request went on retrying with its whole backoff after stdin closed (a minute here; with a
    stalled server minutes more), where a run's retry is cancelled (docs/rpc.md, "End of input"; round 35)."""
    env = agent_env_factory(settings={"compaction": {"keepRecentTokens": 60}, "retry": {"baseDelayMs": 60_000}})
    fake_llm.set_script([{"text": "one " + W}, {"text": "two " + W}, {"match": SUMMARY, "status": 503}])
    client = await start(env, tmp_path)
    await exchanges(client, "first " + W, "second " + W)
    compact = client.send_nowait({"type": "compact"})
    await client.wait_for("summarization_retry_scheduled")
    assert await client.close(timeout=20) == 0  # not killed after 20 s: the 60 s wait was cancelled
    reply = await compact
    assert reply["success"] is False and "503" in reply["error"]
    assert len([r for r in fake_llm.requests if SUMMARY in json.dumps(r["body"])]) == 1
    assert [r["type"] for r in client.records if r.get("type", "").startswith("summarization")] == [
        "summarization_retry_scheduled", "summarization_retry_finished"]


async def test_abort_during_compaction(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"compaction": {"keepRecentTokens": 60}})
    fake_llm.set_script([{"text": "one " + W}, {"match": SUMMARY, "text": "never", "hang": True},
                         {"text": "two " + W}, {"text": "after abort"}])
    async with await start(env, tmp_path) as client:
        await exchanges(client, "first " + W, "second " + W)
        compact = client.send_nowait({"type": "compact"})
        await client.wait_for("compaction_start")
        await asyncio.to_thread(fake_llm.wait_for,
                                lambda: len(fake_llm.requests) == 3 and fake_llm.requests[2]["hanging"])
        state = (await client.send({"type": "get_state"}))["data"]
        aborted = await client.send({"type": "abort"})
        end = (await client.wait_for("compaction_end"))[-1]
        reply = await asyncio.wait_for(compact, 10)
        entries = (await client.send({"type": "get_entries"}))["data"]["entries"]
        events = await client.prompt_and_wait("go on")
    assert state["isCompacting"] is True and aborted["success"] is True
    assert end == {"type": "compaction_end", "reason": "manual", "result": None, "aborted": True, "willRetry": False}
    assert reply["success"] is False and reply["error"] == "Compaction aborted"
    assert "compaction" not in [e["type"] for e in entries]
    assert events[-1] == {"type": "agent_settled", "aborted": False}


async def test_malformed_deletion_ranges_are_repaired_or_fall_back(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"compaction": {"strategy": "verbatim-lines", "preserveRecent": 1}})
    fake_llm.set_script([{"text": "one"}, {"text": "two"},
                         {"match": VERBATIM, "text": "Sure! Delete these:\n```\n2,1\n```"},
                         {"text": "three"},
                         {"match": VERBATIM, "text": "Nothing here can go."}])
    async with await start(env, tmp_path) as client:
        await exchanges(client, "first", "second")
        repaired = (await client.send({"type": "compact"}))["data"]
        await client.prompt_and_wait("third")
        fallback = (await client.send({"type": "compact"}))["data"]
    assert repaired["rung"] == "repaired"
    assert repaired["compactedText"] == "(filtered 2 lines)\n[User]: second"
    assert fallback["rung"] == "mechanical"
    assert fallback["stats"]["linesBefore"] == 4 and fallback["stats"]["linesDeleted"] == 2
    assert fallback["compactedText"] == "(filtered 1 lines)\n[User]: second\n(filtered 1 lines)\n[User]: third"


async def test_set_auto_compaction_turns_the_threshold_off_for_this_session(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(context_window=8000, settings={"compaction": {"keepRecentTokens": 10,
                                                                          "reserveTokens": 2000}})
    settings_file = Path(env["AGENT_FORGE_DIR"]) / "settings.json"
    settings_before = settings_file.read_text()
    fake_llm.set_script([{"text": "one " + W}, {"text": "big", "usage": {"input": 7000}},
                         {"text": "bigger", "usage": {"input": 7500}}])
    async with await start(env, tmp_path) as client:
        reply = await client.send({"type": "set_auto_compaction", "enabled": False})
        bad = await client.send({"type": "set_auto_compaction"})
        events = [*await client.prompt_and_wait("first " + W), *await client.prompt_and_wait("second")]
        await client.prompt_and_wait("third")
        state = (await client.send({"type": "get_state"}))["data"]
    assert reply == {"type": "response", "command": "set_auto_compaction", "success": True, "id": reply["id"]}
    assert bad["success"] is False and "enabled" in bad["error"]
    assert "compaction_start" not in types(events) and state["autoCompactionEnabled"] is False
    assert len(fake_llm.requests) == 3 and settings_file.read_text() == settings_before


async def test_prompt_after_agent_end_during_post_run_compaction_is_queued(agent_env_factory, fake_llm, tmp_path):
    """Older clients finish a run on agent_end (SPEC-NOTES) and may prompt while the session still compacts."""
    env = agent_env_factory(context_window=8000, settings={
        "compaction": {"keepRecentTokens": 10, "reserveTokens": 2000}})
    fake_llm.set_script([
        {"text": "small answer " + W, "usage": {"input": 1000}},
        {"text": "big answer " + W, "usage": {"input": 7000}},  # over the threshold once this run ends
        {"match": SUMMARY, "text": "## Objective\nShort.", "usage": {"input": 300, "output": 20},
         "hang_after": 1, "hang_ms": 20000},
        {"text": "answer to the next prompt", "usage": {"input": 500}},
    ])
    async with await start(env, tmp_path) as client:
        await client.prompt_and_wait("first " + W)
        await client.send({"type": "prompt", "message": "second " + W})
        await client.wait_for("agent_end")
        await client.wait_for("compaction_start")
        reply = await client.send({"type": "prompt", "message": "next"})
        await asyncio.to_thread(fake_llm.wait_for_requests, 3)  # the summary request is streaming (hung)
        fake_llm.release_hangs()
        events = await client.wait_for("agent_settled", timeout=60)
    assert reply["success"] is True and reply["data"]["disposition"] == "queued"
    assert "compaction_end" in types(events)
    final = [e for e in events if e["type"] == "message_end"][-1]["message"]
    assert final["content"][0]["text"] == "answer to the next prompt"


# -- one context estimate (issue 10, 18) ---------------------------------------------------------------------

def without_streamed_usage(env):
    """Make the fake provider a server that sends no usage while streaming (the llama-cpp-python case)."""
    path = Path(env["AGENT_FORGE_DIR"]) / "models.json"
    config = json.loads(path.read_text())
    config["providers"]["fake"]["compat"] = {"supportsUsageInStreaming": False}
    path.write_text(json.dumps(config))
    return env


def chars4(text):
    return -(-len(text) // 4)


async def test_context_usage_without_reported_usage_counts_system_prompt_and_tools(agent_env_factory, fake_llm,
                                                                                   tmp_path):
    env = without_streamed_usage(agent_env_factory(settings={"compaction": {"keepRecentTokens": 10}}))
    fake_llm.set_script([{"text": "one " + W}, {"text": "two " + W},
                         {"match": SUMMARY, "text": "## Objective\nShort."}])
    async with await start(env, tmp_path) as client:
        await exchanges(client, "first " + W, "second " + W)
        stats = (await client.send({"type": "get_session_stats"}))["data"]
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
        compacted = await client.send({"type": "compact"})
    body = fake_llm.requests[1]["body"]
    assert "stream_options" not in body
    assert all(m["usage"]["input"] == 0 for m in messages if m["role"] == "assistant")  # nothing was reported
    system = body["messages"][0]["content"]
    tools = [{"name": t["function"]["name"], "description": t["function"]["description"],
              "parameters": t["function"]["parameters"]} for t in body["tools"]]
    overhead = chars4(system) + chars4(json.dumps(tools, ensure_ascii=False))
    conversation = sum(chars4("".join(b["text"] for b in m["content"])) for m in messages)
    assert overhead > 1000  # the default system prompt and four tools dwarf the 4 short messages
    assert stats["contextUsage"]["tokens"] == conversation + overhead
    assert compacted["success"] is True and compacted["data"]["tokensBefore"] == stats["contextUsage"]["tokens"]


async def test_context_usage_is_back_after_a_compaction_once_a_response_came_without_usage(
        agent_env_factory, fake_llm, tmp_path):
    """Null only from a compaction until the next response, with or without reported usage (docs/rpc.md)."""
    env = without_streamed_usage(agent_env_factory(settings={"compaction": {"keepRecentTokens": 10}}))
    fake_llm.set_script([{"text": "one " + W}, {"text": "two " + W},
                         {"match": SUMMARY, "text": "## Objective\nShort."}, {"text": "three"}, {"text": "four"}])
    async with await start(env, tmp_path) as client:
        await exchanges(client, "first " + W, "second " + W)
        assert (await client.send({"type": "compact"}))["success"] is True
        compacted = (await client.send({"type": "get_session_stats"}))["data"]["contextUsage"]
        usages = []
        for text in ("after", "again"):
            await exchanges(client, text)
            usages.append((await client.send({"type": "get_session_stats"}))["data"]["contextUsage"])
    assert compacted["tokens"] is None and compacted["percent"] is None
    assert all(isinstance(u["tokens"], int) and u["percent"] == u["tokens"] / u["contextWindow"] * 100
               for u in usages)
    assert 0 < usages[0]["tokens"] < usages[1]["tokens"]  # the estimate grows with the conversation


async def test_an_aborted_call_with_huge_partial_arguments_counts_nowhere(agent_env_factory, fake_llm, tmp_path):
    """Issue 10: an aborted turn is not sent to the model, so its partial tool-call arguments (here over 600 KB,
    more than the 128k window at chars/4) count neither in `contextUsage` nor in the threshold trigger: a
    compaction would not shrink any request."""
    big = json.dumps({"path": "big.txt", "content": "Q" * 3_000_000})
    fake_llm.set_script([{"text": "first answer"},
                         {"tool_calls": [{"name": "write", "arguments": big}], "args_chunk_chars": 3000,
                          "hang_after": 300},  # ~900 KB, then the stream waits for the abort's disconnect
                         {"match": SUMMARY, "text": "## Objective\nNot needed."}, {"text": "after"}])
    async with await start(agent_env_factory(), tmp_path) as client:
        await exchanges(client, "first question")
        assert (await client.send({"type": "prompt", "message": "go"}))["success"] is True
        received = 0
        while received < 600_000:
            event = await client.next_event()
            if event["type"] == "message_update" and event["assistantMessageEvent"]["type"] == "toolcall_delta":
                received += len(event["assistantMessageEvent"]["delta"])
        assert (await client.send({"type": "abort"}))["success"] is True
        await client.wait_for("agent_settled")
        usage = (await client.send({"type": "get_session_stats"}))["data"]["contextUsage"]
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
        events = await client.prompt_and_wait("next")
    aborted = [m for m in messages if m.get("stopReason") == "aborted"]
    kept = json.dumps(aborted[0]["content"])  # kept in the session, its never-run arguments cut (docs/rpc.md)
    assert len(aborted) == 1 and len(kept) < 10_000 and "more characters cut: the call never ran" in kept
    assert 0 < usage["tokens"] < 1000 and usage["percent"] < 1
    assert "compaction_start" not in types(events)
    assert len(fake_llm.requests) == 3 and not any(SUMMARY in json.dumps(r["body"]) for r in fake_llm.requests)
    assert [text for _, text in sent(fake_llm, 2)] == ["first question", "first answer", "go", "next"]


# -- small context windows (issue 10, 13) --------------------------------------------------------------------

LONG = "word " * 800  # 1,000 tokens at chars/4


async def test_an_8k_model_recovers_from_an_overflow_with_default_settings(agent_env_factory, fake_llm, tmp_path):
    """Default keepRecentTokens (20,000) and reserveTokens (16,384) are larger than the whole window: they are
    capped at a quarter of it, so the overflow compacts instead of failing with "Nothing to compact"."""
    env = agent_env_factory(context_window=8192, max_tokens=8192)
    fake_llm.set_script([{"text": "one"}, {"text": "two"}, {"text": "three"}, OVERFLOW,
                         {"match": SUMMARY, "text": "## Objective\nLong questions."},
                         {"text": "recovered"}, {"text": "and the next one works too"}])
    async with await start(env, tmp_path) as client:
        await exchanges(client, "first " + LONG, "second " + LONG, "third " + LONG)
        events = await client.prompt_and_wait("fourth " + LONG)
        after = await client.prompt_and_wait("fifth")
    end = next(e for e in events if e["type"] == "compaction_end")
    assert end["reason"] == "overflow" and end["result"] is not None and end["willRetry"] is True
    assert end["result"]["summary"].startswith("## Objective\nLong questions.")
    summary_request = json.dumps(fake_llm.requests[4]["body"])
    assert "first word" in summary_request and fake_llm.requests[4]["body"]["max_completion_tokens"] < 8192
    retried = sent(fake_llm, 5)
    assert "Long questions." in retried[0][1] and [t[:6] for _, t in retried[1:]] == ["second", "two", "third ", "three", "fourth"]
    answers = [m["content"][0]["text"] for m in (e["message"] for e in events + after if e["type"] == "message_end")
               if m["role"] == "assistant" and m["stopReason"] == "stop"]
    assert answers == ["recovered", "and the next one works too"]
    assert "compaction_start" not in types(after)


async def test_an_8k_model_compacts_at_its_own_threshold_with_default_settings(agent_env_factory, fake_llm,
                                                                             tmp_path):
    env = agent_env_factory(context_window=8192, max_tokens=8192)
    fake_llm.set_script([{"text": "one", "usage": {"input": 3400}}, {"text": "two", "usage": {"input": 5400}},
                         {"text": "three", "usage": {"input": 7400}},  # over 8192 - 2048 once this run ends
                         {"match": SUMMARY, "text": "## Objective\nEarly turns."}, {"text": "four"}])
    async with await start(env, tmp_path) as client:
        await exchanges(client, "first " + LONG * 2, "second " + LONG * 2)
        events = await client.prompt_and_wait("third " + LONG * 2)
        await client.prompt_and_wait("fourth")
    end = next(e for e in events if e["type"] == "compaction_end")
    assert end["reason"] == "threshold" and end["result"]["tokensBefore"] >= 7400
    assert end["result"]["firstKeptEntryId"] is not None
    assert "Early turns." in sent(fake_llm, 4)[0][1]


async def test_an_overflow_compaction_cannot_fix_says_what_to_do_and_a_later_prompt_recovers(
        agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(context_window=8192, max_tokens=8192)
    fake_llm.set_script([OVERFLOW, OVERFLOW, {"match": SUMMARY, "text": "## Objective\nA huge paste."},
                         {"text": "answer to the small one"}])
    async with await start(env, tmp_path) as client:
        events = await client.prompt_and_wait("huge " + LONG * 7)  # under the window (a larger one is refused)
        later = await client.prompt_and_wait("small")
    end = [e for e in events if e["type"] == "compaction_end"][-1]
    assert end["unresolvedOverflow"] is True and end["result"] is None
    message = end["errorMessage"]
    assert message.startswith("Context overflow cannot be resolved by compaction (Nothing to compact")
    assert "maximum context length" in message  # the provider's own words
    assert "about 2048 tokens, compaction.keepRecentTokens" in message and "8192-token context window" in message
    for remedy in ("new session (new_session)", "larger context window", "lower compaction.keepRecentTokens"):
        assert remedy in message
    # The paste is in an earlier turn now: larger than the kept budget, it is condensed instead of kept.
    recovered = next(e for e in later if e["type"] == "compaction_end")
    assert recovered["result"] is not None and recovered["willRetry"] is True
    retried = sent(fake_llm, 3)
    assert "A huge paste." in retried[0][1] and [t for _, t in retried[1:]] == ["small"]
    final = [e["message"] for e in later if e["type"] == "message_end"][-1]
    assert final["stopReason"] == "stop" and final["content"][0]["text"] == "answer to the small one"


async def test_compact_during_a_run_runs_at_the_hand_over_before_queued_follow_ups(agent_env_factory, fake_llm,
                                                                                  tmp_path):
    """`compact` aborts the run, compacts at its hand-over and answers then, while the queued follow-ups' run
    (hung here until the test has the answer) goes on afterwards."""
    env = agent_env_factory(settings={"compaction": {"keepRecentTokens": 30}})
    fake_llm.set_script([{"text": "one " + W}, {"text": "never finished", "hang": True, "hang_ms": 60000},
                         {"match": SUMMARY, "text": "## Objective\nShrunk."},
                         {"text": "f1 answered", "hang": True, "hang_ms": 60000}, {"text": "f2 answered"}])
    async with await start(env, tmp_path) as client:
        await client.prompt_and_wait("first " + W)
        await client.send({"type": "prompt", "message": "go"})
        await asyncio.to_thread(fake_llm.wait_for_requests, 2)
        for text in ("f1", "f2"):
            assert (await client.send({"type": "follow_up", "message": text}))["success"] is True
        reply = await client.send({"type": "compact"}, timeout=30)
        state = (await client.send({"type": "get_state"}))["data"]
        await asyncio.to_thread(fake_llm.wait_for_requests, 4)
        fake_llm.release_hangs()
        settled = await client.wait_for("agent_settled", timeout=30)
    assert reply["success"] is True and reply["data"]["summary"] == "## Objective\nShrunk."
    assert state["isStreaming"] is True and state["isCompacting"] is False
    assert SUMMARY in json.dumps(fake_llm.requests[2]["body"])
    after = json.dumps(fake_llm.requests[3]["body"])
    assert "Shrunk." in after and '"f1"' in after
    kinds = types(settled)
    assert kinds.index("compaction_end") < max(i for i, kind in enumerate(kinds) if kind == "agent_start")
    assert settled[-1]["type"] == "agent_settled" and len(fake_llm.requests) == 5


async def test_compact_sent_during_a_run_never_compacts_the_next_session(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"compaction": {"keepRecentTokens": 30}})
    fake_llm.set_script([{"text": "one " + W}, {"text": "never finished", "hang": True, "hang_ms": 60000},
                         {"match": SUMMARY, "text": "## Objective\nShrunk."}, {"text": "spare"}])
    async with await start(env, tmp_path) as client:
        await client.prompt_and_wait("first " + W)
        old_file = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
        await client.send({"type": "prompt", "message": "go"})
        await asyncio.to_thread(fake_llm.wait_for_requests, 2)
        compact = client.send_nowait({"type": "compact"})  # written before new_session
        switched = await client.send({"type": "new_session"}, timeout=30)
        reply = await asyncio.wait_for(compact, 30)
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
        new_file = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    assert switched["success"] is True and messages == []
    old = [json.loads(line)["type"] for line in Path(old_file).read_text().splitlines()]
    # Either it compacted the session it was sent to before the switch, or the switch aborted it: never the next one.
    if reply["success"]:
        assert "compaction" in old
    else:
        assert reply["error"] in ("Compaction aborted",) or "session" in reply["error"].lower(), reply["error"]
    new = Path(new_file)
    assert not new.exists() or "compaction" not in [json.loads(line)["type"] for line in new.read_text().splitlines()]


@pytest.mark.parametrize("queue", ["follow_up", "steer"])
async def test_an_overflow_with_a_message_queued_recovers_before_the_message_goes_on(agent_env_factory, fake_llm,
                                                                                    tmp_path, queue):
    """The overflowed attempt is compacted and repeated first; the message queued while it streamed is delivered
    after the repeated answer, on the compacted context, as it would have been had the attempt succeeded."""
    env = agent_env_factory(settings={"compaction": {"keepRecentTokens": 30}})
    overflow = {"error_event": OVERFLOW["body"]["error"], "error_after": 0, "hang": True, "hang_ms": 60000}
    fake_llm.set_script([{"text": "one " + W}, overflow, {"match": SUMMARY, "text": "## Objective\nShrunk."},
                         {"text": "recovered answer"}, {"text": "queued answer"}])
    async with await start(env, tmp_path) as client:
        await client.prompt_and_wait("first " + W)
        await client.send({"type": "prompt", "message": "second " + W})
        await asyncio.to_thread(fake_llm.wait_for_requests, 2)  # the attempt streams (hung) when the message comes
        assert (await client.send({"type": queue, "message": "then this"}))["success"] is True
        fake_llm.release_hangs()
        events = await client.wait_for("agent_settled", timeout=30)
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    assert [e["willRetry"] for e in events if e["type"] == "agent_end"][0] is True
    end = next(e for e in events if e["type"] == "compaction_end")
    assert end["reason"] == "overflow" and end["willRetry"] is True and end["result"] is not None
    assert len(fake_llm.requests) == 5 and "then this" not in json.dumps(fake_llm.requests[2]["body"])
    repeated = sent(fake_llm, 3)
    assert "Shrunk." in repeated[0][1] and [t[:6] for _, t in repeated[1:]] == ["second"]
    delivered = sent(fake_llm, 4)
    assert "Shrunk." in delivered[0][1] and delivered[-2:] == [("assistant", "recovered answer"), ("user", "then this")]
    assert [m.get("stopReason") for m in messages if m["role"] == "assistant"][-2:] == ["stop", "stop"]
    assert messages[-1]["content"][0]["text"] == "queued answer"
    assert events[-1] == {"type": "agent_settled", "aborted": False}


async def test_a_refused_second_compact_leaves_queued_messages_to_the_running_compaction(agent_env_factory,
                                                                                        fake_llm, tmp_path):
    """`compact` while a compaction runs answers "already in progress" and starts nothing: the follow-up queued
    meanwhile runs once the first compaction is over, on the compacted context."""
    env = agent_env_factory(settings={"compaction": {"keepRecentTokens": 30}})
    fake_llm.set_script([{"text": "one " + W}, {"text": "two " + W},
                         {"match": SUMMARY, "text": "## Objective\nShrunk.", "hang": True, "hang_ms": 60000},
                         {"text": "queued answer"}])
    async with await start(env, tmp_path) as client:
        await exchanges(client, "first " + W, "second " + W)
        compact = client.send_nowait({"type": "compact"})
        await asyncio.to_thread(fake_llm.wait_for_requests, 3)  # the summary request hangs
        queued = await client.send({"type": "prompt", "message": "then this", "streamingBehavior": "followUp"})
        refused = await client.send({"type": "compact"})
        state = (await client.send({"type": "get_state"}))["data"]
        fake_llm.release_hangs()
        reply = await asyncio.wait_for(compact, 30)
        settled = await client.wait_for("agent_settled", timeout=30)
    assert queued["data"]["disposition"] == "queued"
    assert refused["success"] is False and refused["error"] == "Compaction is already in progress"
    assert state["isStreaming"] is False and state["isCompacting"] is True
    assert reply["success"] is True
    kinds = types(client.records)
    assert kinds.index("compaction_end") < kinds.index("agent_start", kinds.index("compaction_start"))
    assert "Shrunk." in sent(fake_llm, 3)[0][1] and sent(fake_llm, 3)[-1] == ("user", "then this")
    assert settled[-1] == {"type": "agent_settled", "aborted": False} and len(fake_llm.requests) == 4


async def test_compact_while_idle_leaves_a_steer_queued_while_idle_for_the_next_prompt(agent_env_factory,
                                                                                     fake_llm, tmp_path):
    """A steer sent while idle rides with the next prompt; a `compact` in between does not start it."""
    env = agent_env_factory(settings={"compaction": {"keepRecentTokens": 30}})
    fake_llm.set_script([{"text": "one " + W}, {"text": "two " + W},
                         {"match": SUMMARY, "text": "## Objective\nShrunk."}, {"text": "answer"}])
    async with await start(env, tmp_path) as client:
        await exchanges(client, "first " + W, "second " + W)
        assert (await client.send({"type": "steer", "message": "steered"}))["data"]["disposition"] == "queued"
        reply = await client.send({"type": "compact"}, timeout=30)
        state = (await client.send({"type": "get_state"}))["data"]
        requests_after_compact = len(fake_llm.requests)
        await client.prompt_and_wait("go")
    assert reply["success"] is True and state["isStreaming"] is False and requests_after_compact == 3
    assert [t for _, t in sent(fake_llm, 3)[-2:]] == ["go", "steered"] and "Shrunk." in sent(fake_llm, 3)[0][1]


async def test_a_prompt_sent_right_after_abort_during_a_manual_compaction_is_queued_and_sent(
        agent_env_factory, fake_llm, tmp_path):
    """The abort cancels only what came before it: the follow-up in the same write runs once the compaction
    ended (k1, fresh eyes round 4)."""
    env = agent_env_factory(settings={"compaction": {"keepRecentTokens": 60}})
    fake_llm.set_script([{"text": "one " + W}, {"match": SUMMARY, "text": "never", "hang": True},
                         {"text": "two " + W}, {"text": "after abort"}])
    async with await start(env, tmp_path) as client:
        await exchanges(client, "first " + W, "second " + W)
        client.send_nowait({"type": "compact"})
        await client.wait_for("compaction_start")
        await asyncio.to_thread(fake_llm.wait_for,
                                lambda: len(fake_llm.requests) == 3 and fake_llm.requests[2]["hanging"])
        client.write_raw(b'{"id":"a","type":"abort"}\n'
                         b'{"id":"q","type":"prompt","message":"queued next","streamingBehavior":"followUp"}\n')
        events = await client.wait_for("agent_settled", timeout=10)
    replies = {e["id"]: e for e in events if e["type"] == "response" and e["id"] in ("a", "q")}
    assert replies["q"]["success"] is True and replies["q"]["data"] == {"disposition": "queued"}
    assert replies["a"]["success"] is True
    assert events[-1] == {"type": "agent_settled", "aborted": False}
    assert "queued next" in json.dumps(fake_llm.requests[-1]["body"]["messages"][-1])


async def test_a_failing_threshold_compaction_is_not_tried_again_before_each_retry(agent_env_factory, fake_llm,
                                                                                   tmp_path):
    """Issues 10/12: the server fails everything; one prompt makes 1 + maxRetries summary requests and
    1 + maxRetries model calls (it made a compaction attempt before each retry), and the error says so once."""
    env = agent_env_factory(context_window=8000, settings={
        "compaction": {"keepRecentTokens": 10, "reserveTokens": 2000}, "retry": {"maxRetries": 2, "baseDelayMs": 1}})
    failing = {"status": 500, "body": {"error": {"message": "boom", "type": "api_error"}}}
    fake_llm.set_script([{"text": "one", "usage": {"input": 500}}, *[{**failing, "match": SUMMARY}] * 3,
                         *[failing] * 3])  # a 7th request would find the script exhausted
    async with await start(env, tmp_path) as client:
        await client.prompt_and_wait("first")
        events = await client.prompt_and_wait("second " + W * 140, timeout=60)  # ~7000 tokens: over 8000 - 2000
    later = fake_llm.requests[1:]
    summaries = [r for r in later if SUMMARY in json.dumps(r["body"])]
    assert (len(summaries), len(later) - len(summaries)) == (3, 3)
    ends = [e for e in events if e["type"] == "compaction_end"]
    assert [e["reason"] for e in ends] == ["threshold"]
    where = f"HTTP 500 from {fake_llm.base_url_openai}/chat/completions: "
    assert ends[0]["errorMessage"] == f"Compaction failed: {where}boom (api_error)"
    assert [e["willRetry"] for e in events if e["type"] == "agent_end"] == [True, True, False]
