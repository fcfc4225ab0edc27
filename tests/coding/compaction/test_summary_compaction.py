"""Summary compaction (the default strategy) driving a real AgentSession: manual, threshold, overflow, retries,
abort, and the context the model sees afterwards (faux model, session file and tools in tmp_path)."""

from __future__ import annotations

import asyncio
import json

import pytest

from agent_forge.ai.providers.faux import FauxResponse, faux_requests, set_faux_responses
from agent_forge.coding.errors import AbortedError, CommandError
from agent_forge.coding.compaction.prompts import SUMMARY_PROMPT_VERSION, SUMMARY_SYSTEM_PROMPT
from agent_forge.coding.tools import create_coding_tools

W = "word " * 40  # 50 tokens at chars/4
OVERFLOW = ('400 {"error":{"message":"This model\'s maximum context length is 128000 tokens",'
            '"code":"context_length_exceeded"}}')


def request_text(request) -> str:
    """The request's messages without timestamps (a prompt sent twice differs only in those)."""
    return json.dumps([{k: v for k, v in m.items() if k != "timestamp"} for m in request.context["messages"]])


def user_texts(request) -> list[str]:
    return [b.get("text", "")[:12] for m in request.context["messages"] for b in m["content"] if m["role"] == "user"]


async def two_exchanges(session):
    await session.prompt_and_wait("first " + W)
    await session.prompt_and_wait("second " + W)


async def test_manual_compaction_summarises_the_old_part_and_rebuilds_the_context(make_session, key, read_entries):
    set_faux_responses([FauxResponse(text="one " + W),
                        FauxResponse(text="two " + W, input_tokens=700, output_tokens=13),
                        FauxResponse(text="## Objective\nTrivia.", input_tokens=500, output_tokens=30),
                        FauxResponse(text="after")], key)
    session, rec = make_session({"compaction": {"keepRecentTokens": 60}})
    await two_exchanges(session)
    second_id = [e["id"] for e in read_entries(session) if e["type"] == "message"][2]
    result = await session.compact("Focus on trivia")

    assert rec.types()[-2:] == ["compaction_start", "compaction_end"]
    assert rec.of("compaction_start")[-1] == {"type": "compaction_start", "reason": "manual"}
    assert rec.of("compaction_end")[-1] == {"type": "compaction_end", "reason": "manual", "result": result,
                                            "aborted": False, "willRetry": False}
    assert set(result) == {"summary", "firstKeptEntryId", "tokensBefore", "estimatedTokensAfter", "usage", "details"}
    assert result["summary"] == "## Objective\nTrivia." and result["firstKeptEntryId"] == second_id
    assert result["tokensBefore"] == 700 + 13  # the last response's usage (input + output)
    assert 0 < result["estimatedTokensAfter"] < 1000
    assert (result["usage"]["input"], result["usage"]["output"]) == (500, 30)
    assert result["details"] == {"readFiles": [], "modifiedFiles": [], "strategy": "summary",
                                 "promptVersion": SUMMARY_PROMPT_VERSION}

    summary_request = faux_requests(key)[2]
    assert summary_request.context["systemPrompt"] == SUMMARY_SYSTEM_PROMPT
    assert not summary_request.context.get("tools")
    prompt = summary_request.context["messages"][0]["content"][0]["text"]
    assert "[User]: first" in prompt and "[Assistant]: one" in prompt and "second" not in prompt
    assert prompt.endswith("pay particular attention to: Focus on trivia")

    assert [m["role"] for m in session.messages] == ["compactionSummary", "user", "assistant"]
    stats = session.get_session_stats()
    assert stats["contextUsage"]["tokens"] is None and stats["contextUsage"]["percent"] is None
    assert stats["tokens"]["input"] >= 500 + 700  # summarisation usage counts in the session totals
    stored = read_entries(session)
    assert [e["type"] for e in stored].count("message") == 4 and stored[-1]["type"] == "compaction"
    assert stored[-1]["summary"] == result["summary"] and stored[-1]["usage"]["input"] == 500

    await session.prompt_and_wait("third")
    next_request = faux_requests(key)[3]
    assert "condensed into the summary below" in next_request.context["messages"][0]["content"][0]["text"]
    assert user_texts(next_request)[1:] == ["second word ", "third"]
    assert session.get_session_stats()["contextUsage"]["tokens"] is not None


