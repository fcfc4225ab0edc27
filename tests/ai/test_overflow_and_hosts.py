"""Context-overflow detection for every API's error wording, and hosts as catalogue data."""

from __future__ import annotations

import pytest

from agent_forge.ai.catalogue import BUILTIN_MODELS, PROVIDER_ENDPOINTS, PROVIDER_ENV_KEYS
from agent_forge.ai.hosts import HOSTS, effective_compat, host_for
from agent_forge.ai.overflow import OVERFLOW_PATTERNS, is_context_overflow, is_overflow_error
from agent_forge.ai.registry import get_stream_function

OVERFLOWS = [
    # anthropic-messages (HTTP 400 and 413 as our HttpStatusError text)
    '400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > '
    '200000 maximum"}}',
    '413 {"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}',
    # openai-completions / OpenRouter / DeepSeek / Mistral
    '400 {"error":{"message":"This model\'s maximum context length is 128000 tokens. However, your messages '
    'resulted in 130000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}',
    # openai-responses (in-stream response.failed)
    '{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model."}',
    # google-generative-ai
    '400 {"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens '
    'allowed (1048576).","status":"INVALID_ARGUMENT"}}',
    # hosts
    "400 This model's maximum prompt length is 131072 but the request contains 140000 tokens.",  # xAI
    "400 Please reduce the length of the messages or completion.",  # Groq
    '400 {"error":{"code":400,"message":"the request exceeds the available context size, try increasing it",'
    '"type":"exceed_context_size_error"}}',  # llama.cpp server
    "400 The number of tokens to keep from the initial prompt is greater than the context length",  # LM Studio
    "400 ",  # Cerebras answers an oversized prompt with an empty body
    "400 prompt too long; exceeded max context length by 1200 tokens",  # Ollama
    '400 {"error":{"message":"prompt token count of 140000 exceeds the limit of 128000"}}',  # GitHub Copilot
    "413 Request Entity Too Large",
]
NOT_OVERFLOWS = [
    '429 {"error":{"message":"Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Requested '
    '50000.","type":"tokens","code":"rate_limit_exceeded"}}',
    '429 {"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your '
    'per-minute rate limit"}}',
    '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    "ReadTimeout: timed out", "", "400 {\"error\":{\"message\":\"Invalid 'input[2].call_id'\"}}",
]


@pytest.mark.parametrize("text", OVERFLOWS)
def test_overflow_wording_of_every_api_is_recognised(text):
    assert is_overflow_error(text) and is_context_overflow(text)


@pytest.mark.parametrize("text", NOT_OVERFLOWS)
def test_rate_limits_and_other_errors_are_not_overflow(text):
    assert not is_overflow_error(text)


def test_overflow_on_assistant_messages_including_silent_truncation():
    failed = {"role": "assistant", "stopReason": "error", "errorMessage": OVERFLOWS[0]}
    assert is_context_overflow(failed)
    assert not is_context_overflow({**failed, "stopReason": "aborted"})
    ok = {"role": "assistant", "stopReason": "stop", "usage": {"input": 90_000, "cacheRead": 20_000}}
    assert is_context_overflow(ok, context_window=100_000)
    assert not is_context_overflow(ok, context_window=128_000) and not is_context_overflow(ok)
    assert not is_context_overflow({"role": "user", "content": "prompt is too long"})
    assert not is_context_overflow(None)


def test_every_pattern_source_is_named():
    assert {source for source, _ in OVERFLOW_PATTERNS} >= {
        "anthropic-messages", "openai", "openai-responses", "google-generative-ai"}


def test_every_host_speaks_a_known_api_and_keys_follow_the_hosts():
    for provider, host in HOSTS.items():
        get_stream_function(host.api)  # raises for an unknown api
        assert PROVIDER_ENDPOINTS[provider] == (host.api, host.base_url)
        assert PROVIDER_ENV_KEYS.get(provider) == host.env
    assert {"ollama", "vllm", "lmstudio", "llamacpp"} <= {p for p, h in HOSTS.items() if h.local}
    assert {"openrouter", "groq", "cerebras", "xai", "mistral", "deepseek", "together", "fireworks"} <= set(HOSTS)


def test_host_flags_apply_by_provider_or_url_and_model_compat_wins():
    ollama = {"provider": "ollama", "api": "openai-completions", "baseUrl": "http://gpu:11434/v1"}
    assert effective_compat(ollama)["maxTokensField"] == "max_tokens"
    custom = {"provider": "my-deepseek", "api": "openai-completions", "baseUrl": "https://api.deepseek.com",
              "compat": {"maxTokensField": "max_completion_tokens"}}
    assert host_for(custom) is HOSTS["deepseek"]
    assert effective_compat(custom) == {**HOSTS["deepseek"].compat, "maxTokensField": "max_completion_tokens"}
    other_api = {"provider": "groq", "api": "anthropic-messages", "baseUrl": "https://x"}
    assert effective_compat(other_api) == {}


def test_built_in_models_use_their_hosts_and_price_every_token_kind():
    providers = {m["provider"] for m in BUILTIN_MODELS}
    assert {"anthropic", "openai", "google", "deepseek", "xai", "mistral", "cerebras"} <= providers
    for m in BUILTIN_MODELS:
        assert (m["api"], m["baseUrl"]) == PROVIDER_ENDPOINTS[m["provider"]]
        assert set(m["cost"]) == {"input", "output", "cacheRead", "cacheWrite"}
    assert {m["api"] for m in BUILTIN_MODELS if m["provider"] == "openai"} == {"openai-responses"}
