"""The openai-completions provider against scripted Chat Completions streams on a MockTransport."""

from __future__ import annotations

import asyncio

import pytest

from agent_forge.ai.options import StreamOptions
from agent_forge.ai.providers.openai_completions import stream
from ai_stream_helpers import FakeServer, collect, sse, types_of

MODEL = {
    "id": "gpt-test", "name": "GPT Test", "api": "openai-completions", "provider": "openai",
    "baseUrl": "https://api.openai.com/v1", "reasoning": True, "input": ["text", "image"],
    "contextWindow": 128_000, "maxTokens": 16_384,
    "cost": {"input": 2.0, "output": 8.0, "cacheRead": 0.5, "cacheWrite": 0.0},
}
LOCAL = {**MODEL, "provider": "ollama", "baseUrl": "http://localhost:11434/v1", "reasoning": False}
CONTEXT = {"systemPrompt": "Be brief.", "messages": [{"role": "user", "content": "Hi", "timestamp": 1}]}
DONE = b"data: [DONE]\n\n"


def opts(server: FakeServer, **kw) -> StreamOptions:
    return StreamOptions(api_key="sk-test", transport=server.transport, **kw)


def chunk(delta=None, finish=None, usage=None, cid="chatcmpl-1") -> bytes:
    data = {"id": cid, "object": "chat.completion.chunk", "choices": []}
    if delta is not None or finish is not None:
        data["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
    if usage is not None:
        data["usage"] = usage
    return sse(None, data)


def text_stream(*parts: str) -> bytes:
    body = chunk({"role": "assistant", "content": ""}) + b"".join(chunk({"content": p}) for p in parts)
    return body + chunk({}, "stop") + DONE


async def test_text_stream(server):
    server.reply(text_stream("Hel", "lo"), chunk=9)
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    assert types_of(events) == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    message = events[-1]["message"]
    assert message is events[0]["message"]
    assert message["content"] == [{"type": "text", "text": "Hello"}]
    assert (message["stopReason"], message["rawStopReason"], message["responseId"]) == ("stop", "stop", "chatcmpl-1")


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning", "reasoning_text"])
async def test_reasoning_then_text_then_tool_calls_in_order(server, field):
    body = (
        chunk({field: "think "}) + chunk({field: "more"})
        + chunk({"content": "Let me check."})
        + chunk({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                                 "function": {"name": "read", "arguments": ""}}]})
        + chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"path":'}}]})
        + chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"a.txt"}'}}]})
        + chunk({"tool_calls": [{"index": 1, "id": "call_b", "type": "function",
                                 "function": {"name": "bash", "arguments": '{"command": "ls"}'}}]})
        + chunk({}, "tool_calls") + DONE
    )
    server.reply(body, chunk=13)
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    assert types_of(events) == [
        "start", "thinking_start", "thinking_delta", "thinking_delta", "thinking_end",
        "text_start", "text_delta", "text_end",
        "toolcall_start", "toolcall_delta", "toolcall_delta",
        "toolcall_start", "toolcall_delta",  # a call stays open while its index may still send pieces
        "toolcall_end", "toolcall_end", "done",
    ]
    assert events[8] == {"type": "toolcall_start", "contentIndex": 2, "id": "call_a", "toolName": "read"}
    message = events[-1]["message"]
    assert message["content"] == [
        {"type": "thinking", "thinking": "think more"},
        {"type": "text", "text": "Let me check."},
        {"type": "toolCall", "id": "call_a", "name": "read", "arguments": {"path": "a.txt"}},
        {"type": "toolCall", "id": "call_b", "name": "bash", "arguments": {"command": "ls"}},
    ]
    assert message["stopReason"] == "toolUse" and message["rawStopReason"] == "tool_calls"


async def test_usage_chunk_after_finish_with_cached_tokens(server):
    usage = {"prompt_tokens": 1200, "completion_tokens": 300, "prompt_tokens_details": {"cached_tokens": 1000}}
    server.reply(chunk({"content": "x"}) + chunk({}, "length") + chunk(usage=usage) + DONE)
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    message = events[-1]["message"]
    got = message["usage"]
    assert (got["input"], got["output"], got["cacheRead"], got["totalTokens"]) == (200, 300, 1000, 1500)
    assert got["cost"]["total"] == pytest.approx((200 * 2 + 300 * 8 + 1000 * 0.5) / 1e6)
    assert message["stopReason"] == "length"


async def test_stop_after_tool_calls_still_means_tool_use(server):
    call = {"index": 0, "id": "c1", "function": {"name": "ls", "arguments": "{}"}}
    server.reply(chunk({"tool_calls": [call]}) + chunk({}, "stop") + DONE)
    events = await collect(stream(LOCAL, CONTEXT, opts(server)))
    assert events[-1]["message"]["stopReason"] == "toolUse"


