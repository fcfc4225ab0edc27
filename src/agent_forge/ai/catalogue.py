"""The built-in model catalogue, provider host defaults, and the thinking levels and context windows a model supports.

Model data (context windows, output limits, prices) comes from the providers' public model and pricing pages
(docs.anthropic.com "Models overview" and "Pricing", platform.openai.com "Models" and "Pricing"), as of late
2025. Prices are US dollars per million tokens; `cacheWrite` is Anthropic's 5-minute cache-write price, and
OpenAI bills no separate cache write (0).
"""

from __future__ import annotations

from typing import Any

from .types import THINKING_LEVELS, Model

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
OPENAI_BASE_URL = "https://api.openai.com/v1"

_TEXT_IMAGE = ("text", "image")
_TEXT = ("text",)
_SONNET_WINDOWS = (200_000, 1_000_000)  # 1M is Anthropic's long-context beta for the Sonnet 4 family

# id, name, reasoning, input, contextWindow, maxTokens, $input, $output, $cacheRead, $cacheWrite, extras.
# Within a provider the first row is the preferred default; aliases come before dated snapshots.
_ANTHROPIC_ROWS: tuple[tuple[Any, ...], ...] = (
    ("claude-sonnet-4-5", "Claude Sonnet 4.5", True, _TEXT_IMAGE, 200_000, 64_000, 3, 15, 0.3, 3.75,
     {"contextWindowOptions": _SONNET_WINDOWS}),
    ("claude-opus-4-5", "Claude Opus 4.5", True, _TEXT_IMAGE, 200_000, 64_000, 5, 25, 0.5, 6.25, {}),
    ("claude-haiku-4-5", "Claude Haiku 4.5", True, _TEXT_IMAGE, 200_000, 64_000, 1, 5, 0.1, 1.25, {}),
    ("claude-opus-4-1", "Claude Opus 4.1", True, _TEXT_IMAGE, 200_000, 32_000, 15, 75, 1.5, 18.75, {}),
    ("claude-sonnet-4-5-20250929", "Claude Sonnet 4.5 (2025-09-29)", True, _TEXT_IMAGE, 200_000, 64_000,
     3, 15, 0.3, 3.75, {"contextWindowOptions": _SONNET_WINDOWS}),
    ("claude-opus-4-5-20251101", "Claude Opus 4.5 (2025-11-01)", True, _TEXT_IMAGE, 200_000, 64_000,
     5, 25, 0.5, 6.25, {}),
    ("claude-haiku-4-5-20251001", "Claude Haiku 4.5 (2025-10-01)", True, _TEXT_IMAGE, 200_000, 64_000,
     1, 5, 0.1, 1.25, {}),
    ("claude-opus-4-1-20250805", "Claude Opus 4.1 (2025-08-05)", True, _TEXT_IMAGE, 200_000, 32_000,
     15, 75, 1.5, 18.75, {}),
    ("claude-sonnet-4-20250514", "Claude Sonnet 4", True, _TEXT_IMAGE, 200_000, 64_000, 3, 15, 0.3, 3.75,
     {"contextWindowOptions": _SONNET_WINDOWS}),
    ("claude-opus-4-20250514", "Claude Opus 4", True, _TEXT_IMAGE, 200_000, 32_000, 15, 75, 1.5, 18.75, {}),
)

_XHIGH = {"thinkingLevels": ("off", "minimal", "low", "medium", "high", "xhigh")}

_OPENAI_ROWS: tuple[tuple[Any, ...], ...] = (
    ("gpt-5", "GPT-5", True, _TEXT_IMAGE, 400_000, 128_000, 1.25, 10, 0.125, 0, {}),
    ("gpt-5-mini", "GPT-5 mini", True, _TEXT_IMAGE, 400_000, 128_000, 0.25, 2, 0.025, 0, {}),
    ("gpt-5-nano", "GPT-5 nano", True, _TEXT_IMAGE, 400_000, 128_000, 0.05, 0.4, 0.005, 0, {}),
    ("gpt-5.1", "GPT-5.1", True, _TEXT_IMAGE, 400_000, 128_000, 1.25, 10, 0.125, 0, {}),
    ("gpt-5.2", "GPT-5.2", True, _TEXT_IMAGE, 400_000, 128_000, 1.75, 14, 0.175, 0, _XHIGH),
    ("gpt-4.1", "GPT-4.1", False, _TEXT_IMAGE, 1_047_576, 32_768, 2, 8, 0.5, 0, {}),
    ("gpt-4.1-mini", "GPT-4.1 mini", False, _TEXT_IMAGE, 1_047_576, 32_768, 0.4, 1.6, 0.1, 0, {}),
    ("gpt-4.1-nano", "GPT-4.1 nano", False, _TEXT_IMAGE, 1_047_576, 32_768, 0.1, 0.4, 0.025, 0, {}),
    ("gpt-4o", "GPT-4o", False, _TEXT_IMAGE, 128_000, 16_384, 2.5, 10, 1.25, 0, {}),
    ("gpt-4o-mini", "GPT-4o mini", False, _TEXT_IMAGE, 128_000, 16_384, 0.15, 0.6, 0.075, 0, {}),
    ("o3", "o3", True, _TEXT_IMAGE, 200_000, 100_000, 2, 8, 0.5, 0, {}),
    ("o4-mini", "o4-mini", True, _TEXT_IMAGE, 200_000, 100_000, 1.1, 4.4, 0.275, 0, {}),
    ("o3-mini", "o3-mini", True, _TEXT, 200_000, 100_000, 1.1, 4.4, 0.55, 0, {}),
)


