"""End to end (real CLI, loopback fake LLM): core reviewer findings in the providers' wire formats: Gemini
function-call ids sent back with their responses (also from a resumed session file), Gemini string arguments
that do not parse reported to the model, Responses `response.completed` statuses that are not `completed`."""

from __future__ import annotations

import json

from agent_forge.modes.rpc.client import RpcClient


def sse(data: object, event: str | None = None) -> str:
    return (f"event: {event}\n" if event else "") + f"data: {json.dumps(data)}\n\n"


def gemini_parts(body: dict, key: str) -> list[dict]:
    """Every `key` ("functionCall" / "functionResponse") object of a recorded Gemini request, in order."""
    return [part[key] for content in body["contents"] for part in content["parts"] if key in part]


# ---- Gemini: a server's function-call id goes back in the call and in its functionResponse ------------------


async def test_gemini_call_ids_from_the_server_are_sent_back_also_after_resuming(agent_env_factory, fake_llm,
                                                                                  tmp_path):
    env = agent_env_factory(api="google-generative-ai", model_id="gemini-3-fake")
    calls = [{"id": "srv-call-1", "name": "bash", "arguments": {"command": "echo one"}},
             {"name": "bash", "arguments": {"command": "echo two"}}]  # no id: a local one, never sent
    fake_llm.set_script([{"tool_calls": calls}, {"text": "done"}, {"text": "again"}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=env) as client:
        await client.prompt_and_wait("run both")
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    local_id = messages[1]["content"][1]["id"]
    assert local_id.startswith("call_")
    async with await RpcClient.start(["--continue"], cwd=str(tmp_path), env=env) as client:
        await client.prompt_and_wait("once more")
    for request in fake_llm.requests[1:]:  # the live session's second request, then the resumed one
        body = request["body"]
        assert [c.get("id") for c in gemini_parts(body, "functionCall")] == ["srv-call-1", None]
        responses = gemini_parts(body, "functionResponse")
        assert [(r.get("id"), r["response"]) for r in responses] == [("srv-call-1", {"output": "one\n"}),
                                                                     (None, {"output": "two\n"})]
        assert local_id not in json.dumps(body)
    assert [r["outcome"] for r in fake_llm.requests] == ["ok", "ok", "ok"]


# ---- Responses: `response.completed` goes by its `response.status` ------------------------------------------


def responses_ending(kind: str, response: dict) -> list[str]:
    """A Responses stream with the text "Half" that ends with a `kind` terminal event carrying `response`."""
    item = {"id": "msg_1", "type": "message", "role": "assistant", "content": []}
    done = {**item, "content": [{"type": "output_text", "text": "Half", "annotations": []}]}
    return [sse({"type": "response.created", "response": {"id": "r1", "output": []}}, "response.created"),
            sse({"type": "response.output_item.added", "output_index": 0, "item": item}, "response.output_item.added"),
            sse({"type": "response.output_text.delta", "output_index": 0, "delta": "Half"},
                "response.output_text.delta"),
            sse({"type": "response.output_item.done", "output_index": 0, "item": done}, "response.output_item.done"),
            sse({"type": kind, "response": {"id": "r1", **response}}, kind)]


SERVER_ERROR = {"code": "server_error", "message": "The server had an error processing your request."}
COMPLETED_CASES = [  # (terminal event, its response, (stopReason, rawStopReason, errorMessage contains))
    ("response.completed", {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}},
     ("length", "max_output_tokens", None)),
    ("response.completed", {"status": "incomplete", "incomplete_details": {"reason": "content_filter"}},
     ("error", "content_filter", "The response was blocked (incomplete: content_filter)")),
    ("response.completed", {"status": "incomplete"}, ("length", "unknown", None)),
    ("response.completed", {"status": "failed", "error": SERVER_ERROR}, ("error", None, "server had an error")),
    ("response.completed", {"status": "cancelled"}, ("error", None, "response cancelled")),
    ("response.completed", {"status": "completed"}, ("stop", "completed", None)),
    ("response.incomplete", {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}},
     ("length", "max_output_tokens", None)),
    ("response.failed", {"status": "failed", "error": SERVER_ERROR}, ("error", None, "server had an error")),
]


async def test_responses_completed_event_with_another_status_ends_as_that_status(agent_env_factory, fake_llm,
                                                                                  tmp_path):
    env = agent_env_factory(api="openai-responses", settings={"retry": {"enabled": False}})
    fake_llm.set_script([{"frames": responses_ending(kind, response)} for kind, response, _ in COMPLETED_CASES])
    outcomes = []
    async with await RpcClient.start([], cwd=str(tmp_path), env=env) as client:
        for number in range(len(COMPLETED_CASES)):
            events = await client.prompt_and_wait(f"case {number}")
            [message] = [e["message"] for e in events
                         if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
            outcomes.append((message["stopReason"], message.get("rawStopReason"), message.get("errorMessage")))
    words = [expected[2] for _, _, expected in COMPLETED_CASES]
    seen = [(stop, raw, word if word and word in (error or "") else error)
            for (stop, raw, error), word in zip(outcomes, words)]
    assert seen == [expected for _, _, expected in COMPLETED_CASES]


# ---- Gemini: string `args` that do not parse become the call's argumentsError, reported to the model --------


async def test_gemini_string_args_that_do_not_parse_are_reported_to_the_model(agent_env_factory, fake_llm,
                                                                              tmp_path):
    env = agent_env_factory(api="google-generative-ai", model_id="gemini-3-fake")
    (tmp_path / "notes.txt").write_text("plum\n")
    parts = [{"functionCall": {"id": "bad-1", "name": "read", "args": '{"path": "notes.txt"'}},
             {"functionCall": {"id": "good-1", "name": "read", "args": '{"path": "notes.txt"}'}}]
    frames = [sse({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}]})]
    fake_llm.set_script([{"frames": frames}, {"text": "done"}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=env) as client:
        events = await client.prompt_and_wait("read it")
    [first] = [e["message"] for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"][:1]
    assert first["stopReason"] == "toolUse"
    bad, good = first["content"]
    assert (bad["arguments"], good["arguments"]) == ({}, {"path": "notes.txt"})
    assert "Received arguments:\n{\"path\": \"notes.txt\"" in bad["argumentsError"]
    responses = gemini_parts(fake_llm.requests[1]["body"], "functionResponse")
    assert [r["id"] for r in responses] == ["bad-1", "good-1"]
    assert "Received arguments:" in responses[0]["response"]["error"]
    assert responses[1]["response"] == {"output": "plum\n"}
