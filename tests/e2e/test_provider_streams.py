"""End to end: what the real CLI makes of misbehaving model servers and of model settings that shape requests,
on all four wire APIs, against the loopback fake LLM server: non-streaming and empty answers, oversized SSE
lines and events, a stalled stream (settings `httpIdleTimeoutMs`), models.json `samplingParams`, and the
`responseModel` the server reports."""

from __future__ import annotations

import json

import pytest

from agent_forge.modes.rpc.client import RpcClient

APIS = ("openai-completions", "anthropic-messages", "openai-responses", "google-generative-ai")
MiB = 1024 * 1024
NO_RETRY_WAIT = {"retry": {"baseDelayMs": 1}}


async def start(env, cwd, *args):
    return await RpcClient.start(list(args), cwd=str(cwd), env=env)


def assistant_errors(events):
    return [e["message"].get("errorMessage") for e in events
            if e["type"] == "message_end" and e["message"]["role"] == "assistant"]


async def last_assistant(client):
    messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    return [m for m in messages if m["role"] == "assistant"][-1]


# ---- 15: answers that are not an event stream, and empty streams ---------------------------------------

# the ESC of the body is shown as its escape, as the terminal output shows it (README, Output)
HTML_START = "<!DOCTYPE html> <html> <head><title>Internal Server Error</title></head>\\x1b[31m<p>"
NOT_A_STREAM = [
    ("plain JSON", {"status": 200, "body": {"id": "chatcmpl-1", "object": "chat.completion",
                                            "choices": [{"message": {"role": "assistant", "content": "Hi"}}]}},
     '200 OK: the answer is not an event stream (content-type: application/json); body starts: '
     '"{"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"message": {"role": "assistant", '
     '"content": "Hi"}}]}"'),
    ("an HTML page", {"status": 200, "content_type": "text/html; charset=utf-8",
                      "body": "<!DOCTYPE html>\n<html>\r\n<head><title>Internal Server Error</title></head>\x1b[31m"
                              + "<p>" + "x" * 400 + "</p></html>"},
     '200 OK: the answer is not an event stream (content-type: text/html; charset=utf-8); body starts: '
     f'"{HTML_START}' + "x" * (200 - len(HTML_START)) + '…"'),  # one line, no control bytes, 200 characters
    ("only [DONE]", {"frames": ["data: [DONE]\n\n"]},
     '200 OK: the answer sent no events (content-type: text/event-stream; charset=utf-8); body starts: '
     '"data: [DONE]"'),
    ("an empty stream", {"frames": []},
     '200 OK: the answer sent no events (content-type: text/event-stream; charset=utf-8); empty body'),
    ("a mislabelled empty body", {"frames": [], "headers": {"Content-Type": "application/octet-stream"}},
     '200 OK: the answer is not an event stream (content-type: application/octet-stream); empty body'),
]


@pytest.mark.parametrize("api", APIS)
async def test_a_reply_that_is_no_event_stream_says_what_came_and_is_not_retried(agent_env_factory, fake_llm,
                                                                                 tmp_path, api):
    env = agent_env_factory(api=api, settings=NO_RETRY_WAIT)
    fake_llm.set_script([spec for _, spec, _ in NOT_A_STREAM])
    async with await start(env, tmp_path) as client:
        errors = []
        for label, _, _ in NOT_A_STREAM:
            events = await client.prompt_and_wait(f"try {label}")
            assert "auto_retry_start" not in [e["type"] for e in events], label
            errors += assistant_errors(events)
    assert errors == [expected for _, _, expected in NOT_A_STREAM]
    assert len(fake_llm.requests) == len(NOT_A_STREAM)  # one request each: a 200 is not worth retrying


async def test_a_mislabelled_event_stream_is_still_read(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings=NO_RETRY_WAIT)
    fake_llm.set_script([{"text": "Read anyway.", "headers": {"Content-Type": "text/plain"}}])
    async with await start(env, tmp_path) as client:
        events = await client.prompt_and_wait("hello")
        message = await last_assistant(client)
    assert assistant_errors(events) == [None]
    assert message["content"] == [{"type": "text", "text": "Read anyway."}]


async def test_a_completions_stream_with_nothing_before_done_is_an_error(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings=NO_RETRY_WAIT)
    role_only = ('data: {"id":"c1","object":"chat.completion.chunk",'
                 '"choices":[{"index":0,"delta":{"role":"assistant"}}]}')
    fake_llm.set_script([{"frames": [role_only + "\n\n", "data: [DONE]\n\n"]}, {"text": "never requested"}])
    async with await start(env, tmp_path) as client:
        events = await client.prompt_and_wait("hello")
    assert assistant_errors(events) == ["The stream sent [DONE] with no content and no finish_reason"]
    assert len(fake_llm.requests) == 1