def _model(provider: str, api: str, base_url: str, row: tuple[Any, ...]) -> Model:
    mid, name, reasoning, inputs, window, max_tokens, c_in, c_out, c_read, c_write, extras = row
    model: dict[str, Any] = {
        "id": mid, "name": name, "api": api, "provider": provider, "baseUrl": base_url,
        "reasoning": reasoning, "input": list(inputs), "contextWindow": window, "maxTokens": max_tokens,
        "cost": {"input": c_in, "output": c_out, "cacheRead": c_read, "cacheWrite": c_write},
    }
    if "contextWindowOptions" in extras:
        model["defaultContextWindow"] = window
    model.update({key: list(value) for key, value in extras.items()})
    return model  # type: ignore[return-value]


BUILTIN_MODELS: list[Model] = [
    *(_model("anthropic", "anthropic-messages", ANTHROPIC_BASE_URL, row) for row in _ANTHROPIC_ROWS),
    *(_model("openai", "openai-completions", OPENAI_BASE_URL, row) for row in _OPENAI_ROWS),
]
"""Catalogue order: the order of `get_available_models` and of the automatic start-up choice.

Treat as read-only: `ModelRegistry` copies these dicts before applying `models.json` overrides.
"""

PROVIDER_ENV_KEYS: dict[str, str] = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "google": "GEMINI_API_KEY",
    "groq": "GROQ_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "xai": "XAI_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "cerebras": "CEREBRAS_API_KEY",
    "fireworks": "FIREWORKS_API_KEY",
    "together": "TOGETHER_API_KEY",
    "huggingface": "HF_TOKEN",
    "nvidia": "NVIDIA_API_KEY",
    "moonshot": "MOONSHOT_API_KEY",
    "vercel-ai-gateway": "AI_GATEWAY_API_KEY",
    "zai": "ZAI_API_KEY",
}
"""Provider id -> the environment variable holding its API key (names as in the reference `providers.md`)."""

PROVIDER_ENDPOINTS: dict[str, tuple[str, str]] = {
    "anthropic": ("anthropic-messages", ANTHROPIC_BASE_URL),
    "openai": ("openai-completions", OPENAI_BASE_URL),
    "google": ("google-generative-ai", "https://generativelanguage.googleapis.com/v1beta"),
    "groq": ("openai-completions", "https://api.groq.com/openai/v1"),
    "openrouter": ("openai-completions", "https://openrouter.ai/api/v1"),
    "xai": ("openai-completions", "https://api.x.ai/v1"),
    "mistral": ("openai-completions", "https://api.mistral.ai/v1"),
    "deepseek": ("openai-completions", "https://api.deepseek.com"),
    "cerebras": ("openai-completions", "https://api.cerebras.ai/v1"),
    "fireworks": ("openai-completions", "https://api.fireworks.ai/inference/v1"),
    "together": ("openai-completions", "https://api.together.xyz/v1"),
}
"""Provider id -> (api, baseUrl) for hosted providers, so a `models.json` entry for them may list only models."""

_BASE_LEVELS = ("off", "minimal", "low", "medium", "high")


def thinking_levels_for(model: Model | dict[str, Any]) -> list[str]:
    """Thinking levels `model` supports, in `THINKING_LEVELS` order.

    Precedence: an explicit `thinkingLevels` list; `["off"]` when `reasoning` is false; a `models.json`
    `thinkingLevelMap` (a `null` value drops a level; `xhigh`/`max` count only when mapped to a value);
    otherwise `off, minimal, low, medium, high`.
    """
    explicit = model.get("thinkingLevels")
    if isinstance(explicit, list):
        levels = [level for level in THINKING_LEVELS if level in explicit]
        return levels or ["off"]
    if not model.get("reasoning"):
        return ["off"]
    mapping = model.get("thinkingLevelMap")
    if isinstance(mapping, dict):
        levels = [lv for lv in THINKING_LEVELS
                  if (mapping[lv] is not None if lv in mapping else lv in _BASE_LEVELS)]
        return levels or ["off"]
    return list(_BASE_LEVELS)


def clamp_thinking_level(model: Model | dict[str, Any], level: str) -> str:
    """`level` if `model` supports it, else the highest supported level below it, else its lowest level.

    An unknown level string counts as `"off"`.
    """
    levels = thinking_levels_for(model)
    if level in levels:
        return level
    rank = THINKING_LEVELS.index(level) if level in THINKING_LEVELS else 0
    below = [lv for lv in levels if THINKING_LEVELS.index(lv) <= rank]
    return below[-1] if below else levels[0]


def default_thinking_level(model: Model | dict[str, Any]) -> str:
    """`"medium"` for a reasoning model (clamped to what it supports), `"off"` otherwise."""
    return clamp_thinking_level(model, "medium") if model.get("reasoning") else "off"


def default_context_window(model: Model | dict[str, Any]) -> int:
    """The token budget `model` starts with: its `defaultContextWindow`, else its `contextWindow` (seed 003)."""
    value = model.get("defaultContextWindow")
    if _positive(value):
        return int(value)
    return int(model["contextWindow"])


def context_windows_for(model: Model | dict[str, Any]) -> list[int]:
    """Token budgets `model` can run with, ascending: its `contextWindowOptions` plus its default.

    A model without options has exactly one budget, so selection is not offered for it (seed 003,
    `get_available_context_windows.supportsSelection`).
    """
    options = model.get("contextWindowOptions")
    values = {int(v) for v in options if _positive(v)} if isinstance(options, list) else set()
    values.add(default_context_window(model))
    return sorted(values)


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


CONTEXT_WINDOW_HEADERS: dict[tuple[str, int], dict[str, str]] = {
    ("anthropic", 1_000_000): {"anthropic-beta": "context-1m-2025-08-07"},
}
"""(provider, selected context window) -> request headers that unlock that budget. Anthropic serves 1M tokens
to the Sonnet 4 family only with this beta flag (docs.anthropic.com, "Context windows")."""
