"""The anthropic-messages provider against scripted Messages API streams on a MockTransport."""

from __future__ import annotations

import asyncio

import pytest

from agent_forge.ai.options import StreamOptions
from agent_forge.ai.providers.anthropic_messages import stream
from ai_stream_helpers import FakeServer, collect, sse, types_of

MODEL = {
    "id": "claude-test", "name": "Claude Test", "api": "anthropic-messages", "provider": "anthropic",
    "baseUrl": "https://api.example.test/", "reasoning": True, "input": ["text", "image"],
    "contextWindow": 200_000, "maxTokens": 64_000,
    "cost": {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75},
    "headers": {"x-model-header": "m"},
}
CONTEXT = {"systemPrompt": "Be brief.", "messages": [{"role": "user", "content": "Hi", "timestamp": 1}]}


def opts(server: FakeServer, **kw) -> StreamOptions:
    return StreamOptions(api_key="sk-test", transport=server.transport, **kw)


def message_start(usage=None, msg_id="msg_01"):
    usage = usage or {"input_tokens": 10, "output_tokens": 1}
    return sse("message_start", {"type": "message_start", "message": {"id": msg_id, "usage": usage}})


def block_start(index, block):
    return sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})


def block_delta(index, delta):
    return sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})


def block_stop(index):
    return sse("content_block_stop", {"type": "content_block_stop", "index": index})


def message_end(stop_reason="end_turn", usage=None):
    delta = {"type": "message_delta", "delta": {"stop_reason": stop_reason}, "usage": usage or {"output_tokens": 5}}
    return sse("message_delta", delta) + sse("message_stop", {"type": "message_stop"})


def text_stream(*parts: str) -> bytes:
    deltas = b"".join(block_delta(0, {"type": "text_delta", "text": p}) for p in parts)
    return message_start() + block_start(0, {"type": "text", "text": ""}) + deltas + block_stop(0) + message_end()


async def test_text_stream_events_and_final_message(server):
    server.reply(text_stream("Hel", "lo ", "there"), chunk=7)
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    assert types_of(events) == ["start", "text_start", "text_delta", "text_delta", "text_delta", "text_end", "done"]
    assert events[5] == {"type": "text_end", "contentIndex": 0, "content": "Hello there"}
    message = events[-1]["message"]
    assert message is events[0]["message"]  # one dict mutated in place
    assert message["content"] == [{"type": "text", "text": "Hello there"}]
    assert message["stopReason"] == "stop" and message["rawStopReason"] == "end_turn"
    assert message["responseId"] == "msg_01"
    assert (message["api"], message["provider"], message["model"]) == ("anthropic-messages", "anthropic", "claude-test")


async def test_start_is_yielded_before_the_request_is_sent(server):
    server.reply(text_stream("x"))
    events = stream(MODEL, CONTEXT, opts(server))
    first = await anext(events)
    assert first["type"] == "start" and first["message"]["stopReason"] == "pending"
    assert server.requests == []
    await collect(events)
    assert len(server.requests) == 1


async def test_thinking_with_signature_then_text(server):
    body = (
        message_start()
        + block_start(0, {"type": "thinking", "thinking": ""})
        + block_delta(0, {"type": "thinking_delta", "thinking": "Let me "})
        + block_delta(0, {"type": "thinking_delta", "thinking": "think."})
        + block_delta(0, {"type": "signature_delta", "signature": "c2ln"})
        + block_stop(0)
        + block_start(1, {"type": "text", "text": ""})
        + block_delta(1, {"type": "text_delta", "text": "Answer."})
        + block_stop(1)
        + message_end()
    )
    server.reply(body, chunk=11)
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    assert types_of(events) == [
        "start", "thinking_start", "thinking_delta", "thinking_delta", "thinking_end",
        "text_start", "text_delta", "text_end", "done",
    ]
    assert events[4]["content"] == "Let me think."
    assert events[-1]["message"]["content"] == [
        {"type": "thinking", "thinking": "Let me think.", "thinkingSignature": "c2ln"},
        {"type": "text", "text": "Answer."},
    ]


async def test_redacted_thinking_keeps_its_data_as_signature(server):
    body = message_start() + block_start(0, {"type": "redacted_thinking", "data": "opaque"}) + block_stop(0)
    server.reply(body + message_end())
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    block = events[-1]["message"]["content"][0]
    assert block["redacted"] is True and block["thinkingSignature"] == "opaque"