async def test_an_html_error_page_is_shown_on_one_line_and_its_status_still_retried(agent_env_factory, fake_llm,
                                                                                    tmp_path):
    env = agent_env_factory(settings=NO_RETRY_WAIT)
    page = "<html>\r\n<head><title>502 Bad Gateway</title></head>\n<body>" + "z" * 300 + "</body></html>"
    fake_llm.set_script([{"status": 502, "content_type": "text/html", "body": page}, {"text": "Back."}])
    async with await start(env, tmp_path) as client:
        events = await client.prompt_and_wait("hello")
    shown = "<html> <head><title>502 Bad Gateway</title></head> <body>"
    retry = next(e for e in events if e["type"] == "auto_retry_start")
    assert retry["errorMessage"] == (f'HTTP 502 from {fake_llm.base_url_openai}/chat/completions: (content-type: '
                                     f'text/html) "{shown}' + "z" * (200 - len(shown)) + '…"')
    assert assistant_errors(events) == [retry["errorMessage"], None]


# ---- 16: limits on one SSE line and one event ------------------------------------------------------------


@pytest.mark.parametrize("api", ["openai-completions", "anthropic-messages"])
async def test_a_line_over_16_mib_fails_the_request_without_reading_the_rest(agent_env_factory, fake_llm,
                                                                             tmp_path, api):
    env = agent_env_factory(api=api, settings=NO_RETRY_WAIT)
    frames = ["data: "] + ["x" * MiB] * 48 + ["\n\n"]  # 48 MiB in one line, written 1 MiB at a time
    fake_llm.set_script([{"frames": frames}, {"text": "never requested"}])
    async with await start(env, tmp_path) as client:
        events = await client.prompt_and_wait("stream a huge line")
        [record] = fake_llm.wait_for_requests(1, done=True)
    assert assistant_errors(events) == [
        "The server sent an event-stream line longer than 16 MiB (the limit for one line); the response was abandoned"]
    assert "auto_retry_start" not in [e["type"] for e in events]
    assert record["outcome"] == "client_disconnected" and record["events_sent"] < len(frames) - 8


async def test_an_event_over_32_mib_fails_the_request(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings=NO_RETRY_WAIT)
    line = "data: " + "y" * (11 * MiB) + "\n"
    fake_llm.set_script([{"frames": [line, line, line, "\n"]}, {"text": "never requested"}])
    async with await start(env, tmp_path) as client:
        events = await client.prompt_and_wait("stream a huge event")
    assert assistant_errors(events) == [
        "The server sent an event-stream event larger than 32 MiB (the limit for one event); the response was "
        "abandoned"]
    assert len(fake_llm.requests) == 1


# ---- 17: idle timeout between chunks ---------------------------------------------------------------------

IDLE_MS = 500
"""The idle timeout of the stall tests, each of which waits it out once: short, yet far above the few
milliseconds the loopback server takes to answer a request's headers on a loaded machine (1.5 s cost the five
tests 7 s)."""


@pytest.mark.parametrize("api", APIS)
async def test_a_stalled_stream_times_out_and_the_retry_recovers(agent_env_factory, fake_llm, tmp_path, api):
    env = agent_env_factory(api=api, settings={"httpIdleTimeoutMs": IDLE_MS, **NO_RETRY_WAIT})
    fake_llm.set_script([{"text": "Partial answer that stalls", "hang_after": 2, "hang_ms": 60000},
                         {"text": "Recovered."}])
    async with await start(env, tmp_path) as client:
        events = await client.prompt_and_wait("hello", timeout=60)
        message = await last_assistant(client)
    first, second = fake_llm.wait_for_requests(2, done=True)
    retry = next(e for e in events if e["type"] == "auto_retry_start")
    assert retry["errorMessage"] == "Read timed out: no data from the server for 0.5 s (settings httpIdleTimeoutMs)"
    assert first["hanging"] is False and first["outcome"] == "client_disconnected"
    assert second["outcome"] == "ok"
    assert message["stopReason"] == "stop" and message["content"][-1]["text"] == "Recovered."


async def test_a_stall_before_the_first_event_times_out_too(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"httpIdleTimeoutMs": IDLE_MS, "retry": {"enabled": False}})
    fake_llm.set_script([{"text": "never sent", "hang": True, "hang_ms": 60000}])
    async with await start(env, tmp_path) as client:
        events = await client.prompt_and_wait("hello", timeout=60)
    assert assistant_errors(events) == [
        "Read timed out: no data from the server for 0.5 s (settings httpIdleTimeoutMs)"]


