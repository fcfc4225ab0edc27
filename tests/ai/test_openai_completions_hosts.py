"""openai-completions as spoken by other hosts: host compat data, reasoning formats, cache keys and usage."""

from __future__ import annotations

import pytest

from agent_forge.ai.options import StreamOptions
from agent_forge.ai.providers.openai_completions import stream
from ai_stream_helpers import FakeServer, collect, sse

OPENAI = {
    "id": "gpt-test", "name": "GPT Test", "api": "openai-completions", "provider": "openai",
    "baseUrl": "https://api.openai.com/v1", "reasoning": True, "input": ["text", "image"],
    "contextWindow": 128_000, "maxTokens": 16_384,
    "cost": {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75},
}
CONTEXT = {"systemPrompt": "Be brief.", "messages": [{"role": "user", "content": "Hi", "timestamp": 1}]}


def opts(server: FakeServer, **kw) -> StreamOptions:
    return StreamOptions(api_key="sk-test", transport=server.transport, **kw)


def reply(server: FakeServer, usage: dict | None = None) -> None:
    data = {"id": "c-1", "choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}
    body = sse(None, data)
    if usage:
        body += sse(None, {"id": "c-1", "choices": [], "usage": usage})
    server.reply(body + b"data: [DONE]\n\n")


async def test_ollama_models_get_the_host_flags_without_any_compat(server):
    reply(server)
    model = {**OPENAI, "provider": "ollama", "baseUrl": "http://localhost:11434/v1",
             "compat": {"apiKeyRequired": False}}
    await collect(stream(model, CONTEXT, StreamOptions(transport=server.transport, session_id="s1")))
    body = server.body()
    assert body["max_tokens"] == 16_384 and "max_completion_tokens" not in body
    assert "store" not in body and body["messages"][0]["role"] == "system"
    assert "prompt_cache_key" not in body  # only api.openai.com gets it by default
    assert "authorization" not in server.requests[0].headers


async def test_model_compat_overrides_the_host(server):
    reply(server)
    model = {**OPENAI, "provider": "deepseek", "baseUrl": "https://api.deepseek.com",
             "compat": {"maxTokensField": "max_completion_tokens"}}
    await collect(stream(model, CONTEXT, opts(server)))
    assert server.body()["max_completion_tokens"] == 16_384


@pytest.mark.parametrize(("thinking_format", "level", "fields"), [
    ("openrouter", "high", {"reasoning": {"effort": "high"}}),
    ("qwen", "low", {"enable_thinking": True}),
    ("qwen", "off", {"enable_thinking": False}),
    ("chat-template", "off", {"chat_template_kwargs": {"enable_thinking": False}}),
    ("openai", "medium", {"reasoning_effort": "medium"}),
])
async def test_thinking_formats(server, thinking_format, level, fields):
    reply(server)
    model = {**OPENAI, "baseUrl": "http://host/v1", "compat": {"thinkingFormat": thinking_format}}
    await collect(stream(model, CONTEXT, opts(server, thinking_level=level)))
    body = server.body()
    for key, value in fields.items():
        assert body[key] == value
    others = {"reasoning", "enable_thinking", "chat_template_kwargs", "reasoning_effort"} - set(fields)
    assert not others & set(body)


async def test_thinking_level_map_gives_the_effort_value(server):
    reply(server)
    model = {**OPENAI, "thinkingLevelMap": {"high": "max-effort", "low": None}}
    await collect(stream(model, CONTEXT, opts(server, thinking_level="high")))
    assert server.body()["reasoning_effort"] == "max-effort"
    reply(server)
    await collect(stream(model, CONTEXT, opts(server, thinking_level="low")))
    assert "reasoning_effort" not in server.body()


@pytest.mark.parametrize(("base_url", "mode", "sent"), [
    ("https://api.openai.com/v1", None, True), ("https://api.openai.com/v1", "disabled", False),
    ("http://host/v1", None, False), ("http://host/v1", "enabled", True),
])
async def test_prompt_cache_key_from_the_session_id(server, base_url, mode, sent):
    reply(server)
    model = {**OPENAI, "baseUrl": base_url, "compat": {"promptCacheKeyMode": mode} if mode else {}}
    await collect(stream(model, CONTEXT, opts(server, session_id="session-7")))
    assert server.body().get("prompt_cache_key") == ("session-7" if sent else None)


async def test_cache_reads_writes_and_reasoning_tokens_in_usage_and_cost(server):
    reply(server, {"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050,
                   "prompt_tokens_details": {"cached_tokens": 600, "cache_write_tokens": 300},
                   "completion_tokens_details": {"reasoning_tokens": 30}})
    usage = (await collect(stream(OPENAI, CONTEXT, opts(server))))[-1]["message"]["usage"]
    assert (usage["input"], usage["cacheRead"], usage["cacheWrite"], usage["output"], usage["reasoning"]) == (
        100, 600, 300, 50, 30)
    assert usage["totalTokens"] == 1050
    assert usage["cost"]["total"] == pytest.approx((100 * 3 + 600 * 0.3 + 300 * 3.75 + 50 * 15) / 1e6)
