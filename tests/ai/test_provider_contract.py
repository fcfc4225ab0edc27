"""The provider contract (`agent_forge.testing.providers`) over the four wire APIs, against the loopback fake
server (tests/support/fake_llm.py): start first, never raise after start, closing the stream closes the body,
HTTP errors and `retry-after`."""

from __future__ import annotations

import asyncio

import pytest

from agent_forge.ai.options import StreamOptions
from agent_forge.ai.registry import get_stream_function
from agent_forge.testing import providers as contract

API_BASE_URL = {"openai-completions": "base_url_openai", "anthropic-messages": "base_url_anthropic",
                "openai-responses": "base_url_openai", "google-generative-ai": "base_url_gemini"}
FAKE_API_KEY = "FAKE_KEY_VALUE"
APIS = ["anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai"]
CONTEXT = {"systemPrompt": "You are a test.", "messages": [{"role": "user", "content": "hi", "timestamp": 1}],
           "tools": []}


def model_for(api: str, server) -> dict:
    return {"id": "fake-model", "name": "Fake", "api": api, "provider": "fake",
            "baseUrl": getattr(server, API_BASE_URL[api]), "reasoning": False, "input": ["text"],
            "contextWindow": 128000, "maxTokens": 1000,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}


async def call(api: str, server, **options) -> list[dict]:
    stream_fn = get_stream_function(api)
    return await contract.collect(stream_fn, model_for(api, server), CONTEXT,
                                  StreamOptions(api_key=FAKE_API_KEY, **options))


@pytest.mark.parametrize("api", APIS)
async def test_a_reply_starts_first_and_ends_done(api, fake_llm):
    fake_llm.set_script([{"text": "Hello there."}])
    events = await call(api, fake_llm)
    assert events[-1]["type"] == "done"
    assert events[-1]["message"]["content"][0]["text"] == "Hello there."


@pytest.mark.parametrize("spec", [{"drop_after": 3, "text": "cut short here"}, {"error_event": "overloaded"},
                                  {"frames": ["data: {not json\n\n"]}, {"status": 200, "body": "not a stream"}],
                         ids=["dropped", "error-event", "bad-frame", "no-stream"])
@pytest.mark.parametrize("api", APIS)
async def test_failures_after_start_are_one_error_event_never_raised(api, spec, fake_llm):
    fake_llm.set_script([spec])
    events = await call(api, fake_llm)
    assert events[-1]["type"] == "error"


@pytest.mark.parametrize("api", APIS)
async def test_a_refused_connection_is_an_error_event(api, fake_llm):
    model = model_for(api, fake_llm)
    fake_llm.stop()  # nothing listens on the port any more
    events = await contract.collect(get_stream_function(api), model, CONTEXT, StreamOptions(api_key=FAKE_API_KEY))
    assert events[-1]["type"] == "error"


@pytest.mark.parametrize("api", APIS)
async def test_closing_the_stream_closes_the_body(api, fake_llm):
    fake_llm.set_script([{"text": "one two three four five six", "hang_after": 3, "hang_ms": 20000}])
    stream_fn = get_stream_function(api)
    await contract.close_early(stream_fn, model_for(api, fake_llm), CONTEXT, StreamOptions(api_key=FAKE_API_KEY),
                               after=2)

    def disconnected() -> bool:
        fake_llm.wait_for(lambda: fake_llm.requests and fake_llm.requests[0]["client_disconnected"], 10)
        return True

    await contract.wait_for_disconnect(lambda: asyncio.to_thread(disconnected))


@pytest.mark.parametrize("status,headers,expected", [
    (429, {"retry-after": "2"}, 2000), (503, {"retry-after-ms": "1500"}, 1500), (500, {}, None),
    (401, {}, None)])
@pytest.mark.parametrize("api", APIS)
async def test_http_errors_name_the_status_and_carry_retry_after(api, status, headers, expected, fake_llm):
    fake_llm.set_script([{"status": status, "headers": headers}])
    events = await call(api, fake_llm)
    contract.check_http_error(events, status, expected)


def test_a_stream_that_raises_after_start_breaks_the_contract():
    async def bad(model, context, options):
        yield {"type": "start", "message": {}}
        raise RuntimeError("boom")

    with pytest.raises(contract.ContractViolation, match="raised after start"):
        asyncio.run(contract.collect(bad, {}, CONTEXT, None))