async def test_nothing_to_compact_and_already_compacted_are_errors(make_session, key):
    set_faux_responses([FauxResponse(text="one " + W), FauxResponse(text="two " + W),
                        FauxResponse(text="## Objective\nx")], key)
    session, rec = make_session({"compaction": {"keepRecentTokens": 60}})
    with pytest.raises(CommandError, match=r"^Nothing to compact \(session too small\)$"):
        await session.compact()
    assert rec.of("compaction_end")[-1] == {
        "type": "compaction_end", "reason": "manual", "result": None, "aborted": False, "willRetry": False,
        "errorMessage": "Compaction failed: Nothing to compact (session too small)"}
    await two_exchanges(session)
    await session.compact()
    with pytest.raises(CommandError, match="^Already compacted$"):
        await session.compact()
    assert len(faux_requests(key)) == 3


async def test_a_cut_inside_a_long_turn_condenses_the_turn_start_and_tracks_files(make_session, key, tmp_path):
    (tmp_path / "a.txt").write_text("alpha\n" * 200)
    (tmp_path / "b.txt").write_text("beta\n" * 200)
    set_faux_responses([FauxResponse(tool_calls=[("read", {"path": "a.txt"})]),
                        FauxResponse(tool_calls=[("write", {"path": "c.txt", "content": "new"})]),
                        FauxResponse(tool_calls=[("read", {"path": "b.txt"})]),
                        FauxResponse(text="done " + W),
                        FauxResponse(text="## Objective\nRead files.")], key)
    session, _ = make_session({"compaction": {"keepRecentTokens": 30}}, tools=create_coding_tools(str(tmp_path)))
    await session.prompt_and_wait("inspect the files")
    result = await session.compact()
    prompt = faux_requests(key)[4].context["messages"][0]["content"][0]["text"]
    assert "<request-in-progress>\n[User]: inspect the files" in prompt and "## Request in progress" in prompt
    assert "<transcript>\n\n</transcript>" in prompt  # no earlier history
    assert result["details"]["readFiles"] == ["a.txt", "b.txt"] and result["details"]["modifiedFiles"] == ["c.txt"]
    assert result["summary"].endswith("<files-read>\na.txt\nb.txt\n</files-read>\n\n"
                                      "<files-modified>\nc.txt\n</files-modified>")
    assert [m["role"] for m in session.messages] == ["compactionSummary", "assistant"]


async def test_threshold_compaction_between_the_turns_of_a_tool_loop(make_session, key, tmp_path):
    (tmp_path / "a.txt").write_text("alpha\n")
    set_faux_responses([FauxResponse(tool_calls=[("read", {"path": "a.txt"})], input_tokens=3500),
                        FauxResponse(text="## Objective\nLoop.", input_tokens=50),
                        FauxResponse(tool_calls=[("read", {"path": "a.txt"})], input_tokens=900),
                        FauxResponse(text="finished", input_tokens=950)], key)
    session, rec = make_session({"compaction": {"keepRecentTokens": 1, "reserveTokens": 1000}},
                                context_window=4000, tools=create_coding_tools(str(tmp_path)))
    await session.prompt_and_wait("loop over the file")
    types = rec.types()
    first_end = types.index("turn_end")
    assert types[first_end + 1:first_end + 4] == ["compaction_start", "compaction_end", "turn_start"]
    assert rec.of("compaction_start") == [{"type": "compaction_start", "reason": "threshold"}]
    end = rec.of("compaction_end")[0]
    assert end["reason"] == "threshold" and end["result"]["summary"].startswith("## Objective\nLoop.")
    assert end["result"]["tokensBefore"] >= 3500
    after = faux_requests(key)[2].context["messages"]
    assert [m["role"] for m in after] == ["user", "assistant", "toolResult"]  # summary, then the kept call
    assert "condensed into the summary" in after[0]["content"][0]["text"]
    assert types.count("compaction_start") == 1 and types[-2:] == ["agent_end", "agent_settled"]