async def test_tool_use_arguments_split_over_chunks(server):
    parts = ['{"pa', 'th": "src/ma', 'in.py", "lim', 'it": 20}']
    body = (
        message_start()
        + block_start(0, {"type": "text", "text": ""})
        + block_delta(0, {"type": "text_delta", "text": "Reading."})
        + block_stop(0)
        + block_start(1, {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}})
        + b"".join(block_delta(1, {"type": "input_json_delta", "partial_json": p}) for p in parts)
        + block_stop(1)
        + message_end("tool_use")
    )
    server.reply(body, chunk=5)
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    assert types_of(events)[4:] == ["toolcall_start", *["toolcall_delta"] * 4, "toolcall_end", "done"]
    assert events[4] == {"type": "toolcall_start", "contentIndex": 1, "id": "toolu_1", "toolName": "read"}
    assert [e["delta"] for e in events[5:9]] == parts
    call = {"type": "toolCall", "id": "toolu_1", "name": "read", "arguments": {"path": "src/main.py", "limit": 20}}
    assert events[9]["toolCall"] == call
    assert events[-1]["message"]["stopReason"] == "toolUse"


async def test_invalid_tool_json_gives_arguments_error(server):
    body = (
        message_start()
        + block_start(0, {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}})
        + block_delta(0, {"type": "input_json_delta", "partial_json": '{"command": "ls"'})
        + block_stop(0)
        + message_end("tool_use")
    )
    server.reply(body)
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    call = events[-1]["message"]["content"][0]
    assert call["arguments"] == {}
    assert call["argumentsError"].endswith('Received arguments:\n{"command": "ls"')


async def test_usage_with_cache_and_cost(server):
    usage = {"input_tokens": 1000, "output_tokens": 1, "cache_read_input_tokens": 4000,
             "cache_creation_input_tokens": 200}
    body = message_start(usage) + message_end(usage={"output_tokens": 500})
    server.reply(body)
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    got = events[-1]["message"]["usage"]
    assert (got["input"], got["output"], got["cacheRead"], got["cacheWrite"]) == (1000, 500, 4000, 200)
    assert got["totalTokens"] == 5700
    assert got["cost"]["total"] == pytest.approx((1000 * 3 + 500 * 15 + 4000 * 0.3 + 200 * 3.75) / 1e6)


@pytest.mark.parametrize(("raw", "ours"), [("max_tokens", "length"), ("stop_sequence", "stop"), ("pause_turn", "stop")])
async def test_stop_reason_mapping(server, raw, ours):
    server.reply(message_start() + message_end(raw))
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    assert events[-1]["message"]["stopReason"] == ours


async def test_refusal_is_an_error(server):
    server.reply(message_start() + message_end("refusal"))
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    assert events[-1]["type"] == "error"
    assert "refusal" in events[-1]["message"]["errorMessage"]


async def test_http_error_carries_status_and_body(server):
    body = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    server.reply(body, status=529)
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    assert types_of(events) == ["start", "error"]
    assert events[-1]["message"]["stopReason"] == "error"
    assert events[-1]["message"]["errorMessage"] == \
        "HTTP 529 from https://api.example.test/v1/messages: Overloaded (overloaded_error)"  # the API's words


async def test_error_event_in_stream_keeps_partial_text(server):
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    body = (
        message_start()
        + block_start(0, {"type": "text", "text": ""})
        + block_delta(0, {"type": "text_delta", "text": "partial"})
        + sse("error", error)
    )
    server.reply(body)
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    message = events[-1]["message"]
    assert events[-1]["type"] == "error" and "overloaded_error" in message["errorMessage"]
    assert message["content"] == [{"type": "text", "text": "partial"}]


async def test_stream_cut_before_message_stop_is_an_error(server):
    cut = block_delta(0, {"type": "text_delta", "text": "cut"})
    body = message_start() + block_start(0, {"type": "text", "text": ""}) + cut
    server.reply(body)
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    assert events[-1]["type"] == "error"
    assert "message_stop" in events[-1]["message"]["errorMessage"]
    assert events[-1]["message"]["content"][0]["text"] == "cut"


async def test_malformed_json_is_an_error(server):
    server.reply(message_start() + b"event: content_block_delta\ndata: {not json\n\n")
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    assert events[-1]["type"] == "error" and "Malformed JSON" in events[-1]["message"]["errorMessage"]


async def test_connection_error_is_an_error_event():
    import httpx2

    def refuse(request):
        raise httpx2.ConnectError("connection refused")

    options = StreamOptions(api_key="k", transport=httpx2.MockTransport(refuse))
    events = await collect(stream(MODEL, CONTEXT, options))
    assert types_of(events) == ["start", "error"]
    text = events[-1]["message"]["errorMessage"]
    assert text.startswith("cannot connect to http") and text.endswith("/v1/messages: connection refused")