# ---- 18a: samplingParams ---------------------------------------------------------------------------------

SAMPLING = {"temperature": 0, "seed": 42, "top_p": 0.9, "top_k": 20, "model": "not-this", "stream": False}
SENT = {
    "openai-completions": lambda body: {k: body.get(k) for k in ("temperature", "seed", "top_p", "top_k")},
    "openai-responses": lambda body: {k: body.get(k) for k in ("temperature", "seed", "top_p", "top_k")},
    "anthropic-messages": lambda body: {k: body.get(k) for k in ("temperature", "seed", "top_p", "top_k")},
    "google-generative-ai": lambda body: {k: body["generationConfig"].get(k) for k in
                                          ("temperature", "seed", "topP", "topK")},
}
EXPECTED = {
    "openai-completions": {"temperature": 0.5, "seed": 42, "top_p": 0.9, "top_k": 20},
    "openai-responses": {"temperature": 0.5, "seed": 42, "top_p": 0.9, "top_k": 20},
    "anthropic-messages": {"temperature": 0.5, "seed": None, "top_p": 0.9, "top_k": 20},
    "google-generative-ai": {"temperature": 0.5, "seed": 42, "topP": 0.9, "topK": 20},
}


@pytest.mark.parametrize("api", APIS)
async def test_sampling_params_of_a_models_json_model_are_sent(agent_env_factory, fake_llm, tmp_path, api):
    entry = {"id": "fake-model", "reasoning": False, "samplingParams": SAMPLING,
             "samplingParamsByThinkingLevel": {"off": {"temperature": 0.5}, "high": {"temperature": 1}}}
    env = agent_env_factory(api=api, models=[entry])
    fake_llm.set_script([{"text": "Deterministic."}])
    async with await start(env, tmp_path) as client:
        events = await client.prompt_and_wait("hello")
    assert assistant_errors(events) == [None]
    [request] = fake_llm.requests
    assert SENT[api](request["body"]) == EXPECTED[api]
    assert request["body"].get("model", "fake-model") == "fake-model"  # the request's own fields stay
    assert request["body"].get("stream", True) is True


# ---- 18b: responseModel ------------------------------------------------------------------------------------


@pytest.mark.parametrize("api", APIS)
async def test_the_model_the_server_reports_is_kept_as_response_model(agent_env_factory, fake_llm, tmp_path, api):
    env = agent_env_factory(api=api)
    fake_llm.set_script([{"text": "From a dated snapshot.", "model": "fake-model-2026-01-01"},
                         {"text": "From the model asked for."}])
    async with await start(env, tmp_path) as client:
        await client.prompt_and_wait("first")
        first = await last_assistant(client)
        await client.prompt_and_wait("second")
        second = await last_assistant(client)
        session_file = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    assert first["model"] == "fake-model" and first["responseModel"] == "fake-model-2026-01-01"
    assert "responseModel" not in second  # the server named the requested id
    saved = [json.loads(line) for line in open(session_file, encoding="utf-8")]
    assert [e["message"].get("responseModel") for e in saved
            if e.get("type") == "message" and e["message"]["role"] == "assistant"] == ["fake-model-2026-01-01", None]


# ---- an error object inside a stream reads as an HTTP error body does (tester finding, session 9) -----------

@pytest.mark.parametrize("api", APIS)
async def test_an_error_inside_the_stream_is_its_message_not_its_json(agent_env_factory, fake_llm, tmp_path, api):
    env = agent_env_factory(api=api, settings={"retry": {"enabled": False}})
    error = {"message": "model crashed \x1b[31mhere", "type": "server_error", "code": "engine_down"}
    fake_llm.set_script([{"text": "partial", "error_event": error, "error_after": 1}])
    async with await start(env, tmp_path) as client:
        events = await client.prompt_and_wait("hi")
    [shown] = assistant_errors(events)
    assert shown.startswith("model crashed \\x1b[31mhere (") and "{" not in shown, shown  # escaped, not obeyed


# ---- a token count past what JSON readers hold exactly is junk (tester finding, session 9) ----------------

