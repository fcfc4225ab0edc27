"""A session file resumed holds the context the live session had: a real AgentSession (faux model, session file in
tmp_path) goes through a retried 503, an overflow recovery, an abort mid-stream and a manual compaction, and after
each the file, opened anew, builds the messages the live agent holds (issue 11: `context_edit` has a reader)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agent_forge.ai.providers.faux import FauxResponse, faux_requests, set_faux_responses
from agent_forge.coding.session.store import SessionStore

W = "word " * 40  # 50 tokens at chars/4
OVERFLOW = ('400 {"error":{"message":"This model\'s maximum context length is 128000 tokens",'
            '"code":"context_length_exceeded"}}')
SETTINGS = {"compaction": {"keepRecentTokens": 30}}


def plain(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages as the file holds them (JSON), for comparing live objects with parsed ones."""
    return json.loads(json.dumps(messages))


def reopened_context(session) -> list[dict[str, Any]]:
    """The messages the session's file builds when opened anew (no lock: the live session keeps writing it)."""
    store = SessionStore.open(session.store.path)
    try:
        return plain(store.build_context().messages)
    finally:
        store.close()


def roles(messages: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return [(m["role"], m.get("stopReason")) for m in messages]


async def test_the_resumed_file_equals_the_live_session_after_retry_overflow_abort_and_compaction(
        make_session, key, read_entries):
    release = asyncio.Event()
    set_faux_responses([
        FauxResponse(error="503 Service Unavailable"), FauxResponse(text="one " + W),  # a retried 503
        FauxResponse(error=OVERFLOW), FauxResponse(text="## Objective\nShrunk."), FauxResponse(text="recovered"),
        FauxResponse(text="cut off " + W, chunk_size=4, hang_after=1, release=release),  # aborted mid-stream
        FauxResponse(text="four " + W),
        FauxResponse(text="## Objective\nManual."),  # the manual compaction
        FauxResponse(text="five"),
    ], key)
    session, rec = make_session(SETTINGS)

    await session.prompt_and_wait("first " + W)
    assert roles(session.messages) == [("user", None), ("assistant", "stop")]  # the failed attempt is gone
    assert reopened_context(session) == plain(session.messages)

    await session.prompt_and_wait("second " + W)
    assert rec.of("compaction_start")[-1]["reason"] == "overflow" and session.last_assistant_text() == "recovered"
    assert reopened_context(session) == plain(session.messages)

    streaming = asyncio.Event()
    stop_watching = session.subscribe(lambda event: event["type"] == "message_update" and streaming.set())
    session.prompt("third " + W)
    await asyncio.wait_for(streaming.wait(), 10)  # the reply has begun: abort it mid-stream
    stop_watching()
    await asyncio.wait_for(session.abort(), 10)
    assert session.messages[-1]["stopReason"] == "aborted"
    assert reopened_context(session) == plain(session.messages)

    await session.prompt_and_wait("fourth " + W)
    await session.compact()
    await session.prompt_and_wait("fifth")
    assert len(faux_requests(key)) == 9
    live = plain(session.messages)
    assert reopened_context(session) == live
    kinds = [entry["type"] for entry in read_entries(session)]
    assert kinds.count("context_edit") == 2 and kinds.count("compaction") == 2  # the 503 and the overflow
    live_stats = session.get_session_stats()
    live_count = session.get_state()["messageCount"]
    path = str(session.store.path)
    await session.close()

    resumed, _ = make_session(SETTINGS, session_file=path)
    assert plain(resumed.messages) == live
    assert resumed.get_state()["messageCount"] == live_count
    stats = resumed.get_session_stats()
    assert {k: v for k, v in stats.items() if k != "contextUsage"} == {
        k: v for k, v in live_stats.items() if k != "contextUsage"}


async def test_the_resumed_file_equals_the_live_session_after_failures_that_stay(make_session, key):
    """Retries exhausted, an overflow compaction cannot resolve, a retried attempt aborted mid-stream: the
    failures the live session keeps, the file keeps; those it dropped, the file hides."""
    set_faux_responses([
        FauxResponse(error="503 first"), FauxResponse(error="502 second"),  # retries exhausted (maxRetries 1)
        FauxResponse(text="one " + W),
        FauxResponse(error=OVERFLOW), FauxResponse(text="## Objective\nShrunk."), FauxResponse(error=OVERFLOW),
        FauxResponse(error="429 slow down"), FauxResponse(text="cut " + W, chunk_size=4, hang_after=1),
        FauxResponse(text="last"),
    ], key)
    session, rec = make_session({**SETTINGS, "retry": {"baseDelayMs": 0, "maxRetries": 1}})
    await session.prompt_and_wait("first " + W)
    assert roles(session.messages) == [("user", None), ("assistant", "error")]
    assert reopened_context(session) == plain(session.messages)
    await session.prompt_and_wait("again " + W)
    await session.prompt_and_wait("second " + W)
    assert rec.of("compaction_end")[-1]["unresolvedOverflow"] is True
    assert reopened_context(session) == plain(session.messages)
    streaming = asyncio.Event()
    session.subscribe(lambda event: event["type"] == "message_update" and streaming.set())
    session.prompt("third")
    await asyncio.wait_for(streaming.wait(), 10)  # the retried attempt streams (the 429 had no deltas)
    await asyncio.wait_for(session.abort(), 10)
    assert roles(session.messages)[-2:] == [("user", None), ("assistant", "aborted")]
    assert reopened_context(session) == plain(session.messages)
    await session.prompt_and_wait("fourth")
    live = plain(session.messages)
    path = str(session.store.path)
    await session.close()
    resumed, _ = make_session(SETTINGS, session_file=path)
    assert plain(resumed.messages) == live
