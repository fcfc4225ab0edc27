"""Automatic retry: the error classifier, the backoff schedule, and AutoRetry driving a real AgentSession (faux
model, session file in tmp_path)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agent_forge.ai.providers.faux import FauxResponse, faux_requests, set_faux_responses
from agent_forge.coding.retry import RETRY_CANCELLED
from agent_forge.coding.retry_policy import (
    backoff_delay_ms, http_status, is_context_overflow, is_retryable_error, is_retryable_message)

from support.doubles import session_factory

OVERLOADED = '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'

# -- classifier ---------------------------------------------------------------------------------------------

RETRYABLE = [
    OVERLOADED,
    '429 {"error":{"message":"Rate limit reached for requests","type":"rate_limit_error"}}',
    '429: {"message":"Rate limit reached"}',
    "500 Internal Server Error", "502 <html>Bad Gateway</html>", "503 ", "504 upstream timeout", "408 timeout",
    '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',  # in-stream, no status
    '{"type":"error","error":{"type":"api_error","message":"Internal server error"}}',
    '{"message":"The server had an error while processing your request.","type":"server_error"}',
    "RemoteProtocolError: peer closed connection without sending complete message body (incomplete chunked read)",
    "ConnectError: All connection attempts failed", "ReadTimeout: timed out",
    "ConnectionResetError: [Errno 104] Connection reset by peer", "Stream ended before message_stop",
    "Stream ended before a finish_reason", "terminated", "Service Unavailable", "Too Many Requests",
    "HTTP 529 from https://api.anthropic.com/v1/messages: Overloaded (overloaded_error)",  # the form written now
    "HTTP 503 from http://127.0.0.1:8080/v1/chat/completions: ",
    "The model is not ready. (UNAVAILABLE)", "Quota exceeded for now. (RESOURCE_EXHAUSTED)",  # Gemini in-stream
    "Something broke. (INTERNAL)", "Took too long. (DEADLINE_EXCEEDED)",
]

NOT_RETRYABLE = [
    '400 {"error":{"message":"Invalid request: messages.0.content is empty"}}',
    '401 {"error":{"type":"authentication_error","message":"invalid x-api-key"}}',
    "403 Forbidden", "404 model not found", "501 Not Implemented", "505 HTTP Version Not Supported",
    '400 {"error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}',
    '400 {"error":{"code":"context_length_exceeded","message":"This model\'s maximum context length is 128000"}}',
    '503 {"message":"too many tokens in the request"}',  # overflow wins over a retryable status
    "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
    "No API key for provider 'anthropic': set ANTHROPIC_API_KEY", "Malformed JSON in stream chunk: Expecting value",
    "Unknown api: 'nope'", "", "Request was aborted",
    "HTTP 400 from https://api.openai.com/v1/chat/completions: bad request (invalid_request_error)",
    "HTTP 404 from https://overloaded.example/v1/messages: model not found",  # the status decides, not the URL
    "Bad field. (INVALID_ARGUMENT)", "This model is unavailable in your region (FAILED_PRECONDITION)",
    "internal field missing (INVALID_ARGUMENT)",
]


@pytest.mark.parametrize("text", RETRYABLE)
def test_transient_errors_are_retryable(text):
    assert is_retryable_error(text) is True


@pytest.mark.parametrize("text", NOT_RETRYABLE)
def test_permanent_and_overflow_errors_are_not_retryable(text):
    assert is_retryable_error(text) is False


def test_overflow_and_status_helpers():
    assert is_context_overflow("prompt is too long: 5 tokens") and is_context_overflow("Too many tokens")
    assert not is_context_overflow(OVERLOADED)
    assert http_status(OVERLOADED) == 529 and http_status("429: {}") == 429 and http_status("503") == 503
    assert http_status("4290 nope") is None and http_status("Stream ended") is None


def test_only_failed_assistant_messages_qualify():
    failed = {"role": "assistant", "stopReason": "error", "errorMessage": OVERLOADED}
    assert is_retryable_message(failed)
    assert not is_retryable_message({**failed, "stopReason": "aborted"})
    assert not is_retryable_message({**failed, "stopReason": "stop"})
    assert not is_retryable_message({**failed, "role": "user"})
    assert not is_retryable_message({"role": "assistant", "stopReason": "error"})
    assert not is_retryable_message(None)


def test_backoff_doubles_from_the_base_and_honours_the_cap():
    assert [backoff_delay_ms(n, 2000) for n in (1, 2, 3, 4)] == [2000, 4000, 8000, 16000]
    assert [backoff_delay_ms(n, 2000, 60000) for n in (5, 6, 7)] == [32000, 60000, 60000]
    assert backoff_delay_ms(3, 0, 60000) == 0 and backoff_delay_ms(2, 100, 0) == 200  # 0: no cap
    for bad in ((0, 100, 0), (1, -1, 0), (1, 100, -5)):
        with pytest.raises(ValueError):
            backoff_delay_ms(*bad)


# -- AutoRetry in an AgentSession ---------------------------------------------------------------------------


@pytest.fixture
def key(faux):
    return faux.key


@pytest.fixture
def make_session(tmp_path, faux):
    """`make_session(retry=None)` → (session, recorder); `retry`: settings over `{"baseDelayMs": 0}`."""
    sessions: list = []
    make = session_factory(tmp_path, faux, sessions, skip=())
    yield lambda retry=None: make({"retry": {"baseDelayMs": 0, **(retry or {})}})
    for session in sessions:
        session.store.close()


def entries(session) -> list[dict]:
    return [json.loads(line) for line in Path(session.store.path).read_text().splitlines()[1:]]


async def test_retry_after_overload_succeeds_without_a_trace_in_the_context(make_session, key):
    set_faux_responses([FauxResponse(text="half an ans", error=OVERLOADED), FauxResponse(text="Fine.")], key)
    session, rec = make_session()
    session.prompt("hello")
    await session.wait_for_idle()
    assert rec.types() == [
        "agent_start", "turn_start", "message_start", "message_end", "message_start", "message_update",
        "message_update", "message_update", "message_update", "message_end", "turn_end", "agent_end",
        "auto_retry_start",
        "agent_start", "turn_start", "message_start", "message_update", "message_update", "message_update",
        "message_end", "auto_retry_end", "turn_end", "agent_end", "agent_settled"]
    first_end, second_end = rec.of("agent_end")
    assert first_end["willRetry"] is True and second_end["willRetry"] is False
    assert [m["role"] for m in second_end["messages"]] == ["assistant"]  # continued, no new user message
    assert rec.of("auto_retry_start") == [{"type": "auto_retry_start", "attempt": 1, "maxAttempts": 3,
                                           "delayMs": 0, "errorMessage": OVERLOADED}]
    assert rec.of("auto_retry_end") == [{"type": "auto_retry_end", "success": True, "attempt": 1}]
    assert rec.events[-1] == {"type": "agent_settled", "aborted": False}
    retried = faux_requests(key)[1].context["messages"]
    assert [m["role"] for m in retried] == ["user"]
    assert [m.get("stopReason") for m in session.messages] == [None, "stop"]
    stored = entries(session)
    failed = next(e for e in stored if e["type"] == "message" and e["message"].get("stopReason") == "error")
    edit = next(e for e in stored if e["type"] == "context_edit")
    assert edit["targetId"] == failed["id"] and edit["replacement"] is None and edit["parentId"] == failed["id"]


async def test_retries_exhausted_report_the_final_error_once(make_session, key):
    errors = ["503 first", "502 second", "500 third"]
    set_faux_responses([FauxResponse(error=e) for e in errors], key)
    session, rec = make_session({"maxRetries": 2, "baseDelayMs": 1})
    session.prompt("hello")
    await session.wait_for_idle()
    assert len(faux_requests(key)) == 3
    starts = rec.of("auto_retry_start")
    assert [(s["attempt"], s["maxAttempts"], s["delayMs"], s["errorMessage"]) for s in starts] == [
        (1, 2, 1, "503 first"), (2, 2, 2, "502 second")]
    assert [e["willRetry"] for e in rec.of("agent_end")] == [True, True, False]
    assert rec.types()[-3:] == ["agent_end", "auto_retry_end", "agent_settled"]
    assert rec.of("auto_retry_end") == [{"type": "auto_retry_end", "success": False, "attempt": 2,
                                         "finalError": "500 third (after 3 attempts)"}]
    assert rec.types().count("agent_settled") == 1
    assert [m.get("errorMessage") for m in session.messages] == [None, "500 third"]  # the last failure stays


async def test_cancel_during_the_wait_settles_at_once(make_session, key):
    set_faux_responses([FauxResponse(error=OVERLOADED), FauxResponse(text="never")], key)
    session, rec = make_session({"baseDelayMs": 60000})
    session.prompt("hello")
    await rec.reached("auto_retry_start")
    assert session.is_streaming and session.retry.waiting
    assert session.get_state()["isStreaming"] is True
    assert session.prompt("queued meanwhile", streaming_behavior="followUp") == "queued"
    assert session.retry.cancel() is True
    await asyncio.wait_for(session.wait_for_idle(), 5)
    assert rec.of("auto_retry_end") == [{"type": "auto_retry_end", "success": False, "attempt": 1,
                                         "finalError": RETRY_CANCELLED}]
    assert rec.events[-1] == {"type": "agent_settled", "aborted": False}
    # the follow-up queued during the wait still runs (seed 000: abort continues queued messages)
    assert len(faux_requests(key)) == 2 and not session.retry.waiting
    assert "queued meanwhile" in str(faux_requests(key)[1].context["messages"][-1])
    assert session.retry.cancel() is False  # nothing left to cancel


async def test_abort_during_the_wait_settles_as_aborted(make_session, key):
    set_faux_responses([FauxResponse(error="429 slow down"), FauxResponse(text="never")], key)
    session, rec = make_session({"baseDelayMs": 60000})
    session.prompt("hello")
    await rec.reached("auto_retry_start")
    await asyncio.wait_for(session.abort(), 5)
    assert rec.types()[-2:] == ["auto_retry_end", "agent_settled"]
    assert rec.events[-1] == {"type": "agent_settled", "aborted": True}
    assert len(faux_requests(key)) == 1


async def test_stop_while_a_retried_run_streams_makes_its_failure_final(make_session, key):
    release = asyncio.Event()
    set_faux_responses([FauxResponse(error="503 busy"),
                        FauxResponse(text="slow partial text", chunk_size=4, hang_after=1, release=release,
                                     error="503 busy again")], key)
    session, rec = make_session()
    session.prompt("hello")
    await rec.reached("message_update")  # the retried run is streaming (the first attempt had no deltas)
    assert session.retry.cancel() is False
    release.set()
    await session.wait_for_idle()
    assert len(faux_requests(key)) == 2
    assert rec.of("auto_retry_end") == [{"type": "auto_retry_end", "success": False, "attempt": 1,
                                         "finalError": "503 busy again (after 2 attempts)"}]
    assert rec.of("agent_end")[-1]["willRetry"] is False


@pytest.mark.parametrize("error", ['400 {"error":"bad request"}', "prompt is too long: 300000 tokens"])
async def test_permanent_errors_end_the_run_without_retry_events(make_session, key, error):
    set_faux_responses([FauxResponse(error=error), FauxResponse(text="unused")], key)
    session, rec = make_session()
    session.prompt("hello")
    await session.wait_for_idle()
    assert not rec.of("auto_retry_start") and not rec.of("auto_retry_end")
    assert rec.of("agent_end")[0]["willRetry"] is False and len(faux_requests(key)) == 1


async def test_disabled_retry_and_a_zero_budget_do_not_retry(make_session, key):
    set_faux_responses([FauxResponse(error="503 a"), FauxResponse(error="503 b"), FauxResponse(text="x")], key)
    session, rec = make_session({"maxRetries": 0})
    session.prompt("one")
    await session.wait_for_idle()
    assert rec.of("agent_end")[-1]["willRetry"] is False
    other, rec2 = make_session({"enabled": False})
    assert other.retry.enabled is False
    other.prompt("two")
    await other.wait_for_idle()
    assert rec2.of("agent_end")[-1]["willRetry"] is False and not rec2.of("auto_retry_start")
    assert len(faux_requests(key)) == 2


async def test_success_resets_the_count_for_a_later_failure(make_session, key):
    set_faux_responses([FauxResponse(error="503 a"), FauxResponse(text="ok"),
                        FauxResponse(error="503 b"), FauxResponse(text="ok again")], key)
    session, rec = make_session({"maxRetries": 1})
    session.prompt("one")
    await session.wait_for_idle()
    session.prompt("two")
    await session.wait_for_idle()
    assert [s["attempt"] for s in rec.of("auto_retry_start")] == [1, 1]
    assert [e["success"] for e in rec.of("auto_retry_end")] == [True, True]
    assert [m["role"] for m in faux_requests(key)[3].context["messages"]] == ["user", "assistant", "user"]