async def test_threshold_after_a_run_and_disabled_auto_compaction(make_session, key):
    set_faux_responses([FauxResponse(text="one " + W), FauxResponse(text="two", input_tokens=3500),
                        FauxResponse(text="## Objective\nBig."), FauxResponse(text="three", input_tokens=3600)], key)
    session, rec = make_session({"compaction": {"keepRecentTokens": 10, "reserveTokens": 1000}}, context_window=4000)
    await session.prompt_and_wait("first " + W)
    await session.prompt_and_wait("second")
    assert rec.types()[-4:] == ["agent_end", "compaction_start", "compaction_end", "agent_settled"]
    assert session.get_state()["autoCompactionEnabled"] is True
    session.compaction.enabled = False
    assert session.get_state()["autoCompactionEnabled"] is False
    await session.prompt_and_wait("third")
    assert rec.types().count("compaction_start") == 1 and len(faux_requests(key)) == 4


async def test_overflow_compacts_and_retries_once(make_session, key):
    set_faux_responses([FauxResponse(text="one " + W), FauxResponse(error=OVERFLOW),
                        FauxResponse(text="## Objective\nShrunk."), FauxResponse(text="recovered")], key)
    session, rec = make_session({"compaction": {"keepRecentTokens": 30}})
    await session.prompt_and_wait("first " + W)
    await session.prompt_and_wait("second " + W)
    tail = rec.types()[rec.types().index("agent_settled") + 1:]
    assert tail[tail.index("agent_end"):] == [
        "agent_end", "compaction_start", "compaction_end", "agent_start", "turn_start", "message_start",
        "message_end", "turn_end", "agent_end", "agent_settled"]
    ends = rec.of("agent_end")
    assert [e["willRetry"] for e in ends] == [False, True, False]
    assert rec.of("compaction_start")[-1]["reason"] == "overflow"
    end = rec.of("compaction_end")[-1]
    assert end["willRetry"] is True and end["aborted"] is False and end["result"]["summary"] == "## Objective\nShrunk."
    assert "unresolvedOverflow" not in end
    assert [m["role"] for m in ends[-1]["messages"]] == ["assistant"]  # the run continued, no new prompt
    retried = faux_requests(key)[3]
    assert user_texts(retried) == ["Earlier turn", "second word "]
    assert rec.events[-1] == {"type": "agent_settled", "aborted": False}
    assert session.last_assistant_text() == "recovered"


async def test_a_second_overflow_is_reported_as_unresolved(make_session, key):
    set_faux_responses([FauxResponse(text="one " + W), FauxResponse(error=OVERFLOW),
                        FauxResponse(text="## Objective\nShrunk."), FauxResponse(error=OVERFLOW),
                        FauxResponse(text="unused")], key)
    session, rec = make_session({"compaction": {"keepRecentTokens": 30}})
    await session.prompt_and_wait("first " + W)
    await session.prompt_and_wait("second " + W)
    assert len(faux_requests(key)) == 4
    assert [e["willRetry"] for e in rec.of("agent_end")] == [False, True, False]
    assert rec.types()[-4:] == ["agent_end", "compaction_start", "compaction_end", "agent_settled"]
    last = rec.of("compaction_end")[-1]
    assert last["unresolvedOverflow"] is True and last["result"] is None and last["willRetry"] is False
    assert last["errorMessage"].startswith("Context overflow persists after compaction: 400 ")
    assert "context_length_exceeded" in last["errorMessage"]


