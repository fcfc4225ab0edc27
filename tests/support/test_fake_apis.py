"""The fake server's Responses and Gemini routes over real loopback HTTP, spoken to by our own provider modules,
and their request checks (what the real APIs reject is answered with their 400)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

from agent_forge.ai.options import StreamOptions
from agent_forge.ai.registry import get_stream_function
from support import fake_gemini, fake_responses
from support.fake_llm import FakeLLMServer

FAKE_LLM_SCRIPT = Path(__file__).with_name("fake_llm.py")
TOOLS = [{"name": "read", "description": "Read a file",
          "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}]
CONTEXT = {"systemPrompt": "sys", "messages": [{"role": "user", "content": "hi", "timestamp": 1}], "tools": TOOLS}
SPEC = {"thinking": "Think it over.", "text": "Reading now.", "args_chunk_chars": 5,
        "tool_calls": [{"name": "read", "arguments": {"path": "a.txt"}}],
        "usage": {"input": 50, "output": 30, "cache_read": 200, "reasoning": 10}}


def model(server: FakeLLMServer, api: str) -> dict:
    base = server.base_url_gemini if api == "google-generative-ai" else server.base_url_openai
    return {"id": "fake-model", "name": "Fake", "api": api, "provider": "fake", "baseUrl": base, "reasoning": True,
            "input": ["text", "image"], "contextWindow": 100_000, "maxTokens": 4096,
            "cost": {"input": 1, "output": 2, "cacheRead": 0.1, "cacheWrite": 0}}


async def run(server: FakeLLMServer, api: str, context: dict = CONTEXT) -> dict:
    options = StreamOptions(api_key="k", thinking_level="medium", session_id="sess-1")
    events = [event async for event in get_stream_function(api)(model(server, api), context, options)]
    return events[-1]["message"]


@pytest.mark.parametrize("api", ["openai-responses", "google-generative-ai"])
async def test_our_provider_round_trips_through_the_fake_route(fake_llm, api):
    fake_llm.set_script([SPEC, {"text": "The file says hi."}])
    first = await run(fake_llm, api)
    assert [b["type"] for b in first["content"]] == ["thinking", "text", "toolCall"]
    assert first["content"][0]["thinking"] == "Think it over." and first["content"][0]["thinkingSignature"]
    assert first["content"][2]["arguments"] == {"path": "a.txt"} and first["stopReason"] == "toolUse"
    usage = first["usage"]
    assert (usage["input"], usage["cacheRead"], usage["output"], usage["reasoning"]) == (50, 200, 30, 10)
    call = first["content"][2]
    result = {"role": "toolResult", "toolCallId": call["id"], "toolName": "read",
              "content": [{"type": "text", "text": "hi"}], "isError": False, "timestamp": 3}
    second = await run(fake_llm, api, {**CONTEXT, "messages": [*CONTEXT["messages"], first, result]})
    assert [(b["type"], b["text"]) for b in second["content"]] == [("text", "The file says hi.")]
    assert [r["outcome"] for r in fake_llm.wait_for_requests(2, done=True)] == ["ok", "ok"]
    assert [r["api"] for r in fake_llm.requests] == [{"openai-responses": "responses"}.get(api, "gemini")] * 2


async def test_responses_request_details(fake_llm):
    fake_llm.set_script([SPEC, {"text": "ok"}])
    first = await run(fake_llm, "openai-responses")
    result = {"role": "toolResult", "toolCallId": first["content"][2]["id"], "toolName": "read",
              "content": [{"type": "text", "text": "hi"}], "isError": False, "timestamp": 3}
    await run(fake_llm, "openai-responses", {**CONTEXT, "messages": [*CONTEXT["messages"], first, result]})
    request = fake_llm.requests[1]
    assert request["path"] == "/v1/responses" and request["body"]["prompt_cache_key"] == "sess-1"
    kinds = [item.get("type", "message") for item in request["body"]["input"]]
    assert kinds == ["message", "reasoning", "message", "function_call", "function_call_output"]
    assert request["body"]["input"][1]["encrypted_content"] == "enc_fake_1"
    assert request["body"]["input"][3]["id"] == "fc_fake_1_0"


async def test_gemini_request_details(fake_llm):
    fake_llm.set_script([SPEC, {"text": "ok"}])
    first = await run(fake_llm, "google-generative-ai")
    result = {"role": "toolResult", "toolCallId": first["content"][2]["id"], "toolName": "read",
              "content": [{"type": "text", "text": "hi"}], "isError": False, "timestamp": 3}
    await run(fake_llm, "google-generative-ai", {**CONTEXT, "messages": [*CONTEXT["messages"], first, result]})
    request = fake_llm.requests[1]
    assert request["path"] == "/v1beta/models/fake-model:streamGenerateContent?alt=sse"
    assert request["headers"]["x-goog-api-key"] == "k"
    model_turn = request["body"]["contents"][1]["parts"]
    assert model_turn[0]["thoughtSignature"] == "sig_fake_1" and model_turn[2]["thoughtSignature"] == "sig_call_fake_1"


@pytest.mark.parametrize(("api", "script", "stop"), [
    ("openai-responses", {"text": "cut", "stop_reason": "length"}, "length"),
    ("google-generative-ai", {"text": "cut", "stop_reason": "length"}, "length"),
    ("google-generative-ai", {"tool_calls": [{"name": "read", "arguments": "{broken"}]}, "error"),
    ("openai-responses", {"text": "x", "error_event": {"code": "context_length_exceeded", "message": "too big"}},
     "error"),
    ("google-generative-ai", {"text": "x", "drop_after": 1}, "error"),
])
async def test_stop_reasons_and_failures(fake_llm, api, script, stop):
    fake_llm.set_script([script])
    message = await run(fake_llm, api)
    assert message["stopReason"] == stop


RESPONSES_BAD = [
    ({"model": "m", "input": [], "stream": False}, "streaming"),
    ({"model": "m", "stream": True, "input": [{"type": "function_call_output", "call_id": "c", "output": "x"}]},
     "No tool call found"),
    ({"model": "m", "stream": True, "input": [
        {"type": "function_call", "call_id": "c", "name": "read", "arguments": "{}"}]}, "No tool output found"),
    ({"model": "m", "stream": True, "input": [
        {"type": "function_call", "call_id": "c", "name": "read", "arguments": "{}", "id": "toolu_1"},
        {"type": "function_call_output", "call_id": "c", "output": "x"}]}, "begins with 'fc'"),
    ({"model": "m", "stream": True, "input": [{"type": "reasoning", "id": "rs_1", "summary": []}]},
     "encrypted_content"),
    ({"model": "m", "stream": True, "input": [{"role": "user", "content": [{"type": "output_text", "text": "x"}]}]},
     "not allowed"),
]


@pytest.mark.parametrize(("body", "words"), RESPONSES_BAD)
def test_responses_request_rules(body, words):
    assert words in fake_responses.request_problem(body)


GEMINI_BAD = [
    ({"contents": []}, "contents is not specified"),
    ({"contents": [{"role": "user", "parts": [{"text": "a"}]}, {"role": "user", "parts": [{"text": "b"}]}]},
     "alternate"),
    ({"contents": [{"role": "user", "parts": [{"text": "a"}]},
                   {"role": "model", "parts": [{"functionCall": {"name": "read", "args": {}}}]},
                   {"role": "user", "parts": [{"text": "no answer"}]}]}, "number of function response parts"),
    ({"contents": [{"role": "user", "parts": [{"text": "a", "inlineData": {"mimeType": "image/png", "data": "x"}}]}]},
     "exactly one"),
    ({"contents": [{"role": "model", "parts": [{"text": "a"}]}]}, "first content"),
    ({"contents": [{"role": "user", "parts": [{"functionCall": {"name": "read", "args": {}}}]}]}, "model turns"),
]


@pytest.mark.parametrize(("body", "words"), GEMINI_BAD)
def test_gemini_request_rules(body, words):
    assert words in fake_gemini.request_problem(body)


def test_an_invalid_request_is_answered_with_the_apis_400(fake_llm):
    fake_llm.set_script([{"text": "never sent"}])
    url = f"{fake_llm.base_url_gemini}/models/m:streamGenerateContent?alt=sse"
    response = httpx2.post(url, json={"contents": [{"role": "model", "parts": [{"text": "a"}]}]})
    assert response.status_code == 400
    assert response.json()["error"]["status"] == "INVALID_ARGUMENT"
    # the server records the outcome just after it sends the response: wait for it rather than race it
    fake_llm.wait_for(lambda: fake_llm.requests[0].get("outcome") == "bad_request", timeout=10)
    assert fake_llm.remaining == 1


def test_standalone_server_loads_the_extra_routes(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "from gemini"}, {"text": "from responses"}]))
    port_file = tmp_path / "port"
    command = [sys.executable, str(FAKE_LLM_SCRIPT), "--script", str(script), "--port-file", str(port_file)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        try:
            process.stdout.readline()  # printed once the port file is written
            base = f"http://127.0.0.1:{int(port_file.read_text())}"
            gemini = httpx2.post(f"{base}/v1beta/models/m:streamGenerateContent?alt=sse",
                                 json={"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
            responses = httpx2.post(f"{base}/v1/responses", json={"model": "m", "input": [], "stream": True})
        finally:
            process.terminate()
            assert process.wait(timeout=10) == 0
    assert gemini.status_code == 200 and '"text":"from"' in gemini.text.replace(" ", "")
    assert responses.status_code == 200 and "response.completed" in responses.text
