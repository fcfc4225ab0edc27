"""End to end (real CLI, loopback fake LLM): round-8 findings in the providers' wire formats: Chat Completions
tool-call pieces interleaved by `index`, stop reasons each API documents, and tool-call ids on the wire that
stay unique (and paired with their results) when a server repeats one."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agent_forge.modes.rpc.client import RpcClient


def sse(data: object, event: str | None = None) -> str:
    return (f"event: {event}\n" if event else "") + f"data: {json.dumps(data)}\n\n"


def chunk(delta: dict, finish: str | None = None) -> str:
    return sse({"id": "c1", "object": "chat.completion.chunk", "model": "fake-model",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


def piece(index: int, arguments: str, **head: str) -> str:
    """One `tool_calls` item: the first of a call carries `id` and `function.name`, later ones only `index`."""
    function = {"arguments": arguments, **({"name": head["name"]} if "name" in head else {})}
    call = {"index": index, **({"id": head["id"], "type": "function"} if "id" in head else {}), "function": function}
    return chunk({"tool_calls": [call]})


def first_answer_events(events: list[dict]) -> list[dict]:
    """The stream events of the run's first assistant message."""
    out = []
    for event in events:
        if event["type"] == "message_end" and event["message"]["role"] == "assistant":
            return out
        if event["type"] == "message_update":
            out.append(event["assistantMessageEvent"])
    return out


# ---- P1: Chat Completions tool-call pieces interleaved by index ------------------------------------------


