"""The turn loop with an in-process scripted stream function and real asyncio tools."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent_forge.agent.agent import Agent
from agent_forge.agent.types import FunctionTool, ToolError, ToolResult, text_result
from agent_forge.ai.usage import empty_usage

MODEL = {"id": "m", "name": "M", "api": "test", "provider": "test", "baseUrl": "", "reasoning": False,
         "input": ["text"], "contextWindow": 1000, "maxTokens": 100,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}


def scripted(replies: list[dict[str, Any]], gate: asyncio.Event | None = None):
    """A stream function: each reply is {"text": str, "calls": [(id, name, args)]}; `gate` blocks mid-text."""
    contexts: list[dict[str, Any]] = []

    async def stream(model, context, options):
        contexts.append(context)
        reply = replies[len(contexts) - 1]
        message = {"role": "assistant", "content": [], "api": "test", "provider": "test", "model": "m",
                   "usage": empty_usage(), "stopReason": "pending", "timestamp": 0}
        yield {"type": "start", "message": message}
        if reply.get("text"):
            message["content"].append({"type": "text", "text": ""})
            yield {"type": "text_start", "contentIndex": 0}
            for word in reply["text"].split(" "):
                message["content"][0]["text"] += word
                yield {"type": "text_delta", "contentIndex": 0, "delta": word}
                if gate is not None:
                    await gate.wait()
        for call_id, name, args in reply.get("calls", []):
            block = {"type": "toolCall", "id": call_id, "name": name, "arguments": args}
            message["content"].append(block)
            yield {"type": "toolcall_end", "contentIndex": len(message["content"]) - 1, "toolCall": block}
        message["stopReason"] = "toolUse" if reply.get("calls") else "stop"
        yield {"type": "done", "message": message}

    stream.contexts = contexts  # type: ignore[attr-defined]
    return stream


def make_agent(stream, tools=()):
    events: list[dict[str, Any]] = []
    agent = Agent(model=MODEL, stream_fn=stream, emit=events.append)
    agent.tools = list(tools)
    return agent, events


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 0}


async def test_plain_answer_event_order():
    agent, events = make_agent(scripted([{"text": "hello there"}]))
    await agent.prompt([user("hi")])
    kinds = [e["type"] for e in events]
    assert kinds[:4] == ["agent_start", "turn_start", "message_start", "message_end"]
    assert kinds[-2:] == ["turn_end", "agent_end"]
    assert kinds.count("message_update") == 3  # text_start + two deltas
    assert [m["role"] for m in agent.messages] == ["user", "assistant"]
    update = next(e for e in events if e["type"] == "message_update")
    assert set(update) == {"type", "usage", "assistantMessageEvent"}  # lean shape: no partial, no message


async def test_tool_results_are_recorded_in_call_order_even_when_finishing_out_of_order():
    release_first = asyncio.Event()

    async def slow(args, on_update):
        await release_first.wait()
        return text_result("slow done")

    async def fast(args, on_update):
        release_first.set()
        return text_result("fast done")

    tools = [FunctionTool(name="slow", description="", parameters={}, fn=slow),
             FunctionTool(name="fast", description="", parameters={}, fn=fast)]
    stream = scripted([{"calls": [("a", "slow", {}), ("b", "fast", {})]}, {"text": "ok"}])
    agent, events = make_agent(stream, tools)
    await agent.prompt([user("go")])
    ends = [e["toolCallId"] for e in events if e["type"] == "tool_execution_end"]
    assert ends == ["b", "a"]
    results = [m["toolCallId"] for m in agent.messages if m["role"] == "toolResult"]
    assert results == ["a", "b"]
    second_context = stream.contexts[1]["messages"]
    assert [m["role"] for m in second_context] == ["user", "assistant", "toolResult", "toolResult"]


async def test_tool_error_and_unknown_tool_become_error_results():
    async def failing(args, on_update):
        raise ToolError("bad input")

    tools = [FunctionTool(name="failing", description="", parameters={}, fn=failing)]
    stream = scripted([{"calls": [("a", "failing", {}), ("b", "missing", {})]}, {"text": "ok"}])
    agent, _ = make_agent(stream, tools)
    await agent.prompt([user("go")])
    results = [m for m in agent.messages if m["role"] == "toolResult"]
    assert [r["isError"] for r in results] == [True, True]
    assert results[0]["content"][0]["text"] == "bad input"
    assert "missing" in results[1]["content"][0]["text"]


async def test_abort_mid_stream_keeps_partial_text():
    gate = asyncio.Event()
    agent, events = make_agent(scripted([{"text": "one two three"}], gate=gate))
    task = agent.start([user("go")])
    while not any(e["type"] == "message_update" and e["assistantMessageEvent"]["type"] == "text_delta"
                  for e in events):
        await asyncio.sleep(0)
    agent.abort()
    await task
    assistant = agent.messages[-1]
    assert assistant["stopReason"] == "aborted"
    assert assistant["content"][0]["text"] == "one"
    assert events[-1]["type"] == "agent_end"


async def test_abort_mid_tool_records_aborted_result_and_stops():
    started = asyncio.Event()

    async def hang(args, on_update):
        on_update(ToolResult(content=[{"type": "text", "text": "partial"}]))
        started.set()
        await asyncio.Event().wait()

    tools = [FunctionTool(name="hang", description="", parameters={}, fn=hang)]
    agent, events = make_agent(scripted([{"calls": [("a", "hang", {})]}]), tools)
    task = agent.start([user("go")])
    await started.wait()
    agent.abort()
    await task
    result = agent.messages[-1]
    assert result["role"] == "toolResult" and result["isError"] is True
    assert [b["text"] for b in result["content"]] == ["partial", "Tool execution was aborted."]
    assert [e["type"] for e in events][-2:] == ["turn_end", "agent_end"]


async def test_steering_is_delivered_before_next_model_call():
    agent, events = make_agent(scripted([{"calls": [("a", "echo", {})]}, {"text": "done"}]))

    async def echo(args, on_update):
        agent.steer(user("change course"))
        return text_result("echoed")

    agent.tools = [FunctionTool(name="echo", description="", parameters={}, fn=echo)]
    await agent.prompt([user("go")])
    roles = [m["role"] for m in agent.messages]
    assert roles == ["user", "assistant", "toolResult", "user", "assistant"]
    assert any(e["type"] == "queue_update" and e["steering"] == ["change course"] for e in events)


async def test_follow_up_runs_only_when_agent_would_stop():
    agent, _ = make_agent(scripted([{"text": "first"}, {"text": "second"}]))
    agent.follow_up(user("then this"))
    await agent.prompt([user("go")])
    assert [m["role"] for m in agent.messages] == ["user", "assistant", "user", "assistant"]


async def test_start_while_streaming_is_refused():
    gate = asyncio.Event()
    agent, _ = make_agent(scripted([{"text": "a b"}], gate=gate))
    task = agent.start([user("go")])
    with pytest.raises(RuntimeError):
        agent.start([user("again")])
    gate.set()
    await task


async def test_provider_exception_becomes_error_message():
    async def broken(model, context, options):
        raise ValueError("boom")
        yield  # pragma: no cover

    agent, events = make_agent(broken)
    await agent.prompt([user("go")])
    assistant = agent.messages[-1]
    assert assistant["stopReason"] == "error" and "boom" in assistant["errorMessage"]
    assert [e["type"] for e in events].count("message_start") == 2


async def test_abort_landing_before_a_step_starts_still_ends_the_run_cleanly():
    """The abort cancels the step's task before its first line runs (no await in between)."""
    agent, events = make_agent(scripted([{"text": "never streamed"}]))
    original = agent._loop_config

    def config_with_abort():
        config = original()
        config_system_prompt = config.system_prompt

        def system_prompt_then_abort():
            agent.abort()  # runs inside _stream_assistant's context build: the step task exists, has started
            return config_system_prompt()

        config.system_prompt = system_prompt_then_abort
        return config

    agent._loop_config = config_with_abort
    await agent.prompt([user("go")])
    assert agent.messages[-1]["stopReason"] == "aborted"
    assert [e["type"] for e in events][-2:] == ["turn_end", "agent_end"]


