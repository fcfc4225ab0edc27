"""End to end: a stream field of the wrong JSON type (a local server's `"name": 7`) fails the request with one
clear line naming the field, for all four APIs, and tool arguments sent as a JSON object (as some local servers
do) are taken as the arguments (round 5)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def run(env, cwd, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_forge", "--no-session", *args], cwd=cwd, env=env,
                          input=b"", capture_output=True, timeout=60)


def sse(data: object, event: str | None = None) -> str:
    return (f"event: {event}\n" if event else "") + f"data: {json.dumps(data)}\n\n"


def oai_call(**call) -> list[str]:
    return [sse({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}),
            sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}), "data: [DONE]\n\n"]


def anthropic_block(block: dict) -> list[str]:
    start = {"type": "message_start", "message": {"id": "m1", "role": "assistant", "content": [],
                                                  "usage": {"input_tokens": 1, "output_tokens": 1}}}
    return [sse(start, "message_start"),
            sse({"type": "content_block_start", "index": 0, "content_block": block}, "content_block_start"),
            sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
            sse({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}, "message_delta"),
            sse({"type": "message_stop"}, "message_stop")]


def responses_item(item: dict) -> list[str]:
    return [sse({"type": "response.created", "response": {"id": "r1", "output": []}}, "response.created"),
            sse({"type": "response.output_item.added", "output_index": 0, "item": item},
                "response.output_item.added"),
            sse({"type": "response.completed", "response": {"id": "r1", "status": "completed"}},
                "response.completed")]


def gemini_part(part: dict) -> list[str]:
    return [sse({"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP"}]})]


CASES = [
    ("openai-completions", oai_call(index=0, id="c1", function={"name": 7, "arguments": "{}"}),
     "choices[0].delta.tool_calls[0].function.name = 7 (a number); expected a string"),
    ("openai-completions", oai_call(index=0, id=5, function={"name": "read", "arguments": "{}"}),
     "choices[0].delta.tool_calls[0].id = 5 (a number); expected a string"),
    ("openai-completions", oai_call(index="a", id="c1", function={"name": "read"}),
     'choices[0].delta.tool_calls[0].index = "a" (a string); expected a whole number'),
    ("openai-completions", [sse({"choices": [{"delta": {"content": ["x"]}}]})],
     'choices[0].delta.content = ["x"] (an array); expected a string'),
    ("openai-completions", [sse({"choices": "x"})], 'choices = "x" (a string); expected an array'),
    ("anthropic-messages", anthropic_block({"type": "tool_use", "id": "t1", "name": 7, "input": {}}),
     "content_block_start.content_block.name = 7 (a number); expected a string"),
    ("anthropic-messages", anthropic_block({"type": "tool_use", "id": 9, "name": "read", "input": {}}),
     "content_block_start.content_block.id = 9 (a number); expected a string"),
    ("anthropic-messages", anthropic_block({"type": "tool_use", "id": "t1", "name": "read", "input": [1]}),
     "content_block_start.content_block.input = [1] (an array); expected an object"),
    ("openai-responses", responses_item({"type": "function_call", "id": "f1", "call_id": "c1", "name": 7}),
     "response.output_item.added.item.name = 7 (a number); expected a string"),
    ("openai-responses", responses_item({"type": "function_call", "id": "f1", "call_id": True, "name": "read"}),
     "response.output_item.added.item.call_id = true (a boolean); expected a string"),
    ("google-generative-ai", gemini_part({"functionCall": {"name": 7, "args": {}}}),
     "candidates[0].content.parts[0].functionCall.name = 7 (a number); expected a string"),
    ("google-generative-ai", gemini_part({"functionCall": {"name": "read", "args": [1]}}),
     "candidates[0].content.parts[0].functionCall.args = [1] (an array); expected a string of JSON or an object"),
    ("google-generative-ai", gemini_part({"text": 5}),
     "candidates[0].content.parts[0].text = 5 (a number); expected a string"),
]


@pytest.mark.parametrize(("api", "frames", "expected"), CASES, ids=[f"{c[0]}-{n}" for n, c in enumerate(CASES)])
def test_a_field_of_the_wrong_type_is_named(agent_env_factory, fake_llm, tmp_path, api, frames, expected):
    env = agent_env_factory(api=api)
    fake_llm.set_script([{"frames": frames}])
    result = run(env, tmp_path, "-p", "hi")
    assert result.returncode == 1 and result.stdout == b""
    assert result.stderr == f"agent-forge: The stream sent {expected}\n".encode(), result.stderr
    assert len(fake_llm.requests) == 1  # the same server would send the same shape: not retried


@pytest.mark.parametrize("api", ["openai-completions", "openai-responses"])
def test_tool_arguments_sent_as_an_object_are_the_arguments(agent_env_factory, fake_llm, tmp_path, api):
    env = agent_env_factory(api=api)
    (tmp_path / "notes.txt").write_text("the secret word is plum\n")
    if api == "openai-completions":
        frames = oai_call(index=0, id="c1", function={"name": "read", "arguments": {"path": "notes.txt"}})
    else:
        item = {"type": "function_call", "id": "f1", "call_id": "c1", "name": "read"}
        done = {**item, "arguments": {"path": "notes.txt"}}
        frames = responses_item(item)
        frames.insert(2, sse({"type": "response.output_item.done", "output_index": 0, "item": done},
                             "response.output_item.done"))
    fake_llm.set_script([{"frames": frames}, {"text": "done"}])
    result = run(env, tmp_path, "-p", "read notes.txt")
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"done\n"
    assert "the secret word is plum" in json.dumps(fake_llm.requests[1]["body"])