async def test_interleaved_tool_call_pieces_make_one_call_per_index(agent_env, fake_llm, tmp_path):
    a, b = ['{"command": ', '"echo A"', '}'], ['{"command": ', '"echo B"', '}']
    frames = [chunk({"role": "assistant", "content": None}),
              piece(0, a[0], id="call_a", name="bash"), piece(1, b[0], id="call_b", name="bash"),
              piece(0, a[1]), piece(1, b[1]), piece(0, a[2]), piece(1, b[2]),
              chunk({}, "tool_calls"), "data: [DONE]\n\n"]
    fake_llm.set_script([{"frames": frames}, {"text": "done"}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        events = await client.prompt_and_wait("run both")
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    calls = [b for b in messages[1]["content"] if b["type"] == "toolCall"]
    assert [(c["id"], c["arguments"]) for c in calls] == [("call_a", {"command": "echo A"}),
                                                          ("call_b", {"command": "echo B"})]
    ends = {e["toolCallId"]: e["result"]["content"][0]["text"] for e in events if e["type"] == "tool_execution_end"}
    assert ends == {"call_a": "A\n", "call_b": "B\n"}
    first_answer = first_answer_events(events)
    for index in (0, 1):  # each call: start, its own deltas, end, in that order, the deltas adding up
        own = [e for e in first_answer if e.get("contentIndex") == index]
        assert [e["type"] for e in own] == ["toolcall_start", "toolcall_delta", "toolcall_delta",
                                            "toolcall_delta", "toolcall_end"]
        assert "".join(e["delta"] for e in own[1:4]) == "".join((a, b)[index])
    sent = fake_llm.requests[1]["body"]["messages"]
    assert [m["tool_call_id"] for m in sent if m["role"] == "tool"] == ["call_a", "call_b"]


# ---- P2: every documented stop reason maps to what it means ------------------------------------------------


def responses_incomplete(reason: str | None) -> list[str]:
    """A Responses stream with some text that ends `incomplete` for `reason` (None: no `incomplete_details`)."""
    item = {"id": "msg_1", "type": "message", "role": "assistant", "content": []}
    done = {**item, "content": [{"type": "output_text", "text": "Half", "annotations": []}]}
    final = {"id": "r1", "status": "incomplete", **({"incomplete_details": {"reason": reason}} if reason else {})}
    return [sse({"type": "response.created", "response": {"id": "r1", "output": []}}, "response.created"),
            sse({"type": "response.output_item.added", "output_index": 0, "item": item}, "response.output_item.added"),
            sse({"type": "response.output_text.delta", "output_index": 0, "delta": "Half"},
                "response.output_text.delta"),
            sse({"type": "response.output_item.done", "output_index": 0, "item": done}, "response.output_item.done"),
            sse({"type": "response.incomplete", "response": final}, "response.incomplete")]


GEMINI_FAILURES = {
    "SAFETY": "The response was blocked for safety", "RECITATION": "The response was blocked for recitation",
    "LANGUAGE": "The response was blocked: it used an unsupported language",
    "BLOCKLIST": "The response was blocked: it contained forbidden terms",
    "PROHIBITED_CONTENT": "The response was blocked for prohibited content",
    "SPII": "The response was blocked: it may contain sensitive personal information",
    "IMAGE_SAFETY": "The image generation was blocked for safety",
    "MALFORMED_FUNCTION_CALL": "The model produced a malformed function call",
    "UNEXPECTED_TOOL_CALL": "The model called a tool it was not offered",
    "TOO_MANY_TOOL_CALLS": "The model made too many tool calls in a row",
    "MALFORMED_RESPONSE": "The model produced a malformed response",
    "OTHER": "The response stopped for an unspecified reason",
    "SOMETHING_NEWER": "The response ended abnormally",
}
STOP_CASES = {  # api -> [(spec, stopReason, rawStopReason, errorMessage)]
    "anthropic-messages": [
        ({"stop_reason": "end_turn"}, "stop", "end_turn", None),
        ({"stop_reason": "stop_sequence"}, "stop", "stop_sequence", None),
        ({"stop_reason": "pause_turn"}, "stop", "pause_turn", None),
        ({"stop_reason": "max_tokens"}, "length", "max_tokens", None),
        ({"stop_reason": "model_context_window_exceeded"}, "length", "model_context_window_exceeded", None),
        ({"stop_reason": "refusal"}, "error", "refusal", "The model declined to answer (stop_reason: refusal)"),
    ],
    "openai-completions": [
        ({"stop_reason": "stop"}, "stop", "stop", None),
        ({"stop_reason": "length"}, "length", "length", None),
        ({"stop_reason": "model_length"}, "length", "model_length", None),
        ({"stop_reason": "content_filter"}, "error", "content_filter",
         "The response was blocked (finish_reason: content_filter)"),
        ({"stop_reason": "error"}, "error", "error", "The host ended the answer with an error (finish_reason: error)"),
        ({"stop_reason": "insufficient_system_resource"}, "error", "insufficient_system_resource",
         "The host ran out of resources mid-answer; try again later (finish_reason: insufficient_system_resource)"),
    ],
    "openai-responses": [
        ({}, "stop", "completed", None),
        ({"stop_reason": "length"}, "length", "max_output_tokens", None),
        ({"stop_reason": "content_filter"}, "error", "content_filter",
         "The response was blocked (incomplete: content_filter)"),
        ({"frames": responses_incomplete("max_messages")}, "length", "max_messages", None),
        ({"frames": responses_incomplete(None)}, "length", "unknown", None),
    ],
    "google-generative-ai": [
        ({"stop_reason": "STOP"}, "stop", "STOP", None),
        ({"stop_reason": "MAX_TOKENS"}, "length", "MAX_TOKENS", None),
        *(({"stop_reason": raw}, "error", raw, f"{text} (finishReason: {raw})")
          for raw, text in GEMINI_FAILURES.items()),
    ],
}


@pytest.mark.parametrize("api", list(STOP_CASES))
async def test_each_documented_stop_reason_means_what_the_api_says(agent_env_factory, fake_llm, tmp_path, api):
    env = agent_env_factory(api=api, settings={"retry": {"enabled": False}})
    cases = STOP_CASES[api]
    fake_llm.set_script([{"text": "Half", **spec} for spec, *_ in cases])
    outcomes = []
    async with await RpcClient.start([], cwd=str(tmp_path), env=env) as client:
        for number in range(len(cases)):
            events = await client.prompt_and_wait(f"case {number}")
            [message] = [e["message"] for e in events
                         if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
            outcomes.append((message["stopReason"], message.get("rawStopReason"), message.get("errorMessage")))
    assert outcomes == [tuple(expected) for _, *expected in cases]


async def test_print_mode_says_an_answer_cut_off_at_the_context_window_was_cut_off(agent_env_factory, fake_llm,
                                                                                  tmp_path):
    env = agent_env_factory(api="anthropic-messages")
    fake_llm.set_script([{"text": "The first half", "stop_reason": "model_context_window_exceeded"}])
    done = subprocess.run([sys.executable, "-m", "agent_forge", "--no-session", "-p", "go on"], cwd=tmp_path,
                          env=env, input=b"", capture_output=True, timeout=60)
    assert done.stdout.decode().strip() == "The first half"
    assert "the answer was cut off: the model's context window is full" in done.stderr.decode()


# ---- P3: every tool call's id on the wire is unique, and its result pairs with it ---------------------------


def echo_calls(*pairs: tuple[str, str]) -> list[dict]:
    return [{"id": call_id, "name": "bash", "arguments": {"command": f"echo {word}"}} for call_id, word in pairs]


def wire_pairs(api: str, body: dict) -> tuple[list[str], list[tuple[str, str]]]:
    """(call ids in order, (result's call id, result text) in order) of a recorded request body."""
    if api == "openai-responses":
        calls = [i["call_id"] for i in body["input"] if i.get("type") == "function_call"]
        results = [(i["call_id"], i["output"]) for i in body["input"] if i.get("type") == "function_call_output"]
        return calls, results
    blocks = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]
    if api == "anthropic-messages":
        return ([b["id"] for b in blocks if b["type"] == "tool_use"],
                [(b["tool_use_id"], b["content"]) for b in blocks if b["type"] == "tool_result"])
    calls = [c["id"] for m in body["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    return calls, [(m["tool_call_id"], m["content"]) for m in body["messages"] if m["role"] == "tool"]


WIRE_ID_CASES = [  # (api, the calls of two answers, the call ids the last request must carry)
    # one call_id under two items (distinct `fc_` ids): the second is renamed, as the other APIs rename theirs
    ("openai-responses", [echo_calls(("call_same", "one"), ("call_same", "two"))], ["call_same", "call_same_2"]),
    # ids that differ only in characters the API does not accept would clean to the same id
    ("anthropic-messages", [echo_calls(("toolu.1", "one"), ("toolu:1", "two"))], ["toolu_1", "toolu_1_2"]),
    # a host that numbers its calls afresh in each answer: ids stay unique over the whole request
    ("openai-completions", [echo_calls(("call_0", "one")), echo_calls(("call_0", "two"))], ["call_0", "call_0_2"]),
    ("anthropic-messages", [echo_calls(("toolu_0", "one")), echo_calls(("toolu_0", "two"))],
     ["toolu_0", "toolu_0_2"]),
]


@pytest.mark.parametrize(("api", "answers", "expected"), WIRE_ID_CASES)
async def test_tool_call_ids_on_the_wire_are_unique_and_paired_with_their_results(agent_env_factory, fake_llm,
                                                                                   tmp_path, api, answers, expected):
    env = agent_env_factory(api=api)
    fake_llm.set_script([*({"tool_calls": calls} for calls in answers), {"text": "done"}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=env) as client:
        await client.prompt_and_wait("run")
    calls, results = wire_pairs(api, fake_llm.requests[-1]["body"])
    assert calls == expected
    assert results == [(expected[0], "one\n"), (expected[1], "two\n")]
