"""Sanity of the built-in catalogue and the thinking-level rules."""

from __future__ import annotations

import json

import pytest

from agent_forge.ai.catalogue import (
    BUILTIN_MODELS,
    PROVIDER_ENDPOINTS,
    PROVIDER_ENV_KEYS,
    clamp_thinking_level,
    default_thinking_level,
    thinking_levels_for,
)
from agent_forge.ai.options import THINKING_LEVELS

BASE = ["off", "minimal", "low", "medium", "high"]


def by_id(provider: str, model_id: str) -> dict:
    return next(m for m in BUILTIN_MODELS if m["provider"] == provider and m["id"] == model_id)


def test_provider_and_id_pairs_are_unique() -> None:
    pairs = [(m["provider"], m["id"]) for m in BUILTIN_MODELS]
    assert len(pairs) == len(set(pairs))


@pytest.mark.parametrize("model", BUILTIN_MODELS, ids=lambda m: f"{m['provider']}/{m['id']}")
def test_every_model_is_well_formed(model: dict) -> None:
    assert model["contextWindow"] > 0 and model["maxTokens"] > 0
    assert model["maxTokens"] <= model["contextWindow"]
    assert set(model["cost"]) == {"input", "output", "cacheRead", "cacheWrite"}
    assert all(price >= 0 for price in model["cost"].values())
    assert model["cost"]["output"] >= model["cost"]["input"] > 0
    assert model["input"] and set(model["input"]) <= {"text", "image"}
    assert isinstance(model["reasoning"], bool) and model["name"]
    api, base_url = PROVIDER_ENDPOINTS[model["provider"]]
    assert (model["api"], model["baseUrl"]) == (api, base_url)
    json.dumps(model)  # a wire shape: plain JSON values only


def test_catalogue_has_the_expected_current_models() -> None:
    ids = {(m["provider"], m["id"]) for m in BUILTIN_MODELS}
    for mid in ("claude-opus-4-5", "claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1",
                "claude-sonnet-4-20250514"):
        assert ("anthropic", mid) in ids
    for mid in ("gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-4.1", "gpt-4.1-mini", "gpt-4o", "gpt-4o-mini",
                "o3", "o4-mini"):
        assert ("openai", mid) in ids


def test_known_prices_and_limits() -> None:
    sonnet = by_id("anthropic", "claude-sonnet-4-5")
    assert sonnet["cost"] == {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}
    assert (sonnet["contextWindow"], sonnet["maxTokens"]) == (200_000, 64_000)
    assert by_id("openai", "gpt-4.1")["contextWindow"] == 1_047_576
    assert by_id("openai", "gpt-4o")["reasoning"] is False


def test_context_window_options_contain_the_default() -> None:
    with_options = [m for m in BUILTIN_MODELS if "contextWindowOptions" in m]
    assert with_options
    for model in with_options:
        assert model["defaultContextWindow"] == model["contextWindow"] in model["contextWindowOptions"]


def test_env_keys_for_the_usual_hosts() -> None:
    assert PROVIDER_ENV_KEYS["anthropic"] == "ANTHROPIC_API_KEY"
    assert PROVIDER_ENV_KEYS["openai"] == "OPENAI_API_KEY"
    assert PROVIDER_ENV_KEYS["google"] == "GEMINI_API_KEY"
    for provider in ("groq", "openrouter", "xai", "mistral", "deepseek", "cerebras"):
        assert PROVIDER_ENV_KEYS[provider] == f"{provider.upper()}_API_KEY"
    assert {m["provider"] for m in BUILTIN_MODELS} <= set(PROVIDER_ENV_KEYS)


def test_thinking_levels_by_capability() -> None:
    assert thinking_levels_for(by_id("openai", "gpt-4o")) == ["off"]
    assert thinking_levels_for(by_id("anthropic", "claude-sonnet-4-5")) == BASE
    assert thinking_levels_for(by_id("openai", "gpt-5.2")) == [*BASE, "xhigh"]
    for model in BUILTIN_MODELS:
        levels = thinking_levels_for(model)
        assert levels == [lv for lv in THINKING_LEVELS if lv in levels]  # canonical order
        assert ("xhigh" in levels or "max" in levels) == ("thinkingLevels" in model)


def test_explicit_thinking_levels_override_everything() -> None:
    model = {"reasoning": False, "thinkingLevels": ["max", "off", "high"]}
    assert thinking_levels_for(model) == ["off", "high", "max"]


def test_thinking_level_map_drops_nulls_and_adds_mapped_extras() -> None:
    model = {"reasoning": True, "thinkingLevelMap": {"minimal": None, "xhigh": "max-effort", "max": None}}
    assert thinking_levels_for(model) == ["off", "low", "medium", "high", "xhigh"]


def test_clamp_goes_down_to_the_nearest_supported_level() -> None:
    claude = by_id("anthropic", "claude-opus-4-5")
    assert clamp_thinking_level(claude, "xhigh") == "high"
    assert clamp_thinking_level(claude, "max") == "high"
    assert clamp_thinking_level(claude, "low") == "low"
    assert clamp_thinking_level(by_id("openai", "gpt-4o"), "high") == "off"
    assert clamp_thinking_level(claude, "bogus") == "off"
    assert clamp_thinking_level({"thinkingLevels": ["low", "high"]}, "off") == "low"


def test_default_thinking_level() -> None:
    assert default_thinking_level(by_id("anthropic", "claude-haiku-4-5")) == "medium"
    assert default_thinking_level(by_id("openai", "gpt-4.1")) == "off"
    assert default_thinking_level({"reasoning": True, "thinkingLevels": ["off", "high"]}) == "off"