async def test_missing_api_key_names_the_env_var(server):
    model = {**MODEL, "compat": {"apiKeyEnv": "ANTHROPIC_API_KEY"}}
    events = await collect(stream(model, CONTEXT, StreamOptions(transport=server.transport)))
    assert types_of(events) == ["start", "error"]
    assert "ANTHROPIC_API_KEY" in events[-1]["message"]["errorMessage"]
    assert server.requests == []


async def test_cancellation_closes_the_response_and_keeps_the_text(server):
    body = message_start() + block_start(0, {"type": "text", "text": ""}) + b"".join(
        block_delta(0, {"type": "text_delta", "text": t}) for t in ["one ", "two ", "three"]
    ) + block_stop(0) + message_end()
    parts = body.split(b"\n\n")
    chunks = [p + b"\n\n" for p in parts[:-1]]
    scripted = server.reply(chunks, hang_after=4)  # start, block start, two deltas, then silence
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
    assert types_of(seen) == ["start", "text_start", "text_delta", "text_delta"]
    assert seen[0]["message"]["content"] == [{"type": "text", "text": "one two "}]


async def test_cancellation_finalizes_an_open_tool_call(server):
    start = block_start(0, {"type": "tool_use", "id": "t1", "name": "write", "input": {}})
    body = message_start() + start + block_delta(
        0, {"type": "input_json_delta", "partial_json": '{"path": "a.txt", "content": "hel'}
    )
    scripted = server.reply([body, b""], hang_after=1)
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
    assert types_of(seen) == ["start", "toolcall_start", "toolcall_delta"]
    assert seen[0]["message"]["content"][0]["arguments"] == {"path": "a.txt", "content": "hel"}


async def test_closing_the_generator_early_closes_the_response(server):
    scripted = server.reply(text_stream("a", "b", "c"), chunk=20)
    events = stream(MODEL, CONTEXT, opts(server))
    async for event in events:
        if event["type"] == "text_delta":
            break
    await events.aclose()
    assert scripted.closed
    assert event["contentIndex"] == 0


# ---- request body ----

IMAGE = {"type": "image", "data": "aGk=", "mimeType": "image/png"}


def multi_turn():
    return {
        "systemPrompt": "You are a test.",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Look"}, IMAGE, {"type": "text", "text": ""}],
             "timestamp": 1},
            {"role": "assistant", "api": "anthropic-messages", "provider": "anthropic", "model": "claude-test",
             "content": [
                 {"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig1"},
                 {"type": "thinking", "thinking": "unsigned idea"},
                 {"type": "thinking", "thinking": "[hidden]", "thinkingSignature": "opaque", "redacted": True},
                 {"type": "text", "text": ""},
                 {"type": "text", "text": "Running two tools."},
                 {"type": "toolCall", "id": "call|abc/1", "name": "bash", "arguments": {"command": "ls"}},
                 {"type": "toolCall", "id": "toolu_2", "name": "read", "arguments": {"path": "x.png"}},
             ], "stopReason": "toolUse", "timestamp": 2},
            {"role": "toolResult", "toolCallId": "call|abc/1", "toolName": "bash",
             "content": [{"type": "text", "text": "a\nb"}], "isError": False, "timestamp": 3},
            {"role": "toolResult", "toolCallId": "toolu_2", "toolName": "read",
             "content": [{"type": "text", "text": "image:"}, IMAGE], "isError": True, "timestamp": 4},
        ],
        "tools": [
            {"name": "bash", "description": "Run", "parameters": {"type": "object", "properties": {}}},
            {"name": "read", "description": "Read", "parameters": {"type": "object", "properties": {}}},
        ],
    }


@pytest.mark.parametrize("base_url", ["https://api.example.test/v1", "https://api.example.test/v1/"])
async def test_a_base_url_ending_in_v1_gets_no_second_v1(server, base_url):
    server.reply(text_stream("ok"))
    await collect(stream({**MODEL, "baseUrl": base_url}, CONTEXT, opts(server)))
    assert str(server.requests[0].url) == "https://api.example.test/v1/messages"


