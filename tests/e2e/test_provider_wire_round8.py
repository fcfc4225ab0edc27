"""End to end (real CLI, loopback fake LLM): round-8 findings in the providers' wire formats: Chat Completions
tool-call pieces interleaved by `index`, stop reasons each API documents, and tool-call ids on the wire that
stay unique (and paired with their results) when a server repeats one."""

from __future__ import annotations

import json

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
