"""The scripted faux provider and the api → provider-module registry."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from agent_forge.ai import registry
from agent_forge.ai.errors import UnknownApiError
from agent_forge.ai.options import StreamOptions
from agent_forge.ai.providers import faux
from agent_forge.ai.providers.faux import FauxResponse, faux_model, faux_requests, set_faux_responses
from ai_stream_helpers import collect, types_of

CONTEXT = {"systemPrompt": "sys", "messages": [{"role": "user", "content": "hello there", "timestamp": 1}]}


async def run(model=None, context=CONTEXT):
    return await collect(registry.stream(model or faux_model(), context))


async def test_faux_streams_thinking_text_and_tool_calls_like_a_provider():
    set_faux_responses([FauxResponse(thinking="hmm", text="Hello world", chunk_size=4,
                                     tool_calls=[("read", {"path": "a.txt"})], input_tokens=10, output_tokens=3)])
    events = await run()
    assert types_of(events) == [
        "start", "thinking_start", "thinking_delta", "thinking_end",
        "text_start", "text_delta", "text_delta", "text_delta", "text_end",
        "toolcall_start", "toolcall_delta", "toolcall_delta", "toolcall_delta", "toolcall_delta", "toolcall_end",
        "done",
    ]
    message = events[-1]["message"]
    assert message["stopReason"] == "toolUse" and message["api"] == "faux"
    assert message["content"][1] == {"type": "text", "text": "Hello world"}
    assert message["content"][2]["arguments"] == {"path": "a.txt"}
    assert (message["usage"]["input"], message["usage"]["output"], message["usage"]["totalTokens"]) == (10, 3, 13)


async def test_faux_queues_are_per_key_and_record_requests():
    set_faux_responses([FauxResponse(text="A1"), FauxResponse(text="A2")], key="a")
    set_faux_responses([lambda context: FauxResponse(text=f"echo {context['messages'][-1]['content']}")], key="b")
    first = await run(faux_model(key="a"))
    echoed = await run(faux_model(key="b"))
    second = await run(faux_model(key="a"))
    assert [e[-1]["message"]["content"][0]["text"] for e in (first, echoed, second)] == ["A1", "echo hello there", "A2"]
    assert len(faux_requests("a")) == 2 and faux_requests("b")[0].context["systemPrompt"] == "sys"


async def test_faux_error_after_partial_text_and_empty_queue():
    set_faux_responses([FauxResponse(text="partial", error="529 overloaded")])
    events = await run()
    assert events[-1]["type"] == "error"
    assert events[-1]["message"]["errorMessage"] == "529 overloaded"
    assert events[-1]["message"]["content"] == [{"type": "text", "text": "partial"}]
    events = await run()
    assert types_of(events) == ["start", "error"] and "no scripted response" in events[-1]["message"]["errorMessage"]


async def test_faux_raw_argument_string_and_stop_override():
    set_faux_responses([FauxResponse(tool_calls=[("bash", '{"command": "ls"')], stop_reason="length")])
    events = await run()
    call = events[-1]["message"]["content"][0]
    assert call["arguments"] == {} and "Received arguments" in call["argumentsError"]
    assert events[-1]["message"]["stopReason"] == "length"


async def test_faux_estimates_usage_when_not_given():
    set_faux_responses([FauxResponse(text="x" * 40)])
    usage = (await run())[-1]["message"]["usage"]
    assert usage["output"] == 10 and usage["input"] > 0


async def test_faux_hang_lets_a_test_cancel_mid_stream():
    release = asyncio.Event()
    set_faux_responses([FauxResponse(text="abcdefgh", chunk_size=2, hang_after=2, release=release)])
    seen: list[dict] = []

    async def consume():
        async for event in registry.stream(faux_model(), CONTEXT):
            seen.append(event)
            if types_of(seen).count("text_delta") == 2:
                hung.set()

    hung = asyncio.Event()
    task = asyncio.create_task(consume())
    await hung.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen[0]["message"]["content"] == [{"type": "text", "text": "abcd"}]


async def test_faux_release_resumes_the_stream():
    release = asyncio.Event()
    set_faux_responses([FauxResponse(text="abcd", chunk_size=1, hang_after=1, release=release)])
    events = registry.stream(faux_model(), CONTEXT)
    assert types_of([await anext(events) for _ in range(3)]) == ["start", "text_start", "text_delta"]
    release.set()  # without it the next delta would never come
    rest = await collect(events)
    assert [e["delta"] for e in rest if e["type"] == "text_delta"] == ["b", "c", "d"]
    assert rest[-1]["message"]["content"][0]["text"] == "abcd"


def test_registry_maps_apis_to_modules():
    assert registry.get_stream_function("faux") is faux.stream
    from agent_forge.ai.providers import anthropic_messages, openai_completions

    assert registry.get_stream_function("anthropic-messages") is anthropic_messages.stream
    assert registry.get_stream_function("openai-completions") is openai_completions.stream
    assert set(registry.API_MODULES) <= set(registry.known_apis())


def test_unknown_api_raises_before_streaming():
    with pytest.raises(UnknownApiError) as info:
        registry.stream({**faux_model(), "api": "carrier-pigeon"}, CONTEXT)
    assert isinstance(info.value, LookupError) and "carrier-pigeon" in str(info.value)


async def test_register_api_overrides():
    async def custom(model, context, options):
        yield {"type": "start", "message": {"custom": True}}

    registry.register_api("custom-api", custom)
    try:
        events = await collect(registry.stream({**faux_model(), "api": "custom-api"}, CONTEXT, StreamOptions()))
        assert events == [{"type": "start", "message": {"custom": True}}]
    finally:
        registry._registered.pop("custom-api")


def test_importing_the_registry_loads_no_provider_and_no_httpx2():
    code = (
        "import sys, agent_forge.ai.registry, agent_forge.ai.sse, agent_forge.ai.partial_json; "
        "print(sorted(m for m in sys.modules if m.startswith(('httpx2', 'agent_forge.ai.providers.'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_provider_modules_import_without_httpx2():
    code = (
        "import sys, agent_forge.ai.providers.anthropic_messages, agent_forge.ai.providers.openai_completions; "
        "print('httpx2' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
