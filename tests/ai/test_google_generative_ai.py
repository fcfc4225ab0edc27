"""The google-generative-ai provider against streamGenerateContent SSE bodies (written from the API reference's
`GenerateContentResponse` and thinking docs) on a MockTransport."""

from __future__ import annotations

import asyncio
import json

import pytest

from agent_forge.ai.options import StreamOptions
from agent_forge.ai.overflow import is_context_overflow
from agent_forge.ai.providers.google_generative_ai import FOREIGN_CALL_SIGNATURE, stream
from ai_stream_helpers import FakeServer, collect, sse, types_of

MODEL = {
    "id": "gemini-test", "name": "Gemini Test", "api": "google-generative-ai", "provider": "google",
    "baseUrl": "https://gl.example.test/v1beta", "reasoning": True, "input": ["text", "image"],
    "contextWindow": 1_048_576, "maxTokens": 65_536,
    "cost": {"input": 1.25, "output": 10.0, "cacheRead": 0.125, "cacheWrite": 0.0},
}
CONTEXT = {"systemPrompt": "Be brief.", "messages": [{"role": "user", "content": "Hi", "timestamp": 1}]}
USAGE = {"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120}


def opts(server: FakeServer, **kw) -> StreamOptions:
    return StreamOptions(api_key="g-key", transport=server.transport, **kw)


def chunk(*parts: dict, finish: str | None = None, usage: dict | None = None, response_id: str = "r-1") -> bytes:
    candidate: dict = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    data: dict = {"candidates": [candidate], "modelVersion": "gemini-test", "responseId": response_id}
    if usage:
        data["usageMetadata"] = usage
    return sse(None, data)


async def test_text_stream(server):
    server.reply(chunk({"text": "Hel"}) + chunk({"text": "lo"}, finish="STOP", usage=USAGE), chunk=13)
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    assert types_of(events) == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    message = events[-1]["message"]
    assert message is events[0]["message"]
    assert message["content"] == [{"type": "text", "text": "Hello"}]
    assert (message["stopReason"], message["rawStopReason"], message["responseId"]) == ("stop", "STOP", "r-1")


async def test_thought_parts_with_signature_then_text(server):
    body = (chunk({"text": "Consider ", "thought": True}) + chunk({"text": "it.", "thought": True})
            + chunk({"text": "", "thought": True, "thoughtSignature": "T-SIG"})
            + chunk({"text": "Answer.", "thoughtSignature": "X-SIG"}, finish="STOP"))
    server.reply(body)
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    assert types_of(events) == ["start", "thinking_start", "thinking_delta", "thinking_delta", "thinking_end",
                                "text_start", "text_delta", "text_end", "done"]
    assert events[-1]["message"]["content"] == [
        {"type": "thinking", "thinking": "Consider it.", "thinkingSignature": "T-SIG"},
        {"type": "text", "text": "Answer.", "textSignature": "X-SIG"},
    ]


async def test_function_calls_are_whole_blocks_with_their_signatures(server):
    body = (chunk({"text": "Reading both."})
            + chunk({"functionCall": {"name": "read", "args": {"path": "a.txt"}}, "thoughtSignature": "C-SIG"},
                    {"functionCall": {"name": "bash", "args": {"command": "ls"}, "id": "given-id"}},
                    finish="STOP", usage=USAGE))
    server.reply(body, chunk=29)
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    assert types_of(events) == ["start", "text_start", "text_delta", "text_end",
                                "toolcall_start", "toolcall_delta", "toolcall_end",
                                "toolcall_start", "toolcall_delta", "toolcall_end", "done"]
    assert json.loads(events[5]["delta"]) == {"path": "a.txt"}
    message = events[-1]["message"]
    first, second = message["content"][1:]
    assert first["name"] == "read" and first["arguments"] == {"path": "a.txt"}
    assert first["thoughtSignature"] == "C-SIG" and first["id"].startswith("call_")
    assert second == {"type": "toolCall", "id": "given-id", "name": "bash", "arguments": {"command": "ls"}}
    assert message["stopReason"] == "toolUse"


async def test_usage_with_cached_and_thought_tokens_and_cost(server):
    usage = {"promptTokenCount": 1000, "cachedContentTokenCount": 600, "candidatesTokenCount": 50,
             "thoughtsTokenCount": 150, "totalTokenCount": 1200}
    server.reply(chunk({"text": "a"}, usage={**usage, "candidatesTokenCount": 1})
                 + chunk({"text": "b"}, finish="STOP", usage=usage))
    got = (await collect(stream(MODEL, CONTEXT, opts(server))))[-1]["message"]["usage"]
    assert (got["input"], got["cacheRead"], got["output"], got["reasoning"], got["totalTokens"]) == (
        400, 600, 200, 150, 1200)
    assert got["cost"]["total"] == pytest.approx(400 * 1.25e-6 + 600 * 0.125e-6 + 200 * 10e-6)


@pytest.mark.parametrize(("finish", "kind", "reason"), [
    ("MAX_TOKENS", "done", "length"), ("SAFETY", "error", "error"), ("MALFORMED_FUNCTION_CALL", "error", "error"),
])
async def test_finish_reasons(server, finish, kind, reason):
    server.reply(chunk({"text": "x"}, finish=finish))
    final = (await collect(stream(MODEL, CONTEXT, opts(server))))[-1]
    assert final["type"] == kind and final["message"]["stopReason"] == reason
    assert final["message"]["rawStopReason"] == finish
    if kind == "error":
        assert finish in final["message"]["errorMessage"]


async def test_blocked_prompt_is_an_error(server):
    server.reply(sse(None, {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": USAGE}))
    final = (await collect(stream(MODEL, CONTEXT, opts(server))))[-1]
    assert final["type"] == "error" and "blockReason: SAFETY" in final["message"]["errorMessage"]


async def test_http_error_for_an_oversized_prompt_is_an_overflow(server):
    error = {"error": {"code": 400, "status": "INVALID_ARGUMENT", "message":
                       "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."}}
    server.reply(json.dumps(error).encode(), status=400)
    message = (await collect(stream(MODEL, CONTEXT, opts(server))))[-1]["message"]
    assert message["errorMessage"].startswith("HTTP 400 from https://gl.example.test/") and is_context_overflow(message)


async def test_error_object_in_stream_keeps_partial_text(server):
    server.reply(chunk({"text": "par"}) + sse(None, {"error": {"code": 503, "message": "overloaded",
                                                               "status": "UNAVAILABLE"}}))
    final = (await collect(stream(MODEL, CONTEXT, opts(server))))[-1]
    assert final["type"] == "error" and "UNAVAILABLE" in final["message"]["errorMessage"]
    assert final["message"]["content"] == [{"type": "text", "text": "par"}]


async def test_stream_cut_before_a_finish_reason_is_an_error(server):
    server.reply(chunk({"text": "half"}))
    final = (await collect(stream(MODEL, CONTEXT, opts(server))))[-1]
    assert final["type"] == "error" and "finishReason" in final["message"]["errorMessage"]


async def test_malformed_chunk_is_an_error(server):
    server.reply(b"data: {not json\n\n")
    final = (await collect(stream(MODEL, CONTEXT, opts(server))))[-1]
    assert final["type"] == "error" and "Malformed JSON" in final["message"]["errorMessage"]


async def test_cancellation_closes_the_response_and_keeps_the_text(server):
    scripted = server.reply([chunk({"text": "one "}), chunk({"text": "two"}), chunk({}, finish="STOP")],
                            hang_after=2)
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
    assert seen[0]["message"]["content"] == [{"type": "text", "text": "one two"}]


# ---- request body ----

IMAGE = {"type": "image", "data": "aGk=", "mimeType": "image/png"}
TOOLS = [{"name": "read", "description": "Read a file",
          "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "additionalProperties": False}}]


async def test_request_url_headers_and_body(server):
    server.reply(chunk({"text": "ok"}, finish="STOP"))
    context = {**CONTEXT, "tools": TOOLS}
    await collect(stream(MODEL, context, opts(server, thinking_level="medium", temperature=0.5)))
    request = server.requests[0]
    assert str(request.url) == "https://gl.example.test/v1beta/models/gemini-test:streamGenerateContent?alt=sse"
    assert request.headers["x-goog-api-key"] == "g-key"
    assert server.body() == {
        "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "tools": [{"functionDeclarations": [{"name": "read", "description": "Read a file",
                                             "parametersJsonSchema": TOOLS[0]["parameters"]}]}],
        "generationConfig": {"maxOutputTokens": 65_536, "temperature": 0.5,
                             "thinkingConfig": {"thinkingBudget": 8192, "includeThoughts": True}},
    }


@pytest.mark.parametrize(("level", "mapping", "expected"), [
    ("off", None, None),
    ("high", None, {"thinkingBudget": 24576, "includeThoughts": True}),
    ("off", {"off": 0}, {"thinkingBudget": 0}),
    ("low", {"low": "low"}, {"thinkingLevel": "low", "includeThoughts": True}),
])
async def test_thinking_config(server, level, mapping, expected):
    server.reply(chunk({"text": "ok"}, finish="STOP"))
    model = {**MODEL, "thinkingLevelMap": mapping} if mapping else MODEL
    await collect(stream(model, CONTEXT, opts(server, thinking_level=level)))
    assert server.body()["generationConfig"].get("thinkingConfig") == expected


async def test_own_history_replays_signatures_and_merges_tool_results(server):
    server.reply(chunk({"text": "Plan.", "thought": True, "thoughtSignature": "T"},
                       {"functionCall": {"name": "read", "args": {"path": "a"}}, "thoughtSignature": "C"},
                       {"functionCall": {"name": "read", "args": {"path": "b"}}}, finish="STOP"))
    reply = (await collect(stream(MODEL, CONTEXT, opts(server))))[-1]["message"]
    calls = [b for b in reply["content"] if b["type"] == "toolCall"]
    results = [{"role": "toolResult", "toolCallId": call["id"], "toolName": "read", "isError": index == 1,
                "content": [{"type": "text", "text": f"r{index}"}] + ([IMAGE] if index == 0 else []),
                "timestamp": 3} for index, call in enumerate(calls)]
    steer = {"role": "user", "content": "also this", "timestamp": 4}
    server.reply(chunk({"text": "ok"}, finish="STOP"))
    await collect(stream(MODEL, {**CONTEXT, "messages": [*CONTEXT["messages"], reply, *results, steer]},
                         opts(server)))
    contents = server.body()["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    assert contents[1]["parts"] == [
        {"text": "Plan.", "thought": True, "thoughtSignature": "T"},
        {"functionCall": {"name": "read", "args": {"path": "a"}}, "thoughtSignature": "C"},
        {"functionCall": {"name": "read", "args": {"path": "b"}}},
    ]
    assert contents[2]["parts"] == [
        {"functionResponse": {"name": "read", "response": {"output": "r0"}}},
        {"inlineData": {"mimeType": "image/png", "data": "aGk="}},
        {"functionResponse": {"name": "read", "response": {"error": "r1"}}},
        {"text": "also this"},
    ]


async def test_foreign_history_drops_signatures_and_turns_thinking_into_text(server):
    foreign = {"role": "assistant", "api": "openai-responses", "provider": "openai", "model": "gpt-5",
               "stopReason": "toolUse", "timestamp": 2, "content": [
                   {"type": "thinking", "thinking": "Reasoned.", "thinkingSignature": '{"type":"reasoning"}'},
                   {"type": "text", "text": "Calling.", "textSignature": "msg_1"},
                   {"type": "toolCall", "id": "call_1|fc_1", "name": "read", "arguments": {"path": "a"}}]}
    result = {"role": "toolResult", "toolCallId": "call_1|fc_1", "toolName": "read",
              "content": [{"type": "text", "text": "A"}], "isError": False, "timestamp": 3}
    context = {**CONTEXT, "messages": [*CONTEXT["messages"], foreign, result]}
    server.reply(chunk({"text": "ok"}, finish="STOP"))
    await collect(stream(MODEL, context, opts(server)))
    assert server.body()["contents"][1:] == [
        {"role": "model", "parts": [{"text": "Reasoned."}, {"text": "Calling."},
                                    {"functionCall": {"name": "read", "args": {"path": "a"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "read", "response": {"output": "A"}}}]},
    ]
    server.reply(chunk({"text": "ok"}, finish="STOP"))
    await collect(stream({**MODEL, "id": "gemini-3-pro-preview"}, context, opts(server)))
    call_part = server.body()["contents"][1]["parts"][2]
    assert call_part["thoughtSignature"] == FOREIGN_CALL_SIGNATURE


async def test_images_become_notes_for_a_text_only_model(server):
    server.reply(chunk({"text": "ok"}, finish="STOP"))
    user = {"role": "user", "content": [{"type": "text", "text": "Look"}, IMAGE, IMAGE], "timestamp": 1}
    await collect(stream({**MODEL, "input": ["text"]}, {"systemPrompt": "", "messages": [user]}, opts(server)))
    parts = server.body()["contents"][0]["parts"]
    assert parts == [{"text": "Look"}, {"text": "(image omitted: this model does not accept images)"}]


async def test_empty_parts_open_no_block_and_late_signatures_attach(server):
    body = (chunk({"text": "Mull.", "thought": True}) + chunk({"text": "", "thoughtSignature": "LATE"})
            + chunk({"text": ""}) + chunk({"text": "Hi"}) + chunk({"text": ""}, finish="STOP"))
    server.reply(body)
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    assert events[-1]["message"]["content"] == [
        {"type": "thinking", "thinking": "Mull.", "thinkingSignature": "LATE"}, {"type": "text", "text": "Hi"}]
    assert types_of(events).count("text_start") == 1


def test_sampling_params_map_to_generation_config_and_unknown_keys_stay_out():
    from agent_forge.ai.providers.google_generative_ai import build_body

    model = {**MODEL, "samplingParams": {"temperature": 0.1, "top_p": 0.5, "topK": 3, "stop": "END",
                                         "presence_penalty": 0.2, "logit_bias": {"1": 2}}}
    config = build_body(model, {"systemPrompt": "", "messages": []}, StreamOptions())["generationConfig"]
    assert {k: v for k, v in config.items() if k not in ("maxOutputTokens", "thinkingConfig")} == {
        "temperature": 0.1, "topP": 0.5, "topK": 3, "stopSequences": ["END"], "presencePenalty": 0.2}


@pytest.mark.parametrize(("model_id", "nested"), [
    ("gemini-3-pro-preview", True), ("gemini-3.1-flash-lite", True), ("gemini-2.5-flash", False),
    ("gemini-test", False),
])
def test_tool_result_images_go_inside_the_function_response_from_gemini_3(model_id, nested):
    from agent_forge.ai.providers.google_generative_ai import build_body

    model = {**MODEL, "id": model_id}
    call = {"role": "assistant", "api": model["api"], "provider": model["provider"], "model": model_id,
            "stopReason": "toolUse", "timestamp": 2,
            "content": [{"type": "toolCall", "id": "c-1", "name": "read", "arguments": {"path": "p.png"}}]}
    result = {"role": "toolResult", "toolCallId": "c-1", "toolName": "read", "isError": False, "timestamp": 3,
              "content": [{"type": "text", "text": "Read image"}, IMAGE, IMAGE]}
    context = {"systemPrompt": "", "messages": [*CONTEXT["messages"], call, result]}
    parts = build_body(model, context, StreamOptions())["contents"][-1]["parts"]
    blob = {"inlineData": {"mimeType": "image/png", "data": "aGk="}}
    response = {"id": "c-1", "name": "read", "response": {"output": "Read image"}}
    if nested:
        assert parts == [{"functionResponse": {**response, "parts": [blob, blob]}}]
    else:
        assert parts == [{"functionResponse": response}, blob, blob]