async def test_an_overflow_compaction_cannot_help_is_unresolved_without_a_retry(make_session, key):
    set_faux_responses([FauxResponse(error=OVERFLOW), FauxResponse(text="unused")], key)
    session, rec = make_session()
    await session.prompt_and_wait("one huge prompt")
    assert len(faux_requests(key)) == 1
    assert [e["willRetry"] for e in rec.of("agent_end")] == [False]
    end = rec.of("compaction_end")[-1]
    assert end["unresolvedOverflow"] is True and end["errorMessage"].startswith(
        "Context overflow cannot be resolved by compaction (Nothing to compact (session too small)): 400 ")


async def test_overflow_is_left_alone_when_auto_compaction_is_off(make_session, key):
    set_faux_responses([FauxResponse(text="one " + W), FauxResponse(error=OVERFLOW)], key)
    session, rec = make_session({"compaction": {"enabled": False, "keepRecentTokens": 30}})
    await session.prompt_and_wait("first " + W)
    await session.prompt_and_wait("second " + W)
    assert not rec.of("compaction_start") and [e["willRetry"] for e in rec.of("agent_end")] == [False, False]


async def test_transient_summarisation_errors_are_retried_with_events(make_session, key):
    set_faux_responses([FauxResponse(text="one " + W), FauxResponse(text="two " + W),
                        FauxResponse(error="503 busy", input_tokens=10),
                        FauxResponse(error="503 again", input_tokens=10),
                        FauxResponse(text="## Objective\nFine.", input_tokens=100)], key)
    session, rec = make_session({"compaction": {"keepRecentTokens": 60}, "retry": {"baseDelayMs": 0}})
    await two_exchanges(session)
    result = await session.compact()
    retry_events = [e for e in rec.events if e["type"].startswith("summarization_retry")]
    assert retry_events == [
        {"type": "summarization_retry_scheduled", "attempt": 1, "maxAttempts": 3, "delayMs": 0,
         "errorMessage": "503 busy"},
        {"type": "summarization_retry_attempt_start", "source": "compaction", "reason": "manual"},
        {"type": "summarization_retry_scheduled", "attempt": 2, "maxAttempts": 3, "delayMs": 0,
         "errorMessage": "503 again"},
        {"type": "summarization_retry_attempt_start", "source": "compaction", "reason": "manual"},
        {"type": "summarization_retry_finished"}]
    assert rec.types()[-2:] == ["summarization_retry_finished", "compaction_end"]
    assert result["usage"]["input"] == 120  # every attempt is paid for


async def test_permanent_and_exhausted_summarisation_failures(make_session, key):
    set_faux_responses([FauxResponse(text="one " + W), FauxResponse(text="two " + W),
                        FauxResponse(error="401 invalid x-api-key"),
                        FauxResponse(error="503 busy"), FauxResponse(error="503 still busy")], key)
    session, rec = make_session({"compaction": {"keepRecentTokens": 60}, "retry": {"maxRetries": 1, "baseDelayMs": 1}})
    await two_exchanges(session)
    with pytest.raises(CommandError, match="^401 invalid x-api-key$"):
        await session.compact()
    assert not [e for e in rec.events if e["type"].startswith("summarization_retry")]
    with pytest.raises(CommandError, match="^503 still busy$"):
        await session.compact()
    assert [e["type"] for e in rec.events if e["type"].startswith("summarization_retry")] == [
        "summarization_retry_scheduled", "summarization_retry_attempt_start", "summarization_retry_finished"]
    assert rec.of("compaction_end")[-1]["errorMessage"] == "Compaction failed: 503 still busy"
    assert [e["type"] for e in session.store.entries].count("compaction") == 0


async def test_set_auto_retry_off_also_stops_summarisation_retries(make_session, key):
    set_faux_responses([FauxResponse(text="one " + W), FauxResponse(text="two " + W),
                        FauxResponse(error="503 busy"), FauxResponse(text="unused")], key)
    session, rec = make_session({"compaction": {"keepRecentTokens": 60}})
    await two_exchanges(session)
    session.retry.enabled = False
    with pytest.raises(CommandError, match="503 busy"):
        await session.compact()
    assert not [e for e in rec.events if e["type"].startswith("summarization_retry")]