@pytest.mark.parametrize("api", APIS)
async def test_a_token_count_past_two_to_the_53_is_not_taken(agent_env_factory, fake_llm, tmp_path, api):
    """10**30 prompt tokens went into message_end and the file (cost 3e24) while get_session_stats counted 0."""
    env = agent_env_factory(api=api)
    fake_llm.set_script([{"text": "a1", "usage": {"input": 10**30, "output": 5}}])
    async with await start(env, tmp_path) as client:
        events = await client.prompt_and_wait("q1")
        stats = (await client.send({"type": "get_session_stats"}))["data"]
        path = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    [usage] = [e["message"]["usage"] for e in events
               if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
    assert usage["input"] == 0 and usage["output"] == 5 and usage["cost"]["total"] < 1, usage
    assert stats["tokens"]["output"] == 5 and str(10**30) not in open(path).read(), stats


# ---- Gemini: a finishReason ends the answer --------------------------------------------------------------

def _gemini_frames(text: str) -> list[str]:
    from support import fake_gemini

    return [frame.decode() for frame in fake_gemini.stream({"text": text, "text_deltas": 2}, 1, {}).frames]


@pytest.mark.parametrize("after", ["kept open", "more chunks"])
async def test_a_gemini_chunk_with_a_finish_reason_ends_the_answer(agent_env_factory, fake_llm, tmp_path, after):
    """Gemini has no terminal event: the chunk carrying `finishReason` (and the usage) is the last that counts,
    whether the server then holds the connection open (answered at once, not at the idle timeout) or sends
    more chunks (not added)."""
    env = agent_env_factory(api="google-generative-ai", settings={**NO_RETRY_WAIT, "httpIdleTimeoutMs": 600000})
    frames = _gemini_frames("Done here")
    if after == "kept open":
        spec = {"frames": frames, "hang_after": len(frames), "hang_ms": 600000}
    else:
        spec = {"frames": frames + _gemini_frames("EXTRA words")[:1]}
    fake_llm.set_script([spec])
    async with await start(env, tmp_path) as client:
        events = await client.prompt_and_wait("hello", timeout=30)
        answer = await last_assistant(client)
    assert assistant_errors(events) == [None]
    assert answer["stopReason"] == "stop" and [b["text"] for b in answer["content"]] == ["Done here"]
    assert answer["usage"]["output"] > 0


# ---- error bodies: at most 500 characters, no control characters, in every mode -----------------------------

_NASTY = "\x1b[31mred\x1b[0m\rover\x07bell\x9b2Jcsi\x00nul\x7fdel "  # ESC, CR, BEL, C1 CSI, NUL, DEL
ERROR_BODIES = {
    "plain text": lambda api: {"status": 400, "body": _NASTY * 100, "content_type": "text/plain"},
    "the API's error JSON": lambda api: {"status": 400, "body": {"error": {"message": _NASTY * 100,
                                                                          "type": "invalid_request_error"}}},
}


def _shown_body(error: str) -> str:
    """The part of `HTTP 400 from <url>: <body>` that quotes the body (the API's message, without its tags)."""
    assert error.startswith("HTTP 400 from http://127.0.0.1:"), error
    return error.split(": ", 1)[1].removesuffix(" (invalid_request_error)")


def _clean(text: str) -> bool:
    return not any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in text)


@pytest.mark.parametrize("body", list(ERROR_BODIES))
@pytest.mark.parametrize("api", APIS)
async def test_an_error_body_is_quoted_short_and_clean_over_rpc(agent_env_factory, fake_llm, tmp_path, api, body):
    env = agent_env_factory(api=api, settings=NO_RETRY_WAIT)
    fake_llm.set_script([ERROR_BODIES[body](api)])
    async with await start(env, tmp_path) as client:
        events = await client.prompt_and_wait("hello", timeout=60)
    [error] = assistant_errors(events)
    shown = _shown_body(error)
    assert _clean(error) and len(shown) <= 501 and "\\x1b[31mred" in shown, error


@pytest.mark.parametrize("body", list(ERROR_BODIES))
@pytest.mark.parametrize("mode", [["-p"], ["--mode", "json", "-p"]])
def test_an_error_body_is_quoted_short_and_clean_in_print_modes(agent_env_factory, fake_llm, tmp_path, mode, body):
    import subprocess
    import sys

    env = agent_env_factory(api="anthropic-messages", settings=NO_RETRY_WAIT)
    fake_llm.set_script([ERROR_BODIES[body]("anthropic-messages")])
    result = subprocess.run([sys.executable, "-m", "agent_forge", *mode, "hello"], capture_output=True, env=env,
                            cwd=tmp_path, timeout=60)
    assert result.returncode == 1
    [line] = result.stderr.decode().splitlines()
    assert _clean(line) and line.startswith("agent-forge: HTTP 400 from "), line
    assert len(_shown_body(line.removeprefix("agent-forge: "))) <= 501, line
    if mode != ["-p"]:  # the JSON events carry the same cleaned text
        ends = [json.loads(x) for x in result.stdout.splitlines() if b'"message_end"' in x]
        error = ends[-1]["message"]["errorMessage"]
        assert _clean(error) and len(_shown_body(error)) <= 501, error