async def test_content_filter_is_an_error(server):
    server.reply(chunk({"content": "part"}) + chunk({}, "content_filter") + DONE)
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    assert events[-1]["type"] == "error" and "content_filter" in events[-1]["message"]["errorMessage"]
    assert events[-1]["message"]["content"] == [{"type": "text", "text": "part"}]


async def test_http_error_carries_status_and_body(server):
    body = b'{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}'
    server.reply(body, status=429)
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    assert types_of(events) == ["start", "error"]
    assert events[-1]["message"]["errorMessage"] == \
        "HTTP 429 from https://api.openai.com/v1/chat/completions: Rate limit reached (rate_limit_error)"


async def test_error_object_in_stream(server):
    server.reply(chunk({"content": "so far"}) + sse(None, {"error": {"message": "upstream died", "code": 502}}))
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    message = events[-1]["message"]
    assert events[-1]["type"] == "error" and "upstream died" in message["errorMessage"]
    assert message["content"] == [{"type": "text", "text": "so far"}]


async def test_stream_cut_before_finish_is_an_error(server):
    server.reply(chunk({"content": "cut "}) + chunk({"content": "off"}))
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    assert events[-1]["type"] == "error" and "finish_reason" in events[-1]["message"]["errorMessage"]
    assert events[-1]["message"]["content"] == [{"type": "text", "text": "cut off"}]


async def test_finish_without_done_marker_is_accepted(server):
    server.reply(chunk({"content": "ok"}) + chunk({}, "stop"))
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    assert events[-1]["type"] == "done"


async def test_malformed_chunk_is_an_error(server):
    server.reply(b"data: {oops\n\n")
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    assert events[-1]["type"] == "error" and "Malformed JSON" in events[-1]["message"]["errorMessage"]


async def test_missing_key_is_an_error_unless_not_required(server):
    events = await collect(stream(MODEL, CONTEXT, StreamOptions(transport=server.transport)))
    assert events[-1]["type"] == "error" and "No API key" in events[-1]["message"]["errorMessage"]
    server.reply(text_stream("local"))
    model = {**LOCAL, "compat": {"apiKeyRequired": False}}
    events = await collect(stream(model, CONTEXT, StreamOptions(transport=server.transport)))
    assert events[-1]["type"] == "done"
    assert "authorization" not in server.requests[0].headers


async def test_cancellation_closes_the_response_and_keeps_partial_content(server):
    call = {"index": 0, "id": "c1", "function": {"name": "write", "arguments": '{"path": "f", "content": "ab'}}
    scripted = server.reply([chunk({"content": "Writing"}), chunk({"tool_calls": [call]}), DONE], hang_after=2)
    seen: list[dict] = []

    async def consume():
        async for event in stream(MODEL, CONTEXT, opts(server)):
            seen.append(event)

    task = asyncio.create_task(consume())
    await scripted.hanging.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert scripted.closed
    assert types_of(seen) == ["start", "text_start", "text_delta", "text_end", "toolcall_start", "toolcall_delta"]
    assert seen[0]["message"]["content"] == [
        {"type": "text", "text": "Writing"},
        {"type": "toolCall", "id": "c1", "name": "write", "arguments": {"path": "f", "content": "ab"}},
    ]


# ---- request body ----

IMAGE = {"type": "image", "data": "aGk=", "mimeType": "image/jpeg"}
DATA_URL = {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,aGk="}}


def multi_turn():
    return {
        "systemPrompt": "You are a test.",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "See"}, IMAGE], "timestamp": 1},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "private", "thinkingSignature": "s"},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "p.jpg"}},
                {"type": "toolCall", "id": "c2", "name": "bash", "arguments": {"command": "echo é"}},
            ], "stopReason": "toolUse", "timestamp": 2},
            {"role": "toolResult", "toolCallId": "c1", "toolName": "read", "content": [IMAGE], "isError": False,
             "timestamp": 3},
            {"role": "toolResult", "toolCallId": "c2", "toolName": "bash",
             "content": [{"type": "text", "text": "é"}], "isError": False, "timestamp": 4},
            {"role": "assistant", "content": [{"type": "text", "text": "Done "}, {"type": "text", "text": "now."}],
             "stopReason": "stop", "timestamp": 5},
            {"role": "user", "content": "Thanks", "timestamp": 6},
        ],
        "tools": [{"name": "read", "description": "Read", "parameters": {"type": "object"}}],
    }