async def test_abort_during_a_manual_compaction(make_session, key, read_entries):
    release = asyncio.Event()
    started = asyncio.Event()

    def hanging(context):
        started.set()
        return FauxResponse(text="## Objective\nnever", hang_after=0, release=release)

    set_faux_responses([FauxResponse(text="one " + W), FauxResponse(text="two " + W), hanging,
                        FauxResponse(text="queued answer")], key)
    session, rec = make_session({"compaction": {"keepRecentTokens": 60}})
    await two_exchanges(session)
    compacting = asyncio.ensure_future(session.compact())
    await asyncio.wait_for(started.wait(), 10)
    assert session.get_state()["isCompacting"] is True and session.get_state()["isStreaming"] is False
    with pytest.raises(CommandError, match="already processing"):
        session.prompt("not now")
    assert session.prompt("after the compaction", streaming_behavior="followUp") == "queued"
    await session.abort()
    assert rec.of("compaction_end")[-1] == {"type": "compaction_end", "reason": "manual", "result": None,
                                            "aborted": True, "willRetry": False}
    with pytest.raises(AbortedError, match="^Compaction aborted$"):
        await compacting
    assert session.get_state()["isCompacting"] is False
    assert "compaction" not in [e["type"] for e in read_entries(session)]
    await session.wait_for_idle()  # the message queued meanwhile is sent once the compaction is over
    assert session.last_assistant_text() == "queued answer"


async def test_abort_during_a_threshold_compaction_between_turns(make_session, key, tmp_path):
    (tmp_path / "a.txt").write_text("alpha\n")
    started = asyncio.Event()

    def hanging(context):
        started.set()
        return FauxResponse(text="## Objective\nnever", hang_after=0)

    set_faux_responses([FauxResponse(tool_calls=[("read", {"path": "a.txt"})], input_tokens=3500), hanging,
                        FauxResponse(text="unused")], key)
    session, rec = make_session({"compaction": {"keepRecentTokens": 1, "reserveTokens": 1000}},
                                context_window=4000, tools=create_coding_tools(str(tmp_path)))
    session.prompt("loop")
    await asyncio.wait_for(started.wait(), 10)
    assert session.get_state()["isCompacting"] is True and session.is_streaming
    await asyncio.wait_for(session.abort(), 10)
    end = rec.of("compaction_end")[-1]
    assert end["aborted"] is True and end["reason"] == "threshold"
    assert rec.types()[rec.types().index("compaction_end"):] == ["compaction_end", "agent_end", "agent_settled"]
    assert rec.events[-1] == {"type": "agent_settled", "aborted": True}
    assert len(faux_requests(key)) == 2 and "compaction" not in [e["type"] for e in session.store.entries]


async def test_a_resumed_session_sends_the_same_context(make_session, key):
    set_faux_responses([FauxResponse(text="one " + W), FauxResponse(text="two " + W),
                        FauxResponse(text="## Objective\nResume."), FauxResponse(text="a"), FauxResponse(text="b")],
                       key)
    session, _ = make_session({"compaction": {"keepRecentTokens": 60}})
    await two_exchanges(session)
    await session.compact()
    before = json.loads(json.dumps(session.messages))
    path = str(session.store.path)
    await session.prompt_and_wait("next")
    await session.close()
    resumed, _ = make_session({"compaction": {"keepRecentTokens": 60}}, session_file=path)
    assert json.loads(json.dumps(resumed.messages))[:len(before)] == before
    resumed.store.set_leaf(resumed.store.entries[-3]["id"])  # back to the compaction entry
    resumed.agent.messages[:] = resumed.store.build_context().messages
    await resumed.prompt_and_wait("next")
    first, second = faux_requests(key)[3:5]
    assert request_text(first) == request_text(second)
