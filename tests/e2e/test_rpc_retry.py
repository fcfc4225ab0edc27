"""End to end: automatic retry of transient provider errors, the real CLI in RPC mode against the loopback fake
LLM server (`set_auto_retry`, `abort_retry`, `auto_retry_start`/`auto_retry_end`)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient
from support.doubles import roles_and_texts


async def start(env, cwd, *args):
    return await RpcClient.start(list(args), cwd=str(cwd), env=env)


def types(events, *, updates=False):
    return [e["type"] for e in events if updates or e["type"] != "message_update"]


def bodies(fake_llm):
    return [r["body"]["messages"] for r in fake_llm.requests]


async def test_429_is_retried_and_the_retry_succeeds(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"retry": {"baseDelayMs": 1}})
    fake_llm.set_script([{"status": 429}, {"text": "Success after retry."}])
    async with await start(env, tmp_path) as client:
        events = await client.prompt_and_wait("hello with retry")
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
        session_file = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    assert types(events) == [
        "agent_start", "turn_start", "message_start", "message_end", "message_start", "message_end", "turn_end",
        "agent_end", "auto_retry_start",
        "agent_start", "turn_start", "message_start", "message_end", "auto_retry_end", "turn_end", "agent_end",
        "agent_settled"]
    first_end, second_end = [e for e in events if e["type"] == "agent_end"]
    assert first_end["willRetry"] is True and first_end["messages"][-1]["stopReason"] == "error"
    assert second_end["willRetry"] is False and [m["role"] for m in second_end["messages"]] == ["assistant"]
    retry_start = next(e for e in events if e["type"] == "auto_retry_start")
    assert retry_start["attempt"] == 1 and retry_start["maxAttempts"] == 3 and retry_start["delayMs"] == 1
    assert retry_start["errorMessage"].startswith(f"HTTP 429 from {fake_llm.base_url_openai}/chat/completions: ")
    assert next(e for e in events if e["type"] == "auto_retry_end") == {
        "type": "auto_retry_end", "success": True, "attempt": 1}
    assert events[-1] == {"type": "agent_settled", "aborted": False}
    assert [(m["role"], m.get("stopReason")) for m in messages] == [("user", None), ("assistant", "stop")]
    first, second = bodies(fake_llm)
    assert second == first  # the retried request carries no trace of the failed attempt
    entries = [json.loads(line) for line in Path(session_file).read_text().splitlines()[1:]]
    failed = [e for e in entries if e["type"] == "message" and e["message"].get("stopReason") == "error"]
    edits = [e for e in entries if e["type"] == "context_edit"]
    assert [e["targetId"] for e in edits] == [failed[0]["id"]] and edits[0]["replacement"] is None


async def test_retries_exhausted_report_the_final_error(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"retry": {"maxRetries": 2, "baseDelayMs": 1}})
    fake_llm.set_script([{"status": 503}, {"status": 502}, {"status": 500, "body": "final straw"},
                         {"text": "never requested"}])
    async with await start(env, tmp_path) as client:
        events = await client.prompt_and_wait("this will fail")
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    assert len(fake_llm.requests) == 3
    assert [e["willRetry"] for e in events if e["type"] == "agent_end"] == [True, True, False]
    starts = [e for e in events if e["type"] == "auto_retry_start"]
    assert [(e["attempt"], e["maxAttempts"], e["delayMs"]) for e in starts] == [(1, 2, 1), (2, 2, 2)]
    assert types(events)[-3:] == ["agent_end", "auto_retry_end", "agent_settled"]
    where = f"HTTP 500 from {fake_llm.base_url_openai}/chat/completions"
    assert events[-2] == {"type": "auto_retry_end", "success": False, "attempt": 2,
                          "finalError": f"{where}: final straw (after 3 attempts)"}
    assert types(events).count("agent_settled") == 1
    assert [(m["role"], m.get("errorMessage")) for m in messages] == [("user", None), ("assistant", f"{where}: final straw")]


async def test_abort_retry_cancels_a_long_backoff_at_once(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"retry": {"baseDelayMs": 60000}})
    fake_llm.set_script([{"status": 429}, {"text": "Answer after the cancelled retry."}])
    async with await start(env, tmp_path) as client:
        await client.send({"type": "prompt", "message": "hello"})
        before = await client.wait_for("auto_retry_start")
        assert before[-1]["delayMs"] == 60000
        state = (await client.send({"type": "get_state"}))["data"]
        rejected = await client.send({"type": "prompt", "message": "impatient"})
        reply = await client.send({"type": "abort_retry"}, timeout=10)
        after = await client.wait_for("agent_settled", timeout=10)
        again = await client.prompt_and_wait("try again")
    assert state["isStreaming"] is True
    assert rejected["success"] is False and "streamingBehavior" in rejected["error"]
    assert reply["success"] is True
    assert types(after) == ["auto_retry_end", "agent_settled"]
    assert after[0]["success"] is False and after[0]["attempt"] == 1 and after[0]["finalError"]
    assert after[1] == {"type": "agent_settled", "aborted": False}
    assert "auto_retry_start" not in types(again)
    assert [m["role"] for m in bodies(fake_llm)[1] if m["role"] != "system"] == ["user", "user"]


async def test_abort_during_the_backoff_settles_as_aborted(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"retry": {"baseDelayMs": 60000}})
    fake_llm.set_script([{"status": 529}, {"text": "never"}])
    async with await start(env, tmp_path) as client:
        await client.send({"type": "prompt", "message": "hello"})
        await client.wait_for("auto_retry_start")
        reply = await client.send({"type": "abort"}, timeout=10)
        after = await client.wait_for("agent_settled", timeout=10)
    assert reply["success"] is True
    assert types(after) == ["auto_retry_end", "agent_settled"]
    assert after[-1] == {"type": "agent_settled", "aborted": True}
    assert len(fake_llm.requests) == 1


async def test_set_auto_retry_false_turns_retry_off_for_this_session_only(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"retry": {"baseDelayMs": 1}})
    settings_file = Path(env["AGENT_FORGE_DIR"]) / "settings.json"
    settings_before = settings_file.read_text()
    fake_llm.set_script([{"status": 503}, {"text": "unused by this prompt"}])
    async with await start(env, tmp_path) as client:
        reply = await client.send({"type": "set_auto_retry", "enabled": False})
        events = await client.prompt_and_wait("503 without retry")
        bad = await client.send({"type": "set_auto_retry", "enabled": "yes"})
    assert reply["success"] is True and bad["success"] is False and "enabled" in bad["error"]
    assert [e["willRetry"] for e in events if e["type"] == "agent_end"] == [False]
    assert not [e for e in events if e["type"].startswith("auto_retry")]
    assert len(fake_llm.requests) == 1
    assert settings_file.read_text() == settings_before


async def test_turning_retry_off_during_a_wait_makes_that_attempt_and_no_more(agent_env_factory, fake_llm,
                                                                               tmp_path):
    """docs/rpc.md: `set_auto_retry false` does not end a running wait (`abort_retry` does); nothing after it."""
    env = agent_env_factory(settings={"retry": {"baseDelayMs": 500}})  # the command comes within it; waited out
    fake_llm.set_script([{"status": 503}, {"status": 503}, {"status": 503}, {"text": "never"}])
    async with await start(env, tmp_path) as client:
        await client.send({"type": "prompt", "message": "hello"})
        await client.wait_for("auto_retry_start")
        reply = await client.send({"type": "set_auto_retry", "enabled": False})
        after = await client.wait_for("agent_settled", timeout=20)
    assert reply["success"] is True
    assert types(after) == ["agent_start", "turn_start", "message_start", "message_end", "turn_end", "agent_end",
                            "auto_retry_end", "agent_settled"]
    assert after[-3]["willRetry"] is False and after[-2]["success"] is False and after[-2]["attempt"] == 1
    assert len(fake_llm.requests) == 2


async def test_a_cut_stream_is_retried_without_its_partial_text(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"retry": {"baseDelayMs": 1}})
    fake_llm.set_script([{"text": "partial words that never finish", "drop_after": 3},
                         {"text": "Complete answer."}])
    async with await start(env, tmp_path) as client:
        events = await client.prompt_and_wait("tell me")
    failed = [e for e in events if e["type"] == "message_end"][1]["message"]
    assert failed["stopReason"] == "error" and failed["content"]  # the partial text reached the client
    assert next(e for e in events if e["type"] == "auto_retry_end")["success"] is True
    first, second = bodies(fake_llm)
    assert second == first and "partial" not in json.dumps(second)


IN_STREAM_TRANSIENT = {  # api -> (the error object its stream sends, what the retry's errorMessage holds)
    "anthropic-messages": ({"type": "overloaded_error", "message": "Overloaded"}, "overloaded_error"),
    "google-generative-ai": ({"code": 503, "message": "The model is not ready.", "status": "UNAVAILABLE"},
                             "(UNAVAILABLE)"),
}


@pytest.mark.parametrize("api", list(IN_STREAM_TRANSIENT))
async def test_an_in_stream_transient_error_is_retried(agent_env_factory, fake_llm, tmp_path, api):
    env = agent_env_factory(api=api, settings={"retry": {"baseDelayMs": 1}})
    error, said = IN_STREAM_TRANSIENT[api]
    fake_llm.set_script([{"text": "some text", "error_event": error, "error_after": 1}, {"text": "Recovered."}])
    async with await start(env, tmp_path) as client:
        events = await client.prompt_and_wait("hi")
    assert said in next(e for e in events if e["type"] == "auto_retry_start")["errorMessage"]
    final = [e for e in events if e["type"] == "message_end"][-1]["message"]
    assert final["content"][-1]["text"] == "Recovered." and len(fake_llm.requests) == 2


async def test_a_400_is_not_retried(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"retry": {"baseDelayMs": 1}})
    fake_llm.set_script([{"status": 400, "body": {"error": {"message": "invalid request"}}}, {"text": "unused"}])
    async with await start(env, tmp_path) as client:
        events = await client.prompt_and_wait("bad")
    assert types(events) == ["agent_start", "turn_start", "message_start", "message_end", "message_start",
                             "message_end", "turn_end", "agent_end", "agent_settled"]
    assert events[-2]["willRetry"] is False and len(fake_llm.requests) == 1
    assert events[-2]["messages"][-1]["errorMessage"].startswith("HTTP 400 from ")


async def test_abort_retry_when_idle_is_a_harmless_success(agent_env, tmp_path):
    async with await start(agent_env, tmp_path) as client:
        reply = await asyncio.wait_for(client.send({"type": "abort_retry", "id": 7}), 10)
        state = (await client.send({"type": "get_state"}))["data"]
    assert reply == {"type": "response", "command": "abort_retry", "success": True, "id": 7}
    assert state["isStreaming"] is False


async def test_retry_waits_at_least_the_servers_retry_after(agent_env_factory, fake_llm, tmp_path):
    from agent_forge.modes.rpc.client import RpcClient

    env = agent_env_factory(settings={"retry": {"baseDelayMs": 1}})
    fake_llm.set_script([{"status": 429, "body": {"error": {"message": "slow down"}},
                          "headers": {"retry-after": "0.2"}}, {"text": "after the wait"}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=env) as client:
        events = await client.prompt_and_wait("hi")
    start = next(e for e in events if e["type"] == "auto_retry_start")
    assert start["delayMs"] == 200  # the server's wait, not the 1 ms backoff
    assert [e for e in events if e["type"] == "message_end"][-1]["message"]["content"][0]["text"] == "after the wait"


@pytest.mark.parametrize("header", [{"retry-after": "99999999999999999999999"},
                                    {"retry-after-ms": "99999999999999999999999"},
                                    {"retry-after": "Fri, 31 Dec 9999 23:59:59 GMT"},
                                    {"retry-after-ms": "1" * 400}])
async def test_a_huge_retry_after_is_clamped_to_a_day(agent_env_factory, fake_llm, tmp_path, header):
    """Issue 10: `retryAfterMs` past 2^53 loses precision in JSON clients; every header form is clamped to a day
    (`MAX_RETRY_AFTER_MS`), which is over the default `maxAgentDelayMs`, so the failure is final at once."""
    env = agent_env_factory(settings={"retry": {"baseDelayMs": 1}})
    fake_llm.set_script([{"status": 429, "body": {"error": {"message": "slow down"}}, "headers": header}])
    async with await start(env, tmp_path) as client:
        events = await client.prompt_and_wait("hi")
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    assert "auto_retry_start" not in types(events) and len(fake_llm.requests) == 1
    assert messages[-1]["stopReason"] == "error" and messages[-1]["retryAfterMs"] == 86_400_000


async def test_abort_retry_answers_at_the_hand_over_to_a_queued_steer(agent_env_factory, fake_llm, tmp_path):
    """Cutting a backoff short with a steering message queued answers when the queued run takes over, not after
    it (the steer's run hangs until the test has the answer)."""
    env = agent_env_factory(settings={"retry": {"baseDelayMs": 60000}})
    fake_llm.set_script([{"status": 429}, {"text": "Steered answer.", "hang": True, "hang_ms": 60000}])
    async with await start(env, tmp_path) as client:
        await client.send({"type": "prompt", "message": "go"})
        await client.wait_for("auto_retry_start")
        assert (await client.send({"type": "steer", "message": "s"}))["success"] is True
        reply = await client.send({"type": "abort_retry"}, timeout=30)
        state = (await client.send({"type": "get_state"}))["data"]
        await asyncio.to_thread(fake_llm.wait_for_requests, 2)  # the steer's run is streaming (hung)
        fake_llm.release_hangs()
        settled = await client.wait_for("agent_settled", timeout=30)
    assert reply["success"] is True and state["isStreaming"] is True
    assert [m["role"] for m in bodies(fake_llm)[1] if m["role"] != "system"] == ["user", "user"]
    assert "auto_retry_end" in types(settled) and settled[-1] == {"type": "agent_settled", "aborted": False}


@pytest.mark.parametrize("queue", [{"type": "follow_up"}, {"type": "steer"},
                                   {"type": "prompt", "streamingBehavior": "followUp"},
                                   {"type": "prompt", "streamingBehavior": "steer"}])
async def test_a_failed_attempt_with_a_message_queued_is_retried_before_the_message_goes_on(
        agent_env_factory, fake_llm, tmp_path, queue):
    """A message queued while the attempt streams does not take the failed attempt's place: the attempt is
    retried (hidden, as always) with the same request, and the message is delivered after the retried answer,
    as it would have been had the attempt succeeded."""
    env = agent_env_factory(settings={"retry": {"baseDelayMs": 1}})
    fake_llm.set_script([{"text": "cut", "hang": True, "hang_ms": 60000, "drop_after": 0},
                         {"text": "first answer"}, {"text": "queued answer"}])
    async with await start(env, tmp_path) as client:
        await client.send({"type": "prompt", "message": "go"})
        await asyncio.to_thread(fake_llm.wait_for_requests, 1)  # the attempt streams (hung) when the message comes
        queued = await client.send({**queue, "message": "then this"})
        fake_llm.release_hangs()
        events = await client.wait_for("agent_settled", timeout=30)
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
        session_file = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    assert queued["data"]["disposition"] == "queued"
    ends = [e for e in events if e["type"] == "agent_end"]
    assert ends[0]["willRetry"] is True and ends[0]["messages"][-1]["stopReason"] == "error"
    assert "auto_retry_start" in types(events)
    assert next(e for e in events if e["type"] == "auto_retry_end")["success"] is True
    first, retried, delivered = bodies(fake_llm)
    assert retried == first and roles_and_texts(first) == [("user", "go")]
    assert roles_and_texts(delivered) == [("user", "go"), ("assistant", "first answer"), ("user", "then this")]
    assert [(m["role"], m.get("stopReason")) for m in messages] == [
        ("user", None), ("assistant", "stop"), ("user", None), ("assistant", "stop")]
    assert events[-1] == {"type": "agent_settled", "aborted": False}
    entries = [json.loads(line) for line in Path(session_file).read_text().splitlines()[1:]]
    failed = [e["id"] for e in entries if e["type"] == "message" and e["message"].get("stopReason") == "error"]
    assert [e["targetId"] for e in entries if e["type"] == "context_edit"] == failed and len(failed) == 1


async def fail_with_a_follow_up_queued(client, fake_llm) -> None:
    """Prompt "go", queue the follow-up "then this" while its stream hangs, then let the stream fail (cut)."""
    await client.send({"type": "prompt", "message": "go"})
    await asyncio.to_thread(fake_llm.wait_for_requests, 1)
    await client.send({"type": "follow_up", "message": "then this"})
    fake_llm.release_hangs()


async def test_a_failure_that_is_not_retried_hands_over_to_the_queued_message(agent_env_factory, fake_llm,
                                                                              tmp_path):
    """Retries off: the failed attempt stays, and the queued message runs after it, in a run of its own."""
    env = agent_env_factory(settings={"retry": {"enabled": False}})
    fake_llm.set_script([{"text": "cut", "hang": True, "hang_ms": 60000, "drop_after": 0},
                         {"text": "queued answer"}])
    async with await start(env, tmp_path) as client:
        await fail_with_a_follow_up_queued(client, fake_llm)
        events = await client.wait_for("agent_settled", timeout=30)
    assert [e["willRetry"] for e in events if e["type"] == "agent_end"] == [False, False]
    assert "auto_retry_start" not in types(events) and len(fake_llm.requests) == 2
    assert roles_and_texts(bodies(fake_llm)[1]) == [("user", "go"), ("user", "then this")]
    assert events[-1] == {"type": "agent_settled", "aborted": False}


async def test_abort_during_the_backoff_hands_over_to_a_message_queued_by_the_failed_attempt(
        agent_env_factory, fake_llm, tmp_path):
    """docs/rpc.md: `abort` continues messages still queued. The message queued while the attempt streamed waits
    through the backoff; `abort` ends the wait and its run takes over (the failed attempt, never retried, is
    the first turn's outcome again, as in a resumed session)."""
    env = agent_env_factory(settings={"retry": {"baseDelayMs": 60000}})
    fake_llm.set_script([{"text": "cut", "hang": True, "hang_ms": 60000, "drop_after": 0},
                         {"text": "queued answer"}])
    async with await start(env, tmp_path) as client:
        await fail_with_a_follow_up_queued(client, fake_llm)
        await client.wait_for("auto_retry_start", timeout=30)
        reply = await client.send({"type": "abort"}, timeout=30)
        events = await client.wait_for("agent_settled", timeout=30)
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    assert reply["success"] is True
    assert next(e for e in client.records if e["type"] == "auto_retry_end")["finalError"] == "Retry cancelled"
    assert len(fake_llm.requests) == 2
    assert roles_and_texts(bodies(fake_llm)[1]) == [("user", "go"), ("user", "then this")]
    assert [(m["role"], m.get("stopReason")) for m in messages] == [("user", None), ("assistant", "error"),
                                                                    ("user", None), ("assistant", "stop")]
    assert events[-1]["type"] == "agent_settled"


@pytest.mark.parametrize("cancels", [("abort_retry", "abort"), ("abort", "abort"), ("compact", "abort"),
                                     ("follow_up", "compact", "abort_retry", "abort")])
async def test_cancellations_of_one_wait_end_its_chain_once(agent_env_factory, fake_llm, tmp_path, cancels):
    """Cancellations that all arrive before the cut-short wait wakes (one write) end the chain with one
    `auto_retry_end`; an `abort` among them settles the run as aborted."""
    env = agent_env_factory(settings={"retry": {"baseDelayMs": 60000}})
    fake_llm.set_script([{"status": 503}, {"text": "a summary"}, {"text": "after"}, {"text": "more"}])
    async with await start(env, tmp_path) as client:
        await client.send({"type": "prompt", "message": "go"})
        await client.wait_for("auto_retry_start")
        start_at = len(client.records)
        commands = [{"id": f"x{i}", "type": kind, **({"message": "fu"} if kind == "follow_up" else {})}
                    for i, kind in enumerate(cancels)]
        client.write_raw(b"".join(json.dumps(c).encode() + b"\n" for c in commands))
        answered, settled = set(), False
        while len(answered) < len(commands) or not settled:
            event = await client.next_event(timeout=10)
            answered |= {event["id"]} if event["type"] == "response" else set()
            settled = settled or event["type"] == "agent_settled"
        await client.send({"type": "get_state"})
        later = client.records[start_at:]
    ends = [r for r in later if r["type"] == "auto_retry_end"]
    assert ends == [{"type": "auto_retry_end", "success": False, "attempt": 1, "finalError": "Retry cancelled"}]
    # a queued follow-up is continued after the abort (seed 000): its run settles, not aborted
    assert next(r for r in later if r["type"] == "agent_settled")["aborted"] is ("follow_up" not in cancels)


@pytest.mark.real_process  # the process must exit after the failed attempt
@pytest.mark.parametrize("stdin", ["open", "closed"])
async def test_no_new_retry_starts_after_stdin_closed(agent_env_factory, fake_llm, tmp_path, stdin):
    """A stream stalls, the client closes stdin, then the stream fails with a retryable error: with stdin
    open it would be retried; after EOF the run ends with that attempt and the agent exits (docs/rpc.md)."""
    env = agent_env_factory(settings={"retry": {"baseDelayMs": 1}})
    fake_llm.set_script([{"text": "a long answer cut off", "hang_after": 2, "hang_ms": 30000, "drop_after": 3},
                         {"text": "retried"}])
    client = await start(env, tmp_path)
    await client.send({"type": "prompt", "message": "go"})
    await client.wait_for("message_update", timeout=20)
    if stdin == "closed":
        client.process.stdin.close()
    fake_llm.release_hangs()
    if stdin == "open":
        await client.wait_for("agent_settled", timeout=20)
        client.process.stdin.close()
    assert await asyncio.wait_for(client.process.wait(), 20) == 0
    await client.close()
    kinds = [r.get("type") for r in client.records]
    assert kinds.count("agent_settled") == 1
    if stdin == "open":
        assert "auto_retry_start" in kinds and len(fake_llm.requests) == 2
    else:
        assert "auto_retry_start" not in kinds and len(fake_llm.requests) == 1
        end = next(r for r in client.records if r.get("type") == "agent_end")
        assert end["willRetry"] is False and end["messages"][-1]["stopReason"] == "error"


async def test_a_retry_cancelled_in_its_wait_leaves_the_failure_live_and_resumed(agent_env_factory, fake_llm,
                                                                                 tmp_path):
    """Cancelled in its wait, the retry leaves the failure as the turn's outcome, in the live session and in the
    file (the terminal UI resumed showed the prompt with no outcome)."""
    env = agent_env_factory(settings={"retry": {"baseDelayMs": 60000}})
    fake_llm.set_script([{"status": 500}])
    async with await start(env, tmp_path) as client:
        await client.send({"type": "prompt", "message": "go"})
        await client.wait_for("auto_retry_start", timeout=30)
        await client.send({"type": "abort_retry"})
        await client.wait_for("agent_settled", timeout=30)
        live = (await client.send({"type": "get_messages"}))["data"]["messages"]
        path = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    async with await start(env, tmp_path, "--session", path) as client:
        resumed = (await client.send({"type": "get_messages"}))["data"]["messages"]
    assert [(m["role"], m.get("stopReason")) for m in live] == [("user", None), ("assistant", "error")]
    assert resumed == live and "HTTP 500" in live[1]["errorMessage"]


@pytest.mark.real_process  # kill -9
async def test_an_agent_killed_in_a_retry_wait_resumes_with_the_failure_as_the_outcome(agent_env_factory, fake_llm,
                                                                                      tmp_path):
    """Until its retry begins the failed attempt is the turn's outcome, live and in the file: a kill -9 during the
    wait resumes with it (it was hidden when the wait began, and the resumed session showed the prompt alone)."""
    env = agent_env_factory(settings={"retry": {"baseDelayMs": 60000}})
    fake_llm.set_script([{"status": 500}])
    client = await start(env, tmp_path)
    await client.send({"type": "prompt", "message": "go"})
    await client.wait_for("auto_retry_start", timeout=30)
    waiting = (await client.send({"type": "get_messages"}))["data"]["messages"]
    path = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    client.process.kill()
    await client.close()
    async with await start(env, tmp_path, "--session", path) as client:
        resumed = (await client.send({"type": "get_messages"}))["data"]["messages"]
    assert [(m["role"], m.get("stopReason")) for m in waiting] == [("user", None), ("assistant", "error")]
    assert resumed == waiting