def test_events_without_start_or_with_two_terminals_break_the_contract():
    with pytest.raises(contract.ContractViolation, match="first event"):
        contract.check_events([{"type": "done", "message": {}}])
    with pytest.raises(contract.ContractViolation, match="exactly one terminal"):
        contract.check_events([{"type": "start"}, {"type": "done"}, {"type": "error"}])


PATHS = {"anthropic-messages": "/v1/messages", "openai-completions": "/v1/chat/completions",
         "openai-responses": "/v1/responses", "google-generative-ai": "/v1beta/models/fake-model"}
ERROR_BODIES = {  # each API's documented error JSON, as the real servers send it
    "anthropic-messages": {"type": "error", "error": {"type": "invalid_request_error",
                                                      "message": "prompt is too long: 210000 tokens > 200000"}},
    "openai-completions": {"error": {"message": "This model's maximum context length is 8192 tokens.",
                                     "type": "invalid_request_error", "param": "messages",
                                     "code": "context_length_exceeded"}},
    "openai-responses": {"error": {"message": "Your input exceeds the context window of this model.",
                                   "type": "invalid_request_error", "param": "input", "code": None}},
    "google-generative-ai": [{"error": {"code": 400, "status": "INVALID_ARGUMENT",
                                        "message": "The input token count (1200000) exceeds the maximum"}}]}
READABLE = {"anthropic-messages": "prompt is too long: 210000 tokens > 200000 (invalid_request_error)",
            "openai-completions": "This model's maximum context length is 8192 tokens. (invalid_request_error, "
                                  "context_length_exceeded)",
            "openai-responses": "Your input exceeds the context window of this model. (invalid_request_error)",
            "google-generative-ai": "The input token count (1200000) exceeds the maximum (INVALID_ARGUMENT)"}


@pytest.mark.parametrize("api", APIS)
async def test_an_http_error_reads_as_the_apis_own_message_and_still_counts_as_overflow(api, fake_llm):
    from agent_forge.ai.overflow import is_overflow_error

    fake_llm.set_script([{"status": 400, "body": ERROR_BODIES[api]}])
    error = (await call(api, fake_llm))[-1]["message"]["errorMessage"]
    where = f"{getattr(fake_llm, API_BASE_URL[api]).rstrip('/')}"
    assert error.startswith(f"HTTP 400 from {where}") and PATHS[api] in error.split(": ", 1)[0]
    assert error.endswith(f": {READABLE[api]}") and "{" not in error
    assert is_overflow_error(error)


@pytest.mark.parametrize("body,shown", [
    ("upstream connect error", "upstream connect error"),  # not JSON: its start, as sent
    ({"detail": "Not Found"}, '{"detail": "Not Found"}'),  # JSON, but no API's error shape
    ({"error": {"message": "slow down\x1b[2J\nnow", "type": "rate_limit_error"}},  # the API's: escaped, one line
     "slow down\\x1b[2J now (rate_limit_error)"),
])
async def test_an_error_body_is_shown_escaped_and_raw_only_when_not_the_documented_json(fake_llm, body, shown):
    from agent_forge.coding.retry_policy import is_retryable_error

    fake_llm.set_script([{"status": 429, "body": body, "content_type": "text/plain"}])
    error = (await call("openai-completions", fake_llm))[-1]["message"]["errorMessage"]
    assert error == f"HTTP 429 from {fake_llm.base_url_openai.rstrip('/')}/chat/completions: {shown}"
    assert is_retryable_error(error)


async def test_events_before_a_malformed_one_in_the_same_read_come_first(fake_llm):
    # One HTTP chunk, so one network read: its good events are handled and given out before the error.
    good = "".join(f'data: {{"id":"c1","choices":[{{"index":0,"delta":{{"content":"{word}"}}}}]}}\n\n'
                   for word in ("Hello", " there"))
    fake_llm.set_script([{"frames": [good + "data: {not json\n\ndata: [DONE]\n\n"]}])
    events = await call("openai-completions", fake_llm)
    assert [e["type"] for e in events] == ["start", "text_start", "text_delta", "text_delta", "error"]
    assert [e.get("delta") for e in events[2:4]] == ["Hello", " there"]
    message = events[-1]["message"]
    assert message["content"] == [{"type": "text", "text": "Hello there"}]
    assert message["errorMessage"].startswith("Malformed JSON in stream chunk from ")