async def test_request_url_headers_and_body(server):
    server.reply(text_stream("ok"))
    await collect(stream(MODEL, multi_turn(), opts(server, headers={"x-extra": "1"})))
    request = server.requests[0]
    assert str(request.url) == "https://api.example.test/v1/messages"
    assert request.headers["x-api-key"] == "sk-test"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.headers["x-model-header"] == "m" and request.headers["x-extra"] == "1"
    body = server.body()
    assert body["model"] == "claude-test" and body["stream"] is True and body["max_tokens"] == 64_000
    assert "thinking" not in body
    assert body["system"] == [{"type": "text", "text": "You are a test.", "cache_control": {"type": "ephemeral"}}]
    schema = {"type": "object", "properties": {}}
    assert body["tools"][0] == {"name": "bash", "description": "Run", "input_schema": schema}
    assert body["tools"][1]["cache_control"] == {"type": "ephemeral"}
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "aGk="}}
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Look"}, image]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "sig1"},
            {"type": "text", "text": "unsigned idea"},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "text", "text": "Running two tools."},
            {"type": "tool_use", "id": "call_abc_1", "name": "bash", "input": {"command": "ls"}},
            {"type": "tool_use", "id": "toolu_2", "name": "read", "input": {"path": "x.png"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "call_abc_1", "content": "a\nb", "is_error": False},
            {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": True,
             "content": [{"type": "text", "text": "image:"}, image], "cache_control": {"type": "ephemeral"}},
        ]},
    ]


async def test_thinking_from_another_model_is_replayed_as_text(server):
    context = {"systemPrompt": "", "messages": [
        {"role": "user", "content": "q", "timestamp": 1},
        {"role": "assistant", "api": "openai-completions", "provider": "openai", "model": "gpt",
         "content": [{"type": "thinking", "thinking": "foreign", "thinkingSignature": "x"}], "timestamp": 2},
        {"role": "user", "content": "again", "timestamp": 3},
    ]}
    server.reply(text_stream("ok"))
    await collect(stream(MODEL, context, opts(server)))
    body = server.body()
    assert "system" not in body and "tools" not in body
    assert body["messages"][1] == {"role": "assistant", "content": [{"type": "text", "text": "foreign"}]}
    assert body["messages"][0]["content"] == [{"type": "text", "text": "q"}]  # cache mark only on the last user
    assert body["messages"][2]["content"][-1]["cache_control"] == {"type": "ephemeral"}


@pytest.mark.parametrize(
    ("level", "max_tokens", "model_max", "budget", "sent_max"),
    [
        ("minimal", None, 64_000, 1024, 64_000),
        ("medium", None, 64_000, 8192, 64_000),
        ("high", 4000, 64_000, 16384, 20480),  # raised to budget + 4096
        ("xhigh", None, 20_000, 15904, 20_000),  # capped by the model: the budget shrinks
        ("max", None, 64_000, 32000, 64_000),
    ],
)
async def test_thinking_budget(server, level, max_tokens, model_max, budget, sent_max):
    server.reply(text_stream("ok"))
    model = {**MODEL, "maxTokens": model_max}
    await collect(stream(model, CONTEXT, opts(server, thinking_level=level, max_tokens=max_tokens, temperature=0.5)))
    body = server.body()
    assert body["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert body["max_tokens"] == sent_max
    assert "temperature" not in body


async def test_no_thinking_for_non_reasoning_model_and_temperature_passes(server):
    server.reply(text_stream("ok"))
    model = {**MODEL, "reasoning": False}
    await collect(stream(model, CONTEXT, opts(server, thinking_level="high", temperature=0.2)))
    body = server.body()
    assert "thinking" not in body and body["temperature"] == 0.2


async def test_images_replaced_for_text_only_model_and_tool_cache_flag(server):
    server.reply(text_stream("ok"))
    model = {**MODEL, "input": ["text"], "compat": {"supportsCacheControlOnTools": False}}
    await collect(stream(model, multi_turn(), opts(server)))
    body = server.body()
    assert all("cache_control" not in tool for tool in body["tools"])
    first = body["messages"][0]["content"]
    assert first[1]["type"] == "text" and "image" in first[1]["text"]


def test_sampling_params_with_thinking_keep_only_top_p():
    from agent_forge.ai.providers.anthropic_messages import build_body

    model = {**MODEL, "samplingParams": {"temperature": 0, "top_p": 0.97, "top_k": 5, "seed": 1},
             "samplingParamsByThinkingLevel": {"high": {"top_p": 0.99}}}
    thinking = build_body(model, CONTEXT, StreamOptions(thinking_level="high"))
    plain = build_body(model, CONTEXT, StreamOptions(thinking_level="off"))
    assert "thinking" in thinking and {k: thinking.get(k) for k in ("temperature", "top_p", "top_k")} == {
        "temperature": None, "top_p": 0.99, "top_k": None}
    assert {k: plain.get(k) for k in ("temperature", "top_p", "top_k", "seed")} == {
        "temperature": 0, "top_p": 0.97, "top_k": 5, "seed": None}