async def test_request_url_headers_and_body(server):
    server.reply(text_stream("ok"))
    await collect(stream(MODEL, multi_turn(), opts(server, thinking_level="high", headers={"x-extra": "1"})))
    request = server.requests[0]
    assert str(request.url) == "https://api.openai.com/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test" and request.headers["x-extra"] == "1"
    body = server.body()
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["store"] is False and body["max_completion_tokens"] == 16_384
    assert body["reasoning_effort"] == "high"
    assert body["tools"] == [{"type": "function", "function": {"name": "read", "description": "Read",
                                                                "parameters": {"type": "object"}}}]
    assert body["messages"] == [
        {"role": "developer", "content": "You are a test."},
        {"role": "user", "content": [{"type": "text", "text": "See"}, DATA_URL]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read", "arguments": '{"path":"p.jpg"}'}},
            {"id": "c2", "type": "function", "function": {"name": "bash", "arguments": '{"command":"echo é"}'}},
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": "(image attached below)"},
        {"role": "tool", "tool_call_id": "c2", "content": "é"},
        {"role": "user", "content": [{"type": "text", "text": "Images returned by the tool call(s) above:"}, DATA_URL]},
        {"role": "assistant", "content": "Done now."},
        {"role": "user", "content": "Thanks"},
    ]


@pytest.mark.parametrize(
    ("level", "compat", "effort"),
    [("minimal", {}, "minimal"), ("medium", {}, "medium"), ("xhigh", {}, "high"), ("max", {}, "high"),
     ("xhigh", {"supportsXhighEffort": True}, "xhigh"), ("off", {}, None),
     ("high", {"supportsReasoningEffort": False}, None)],
)
async def test_reasoning_effort_mapping(server, level, compat, effort):
    server.reply(text_stream("ok"))
    await collect(stream({**MODEL, "compat": compat}, CONTEXT, opts(server, thinking_level=level)))
    assert server.body().get("reasoning_effort") == effort


async def test_compat_flags_for_a_local_host(server):
    server.reply(text_stream("ok"))
    model = {**LOCAL, "input": ["text"], "compat": {
        "maxTokensField": "max_tokens", "supportsUsageInStreaming": False, "supportsStore": False,
        "requiresToolResultName": True, "requiresNonNullAssistantContent": True,
    }}
    await collect(stream(model, multi_turn(), opts(server, thinking_level="high", max_tokens=1000, temperature=0.3)))
    body = server.body()
    assert body["max_tokens"] == 1000 and "max_completion_tokens" not in body
    assert "stream_options" not in body and "store" not in body and "reasoning_effort" not in body
    assert body["temperature"] == 0.3
    messages = body["messages"]
    assert messages[0] == {"role": "system", "content": "You are a test."}  # not an openai.com reasoning model
    assert messages[1]["content"][1]["type"] == "text"  # image replaced for a text-only model
    assert messages[2]["content"] == ""
    assert messages[3]["name"] == "read"


async def test_reasoning_model_off_openai_keeps_system_role_by_default(server):
    server.reply(text_stream("ok"))
    await collect(stream({**LOCAL, "reasoning": True}, CONTEXT, opts(server)))
    assert server.body()["messages"][0]["role"] == "system"


def test_sampling_params_never_replace_the_request_itself_and_the_request_temperature_wins():
    from agent_forge.ai.providers.openai_completions import build_body

    model = {**MODEL, "samplingParams": {"temperature": 0, "seed": 42, "model": "x", "messages": [],
                                         "stream": False, "tools": [], "max_tokens": 99}}
    context = {"systemPrompt": "", "messages": [{"role": "user", "content": "Hi", "timestamp": 1}]}
    body = build_body(model, context, StreamOptions(temperature=0.7))
    assert (body["model"], body["stream"], len(body["messages"])) == (MODEL["id"], True, 1)
    assert "tools" not in body and (body["temperature"], body["seed"], body["max_tokens"]) == (0.7, 42, 99)


async def test_a_mislabelled_slow_stream_is_read_as_it_arrives():
    import httpx2

    from ai_stream_helpers import ScriptedBody

    # The first chunk is shorter than the 512 bytes kept for error messages, and the server then goes quiet:
    # its events must still be delivered at once, not held back until more bytes come.
    body = ScriptedBody([chunk({"content": "Hi"}), b"never sent"], hang_after=1)
    transport = httpx2.MockTransport(
        lambda request: httpx2.Response(200, headers={"content-type": "text/plain"}, stream=body))
    events = stream(MODEL, CONTEXT, StreamOptions(api_key="sk-test", transport=transport))

    async def until_delta():
        async for event in events:
            if event["type"] == "text_delta":
                return event

    delta = await asyncio.wait_for(until_delta(), 10)
    await events.aclose()
    assert delta["delta"] == "Hi"
