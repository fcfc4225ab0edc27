"""The openai-responses provider against Responses API event streams (written from the API reference's
streaming events) on a MockTransport."""

from __future__ import annotations

import asyncio
import json

import pytest

from agent_forge.ai.options import StreamOptions
from agent_forge.ai.overflow import is_context_overflow
from agent_forge.ai.providers.openai_responses import stream
from ai_stream_helpers import FakeServer, collect, sse, types_of

MODEL = {
    "id": "gpt-test", "name": "GPT Test", "api": "openai-responses", "provider": "openai",
    "baseUrl": "https://api.example.test/v1/", "reasoning": True, "input": ["text", "image"],
    "contextWindow": 400_000, "maxTokens": 128_000,
    "cost": {"input": 1.25, "output": 10.0, "cacheRead": 0.125, "cacheWrite": 0.0},
}
CONTEXT = {"systemPrompt": "Be brief.", "messages": [{"role": "user", "content": "Hi", "timestamp": 1}]}
TOOLS = [{"name": "read", "description": "Read a file", "parameters": {"type": "object", "properties": {}}}]


def opts(server: FakeServer, **kw) -> StreamOptions:
    return StreamOptions(api_key="sk-test", transport=server.transport, **kw)


class Events:
    """Builds one response's SSE body with increasing `sequence_number`s."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def add(self, kind: str, **fields) -> Events:
        self.frames.append(sse(kind, {"type": kind, "sequence_number": len(self.frames), **fields}))
        return self

    def created(self, response_id: str = "resp_1") -> Events:
        return self.add("response.created", response={"id": response_id, "status": "in_progress"})

    def reasoning(self, index: int, summaries: list[list[str]], item_id: str = "rs_1", enc: str = "ENC") -> Events:
        self.add("response.output_item.added", output_index=index,
                 item={"id": item_id, "type": "reasoning", "summary": []})
        for part, pieces in enumerate(summaries):
            self.add("response.reasoning_summary_part.added", item_id=item_id, output_index=index,
                     summary_index=part, part={"type": "summary_text", "text": ""})
            for piece in pieces:
                self.add("response.reasoning_summary_text.delta", item_id=item_id, output_index=index,
                         summary_index=part, delta=piece)
        summary = [{"type": "summary_text", "text": "".join(p)} for p in summaries]
        item = {"id": item_id, "type": "reasoning", "summary": summary, "encrypted_content": enc}
        return self.add("response.output_item.done", output_index=index, item=item)

    def message(self, index: int, pieces: list[str], item_id: str = "msg_1") -> Events:
        self.add("response.output_item.added", output_index=index,
                 item={"id": item_id, "type": "message", "role": "assistant", "status": "in_progress", "content": []})
        self.add("response.content_part.added", item_id=item_id, output_index=index, content_index=0,
                 part={"type": "output_text", "text": "", "annotations": []})
        for piece in pieces:
            self.add("response.output_text.delta", item_id=item_id, output_index=index, content_index=0, delta=piece)
        text = "".join(pieces)
        self.add("response.output_text.done", item_id=item_id, output_index=index, content_index=0, text=text)
        item = {"id": item_id, "type": "message", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}
        return self.add("response.output_item.done", output_index=index, item=item)

    def call(self, index: int, name: str, pieces: list[str], call_id: str = "call_1", item_id: str = "fc_1") -> Events:
        head = {"id": item_id, "type": "function_call", "call_id": call_id, "name": name, "arguments": "",
                "status": "in_progress"}
        self.add("response.output_item.added", output_index=index, item=head)
        for piece in pieces:
            self.add("response.function_call_arguments.delta", item_id=item_id, output_index=index, delta=piece)
        arguments = "".join(pieces)
        self.add("response.function_call_arguments.done", item_id=item_id, output_index=index, arguments=arguments)
        return self.add("response.output_item.done", output_index=index,
                        item={**head, "arguments": arguments, "status": "completed"})

    def completed(self, usage: dict | None = None, status: str = "completed") -> Events:
        usage = usage or {"input_tokens": 100, "output_tokens": 20, "total_tokens": 120}
        return self.add("response.completed", response={"id": "resp_1", "status": status, "usage": usage})

    def body(self) -> bytes:
        return b"".join(self.frames)


async def test_text_stream(server):
    server.reply(Events().created().message(0, ["Hel", "lo"]).completed().body(), chunk=11)
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    assert types_of(events) == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    message = events[-1]["message"]
    assert message is events[0]["message"]
    assert message["content"] == [{"type": "text", "text": "Hello", "textSignature": "msg_1"}]
    assert (message["stopReason"], message["rawStopReason"], message["responseId"]) == ("stop", "completed", "resp_1")


async def test_reasoning_summary_parts_and_encrypted_item(server):
    body = Events().created().reasoning(0, [["Plan ", "A."], ["Then B."]]).message(1, ["Done."]).completed()
    server.reply(body.body())
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    assert types_of(events)[:7] == ["start", "thinking_start", "thinking_delta", "thinking_delta",
                                    "thinking_delta", "thinking_delta", "thinking_end"]
    thinking = events[-1]["message"]["content"][0]
    assert thinking["thinking"] == "Plan A.\n\nThen B."
    item = json.loads(thinking["thinkingSignature"])
    assert item["type"] == "reasoning" and item["encrypted_content"] == "ENC" and item["id"] == "rs_1"


async def test_function_calls_with_chunked_arguments(server):
    body = (Events().created().message(0, ["Reading."])
            .call(1, "read", ['{"pa', 'th": ', '"a.txt"}'])
            .call(2, "bash", ['{"command": "ls"}'], call_id="call_2", item_id="fc_2").completed())
    server.reply(body.body(), chunk=17)
    events = await collect(stream(MODEL, CONTEXT, opts(server)))
    kinds = types_of(events)
    assert kinds[4:] == ["toolcall_start", "toolcall_delta", "toolcall_delta", "toolcall_delta", "toolcall_end",
                         "toolcall_start", "toolcall_delta", "toolcall_end", "done"]
    assert events[4] == {"type": "toolcall_start", "contentIndex": 1, "id": "call_1|fc_1", "toolName": "read"}
    message = events[-1]["message"]
    assert message["content"][1:] == [
        {"type": "toolCall", "id": "call_1|fc_1", "name": "read", "arguments": {"path": "a.txt"}},
        {"type": "toolCall", "id": "call_2|fc_2", "name": "bash", "arguments": {"command": "ls"}},
    ]
    assert message["stopReason"] == "toolUse"


async def test_arguments_only_in_the_done_item_are_used(server):
    events = Events().created()
    head = {"id": "fc_9", "type": "function_call", "call_id": "call_9", "name": "read", "arguments": ""}
    events.add("response.output_item.added", output_index=0, item=head)
    events.add("response.output_item.done", output_index=0, item={**head, "arguments": '{"path": "b"}'})
    server.reply(events.completed().body())
    result = await collect(stream(MODEL, CONTEXT, opts(server)))
    assert result[-1]["message"]["content"][0]["arguments"] == {"path": "b"}


async def test_usage_with_cached_and_reasoning_tokens_and_cost(server):
    usage = {"input_tokens": 1000, "input_tokens_details": {"cached_tokens": 800}, "output_tokens": 300,
             "output_tokens_details": {"reasoning_tokens": 200}, "total_tokens": 1300}
    server.reply(Events().created().message(0, ["ok"]).completed(usage).body())
    message = (await collect(stream(MODEL, CONTEXT, opts(server))))[-1]["message"]
    got = message["usage"]
    assert (got["input"], got["cacheRead"], got["output"], got["reasoning"], got["totalTokens"]) == (
        200, 800, 300, 200, 1300)
    assert got["cost"]["input"] == pytest.approx(200 * 1.25e-6)
    assert got["cost"]["cacheRead"] == pytest.approx(800 * 0.125e-6)
    assert got["cost"]["total"] == pytest.approx(200 * 1.25e-6 + 800 * 0.125e-6 + 300 * 10e-6)


async def test_incomplete_for_max_output_tokens_is_length(server):
    events = Events().created().message(0, ["cut"])
    events.add("response.incomplete", response={"id": "resp_1", "status": "incomplete",
                                                "incomplete_details": {"reason": "max_output_tokens"}})
    server.reply(events.body())
    message = (await collect(stream(MODEL, CONTEXT, opts(server))))[-1]["message"]
    assert (message["stopReason"], message["rawStopReason"]) == ("length", "max_output_tokens")


async def test_incomplete_for_content_filter_is_an_error(server):
    events = Events().created()
    events.add("response.incomplete", response={"status": "incomplete",
                                                "incomplete_details": {"reason": "content_filter"}})
    server.reply(events.body())
    final = (await collect(stream(MODEL, CONTEXT, opts(server))))[-1]
    assert final["type"] == "error" and "content_filter" in final["message"]["errorMessage"]


async def test_failed_response_keeps_partial_text_and_reports_overflow(server):
    events = Events().created().message(0, ["partial"])
    error = {"code": "context_length_exceeded", "message": "Your input exceeds the context window of this model."}
    events.add("response.failed", response={"id": "resp_1", "status": "failed", "error": error})
    server.reply(events.body())
    final = (await collect(stream(MODEL, CONTEXT, opts(server))))[-1]
    message = final["message"]
    assert final["type"] == "error" and message["stopReason"] == "error"
    assert message["errorMessage"] == "Your input exceeds the context window of this model. (context_length_exceeded)"
    assert message["content"] == [{"type": "text", "text": "partial", "textSignature": "msg_1"}]
    assert is_context_overflow(message)


async def test_error_event(server):
    events = Events().created()
    events.add("error", code="server_error", message="The server had an error", param=None)
    server.reply(events.body())
    final = (await collect(stream(MODEL, CONTEXT, opts(server))))[-1]
    assert final["type"] == "error"
    assert final["message"]["errorMessage"] == "The server had an error (server_error)"  # as an HTTP error body's


async def test_http_error_carries_status_and_body(server):
    body = {"error": {"message": "Invalid 'input[2].call_id'", "type": "invalid_request_error", "code": None}}
    server.reply(json.dumps(body).encode(), status=400)
    final = (await collect(stream(MODEL, CONTEXT, opts(server))))[-1]
    error = final["message"]["errorMessage"]
    assert error.startswith("HTTP 400 from ") and "call_id" in error


async def test_stream_cut_before_completion_is_an_error(server):
    server.reply(Events().created().message(0, ["half"]).body())
    final = (await collect(stream(MODEL, CONTEXT, opts(server))))[-1]
    assert final["type"] == "error" and "response.completed" in final["message"]["errorMessage"]
    assert final["message"]["content"][0]["text"] == "half"


async def test_unknown_events_are_ignored(server):
    events = Events().created()
    events.add("response.web_search_call.in_progress", output_index=0, item_id="ws_1")
    events.add("response.output_item.added", output_index=0, item={"id": "ws_1", "type": "web_search_call"})
    events.add("response.output_item.done", output_index=0, item={"id": "ws_1", "type": "web_search_call"})
    server.reply(events.message(1, ["ok"]).completed().body())
    message = (await collect(stream(MODEL, CONTEXT, opts(server))))[-1]["message"]
    assert message["content"] == [{"type": "text", "text": "ok", "textSignature": "msg_1"}]


async def test_cancellation_closes_the_response_and_keeps_partial_arguments(server):
    frames = Events().created().call(0, "write", ['{"path": "a.txt", ', '"content": "hel', 'lo"}']).frames
    scripted = server.reply(frames, hang_after=4)  # created, item added, two argument deltas
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
    assert types_of(seen) == ["start", "toolcall_start", "toolcall_delta", "toolcall_delta"]
    assert seen[0]["message"]["content"][0]["arguments"] == {"path": "a.txt", "content": "hel"}


# ---- request body ----

IMAGE = {"type": "image", "data": "aGk=", "mimeType": "image/png"}


async def test_request_url_headers_and_body(server):
    server.reply(Events().created().message(0, ["ok"]).completed().body())
    context = {**CONTEXT, "tools": TOOLS}
    await collect(stream(MODEL, context, opts(server, thinking_level="high", session_id="sess-42",
                                              headers={"x-extra": "1"})))
    request = server.requests[0]
    assert str(request.url) == "https://api.example.test/v1/responses"
    assert request.headers["authorization"] == "Bearer sk-test" and request.headers["x-extra"] == "1"
    body = server.body()
    assert body == {
        "model": "gpt-test", "stream": True, "store": False, "instructions": "Be brief.",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "Hi"}]}],
        "max_output_tokens": 128_000,
        "tools": [{"type": "function", "name": "read", "description": "Read a file",
                   "parameters": {"type": "object", "properties": {}}, "strict": False}],
        "reasoning": {"effort": "high", "summary": "auto"}, "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "sess-42",
    }


@pytest.mark.parametrize(("level", "mapping", "expected"), [
    ("off", None, None),
    ("minimal", None, {"effort": "minimal", "summary": "auto"}),
    ("xhigh", None, {"effort": "xhigh", "summary": "auto"}),
    ("off", {"off": "none"}, {"effort": "none", "summary": "auto"}),
    ("minimal", {"minimal": "low"}, {"effort": "low", "summary": "auto"}),
])
async def test_reasoning_effort_mapping(server, level, mapping, expected):
    server.reply(Events().created().completed().body())
    model = {**MODEL, "thinkingLevelMap": mapping} if mapping else MODEL
    await collect(stream(model, CONTEXT, opts(server, thinking_level=level)))
    assert server.body().get("reasoning") == expected


async def test_plain_model_and_compat_flags(server):
    server.reply(Events().created().completed().body())
    model = {**MODEL, "reasoning": False,
             "compat": {"supportsStore": False, "promptCacheKeyMode": "disabled", "supportsMaxOutputTokens": False}}
    await collect(stream(model, CONTEXT, opts(server, thinking_level="high", session_id="s", temperature=0.3)))
    body = server.body()
    for key in ("store", "include", "reasoning", "prompt_cache_key", "max_output_tokens"):
        assert key not in body
    assert body["temperature"] == 0.3


async def test_own_history_replays_reasoning_messages_and_call_items(server):
    first = (Events().created().reasoning(0, [["Think."]], enc="ENC-1")
             .message(1, ["Reading."]).call(2, "read", ['{"path": "a"}']).completed())
    server.reply(first.body())
    reply = (await collect(stream(MODEL, CONTEXT, opts(server))))[-1]["message"]
    result = {"role": "toolResult", "toolCallId": "call_1|fc_1", "toolName": "read",
              "content": [{"type": "text", "text": "file text"}, IMAGE], "isError": False, "timestamp": 3}
    context = {"systemPrompt": "", "messages": [*CONTEXT["messages"], reply, result]}
    server.reply(Events().created().message(0, ["ok"]).completed().body())
    await collect(stream(MODEL, context, opts(server)))
    items = server.body()["input"]
    assert items[1] == {"id": "rs_1", "type": "reasoning", "encrypted_content": "ENC-1",
                        "summary": [{"type": "summary_text", "text": "Think."}]}
    assert items[2] == {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
                        "content": [{"type": "output_text", "text": "Reading.", "annotations": []}]}
    assert items[3] == {"type": "function_call", "call_id": "call_1", "name": "read", "arguments": '{"path":"a"}',
                        "id": "fc_1"}
    assert items[4] == {"type": "function_call_output", "call_id": "call_1", "output": [
        {"type": "input_text", "text": "file text"},
        {"type": "input_image", "image_url": "data:image/png;base64,aGk=", "detail": "auto"}]}


async def test_foreign_history_becomes_plain_items(server):
    foreign = {"role": "assistant", "api": "anthropic-messages", "provider": "anthropic", "model": "claude",
               "stopReason": "toolUse", "timestamp": 2, "content": [
                   {"type": "thinking", "thinking": "Let me look.", "thinkingSignature": "sig-anthropic"},
                   {"type": "text", "text": "Looking."},
                   {"type": "toolCall", "id": "toolu_01.weird/id", "name": "read", "arguments": {"path": "a"}}]}
    result = {"role": "toolResult", "toolCallId": "toolu_01.weird/id", "toolName": "read",
              "content": [{"type": "text", "text": "A"}], "isError": False, "timestamp": 3}
    user = {"role": "user", "content": [{"type": "text", "text": "See"}, IMAGE], "timestamp": 4}
    context = {"systemPrompt": "", "messages": [*CONTEXT["messages"], foreign, result, user]}
    server.reply(Events().created().completed().body())
    await collect(stream(MODEL, context, opts(server)))
    items = server.body()["input"]
    assert items[1:5] == [
        {"role": "assistant", "content": "Let me look."},
        {"role": "assistant", "content": "Looking."},
        {"type": "function_call", "call_id": "toolu_01_weird_id", "name": "read", "arguments": '{"path":"a"}'},
        {"type": "function_call_output", "call_id": "toolu_01_weird_id", "output": "A"},
    ]
    assert items[5]["content"][1] == {"type": "input_image", "image_url": "data:image/png;base64,aGk=",
                                      "detail": "auto"}
    assert all(item.get("type") != "reasoning" for item in items)


async def test_missing_key_is_an_error_event(server):
    events = await collect(stream(MODEL, CONTEXT, StreamOptions(transport=server.transport)))
    assert events[-1]["type"] == "error" and "openai" in events[-1]["message"]["errorMessage"]
    assert server.requests == []