async def test_abort_before_the_stream_task_runs_at_all():
    agent, events = make_agent(scripted([{"text": "never streamed"}]))
    task = agent.start([user("go")])
    while not any(e["type"] == "message_end" for e in events):  # the user message is recorded
        await asyncio.sleep(0)
    agent.abort()  # the streaming step's task was created but has not run its first line yet
    await task
    assert agent.messages[-1]["role"] == "assistant" and agent.messages[-1]["stopReason"] == "aborted"
    assert events[-1]["type"] == "agent_end"


async def test_abort_before_the_tool_tasks_first_run_still_ends_every_call():
    """Found by the RPC command storm: cancelled before their first line, tool calls never ran their `finally`,
    so no `tool_execution_end` came for them. Every start has exactly one end, however the abort lands."""
    ran: list[str] = []

    async def echo(args, on_update):
        ran.append("echo")
        return text_result("ran")

    tools = [FunctionTool(name="echo", description="", parameters={}, fn=echo)]
    agent, events = make_agent(scripted([{"calls": [("a", "echo", {}), ("b", "echo", {})]}]), tools)
    loop = asyncio.get_running_loop()

    def emit(event: dict[str, Any]) -> None:
        events.append(event)
        if event["type"] == "tool_execution_start" and event["toolCallId"] == "b":
            # two ticks on: the tool step has created the calls' tasks, which have not run yet
            loop.call_soon(loop.call_soon, agent.abort)

    agent._emit = emit
    await agent.prompt([user("go")])
    ends = [e["toolCallId"] for e in events if e["type"] == "tool_execution_end"]
    assert ran == [] and sorted(ends) == ["a", "b"]
    results = [m for m in agent.messages if m["role"] == "toolResult"]
    assert [r["isError"] for r in results] == [True, True]
