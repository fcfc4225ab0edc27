"""The built-in model catalogue, provider host defaults, and the thinking levels and context windows a model supports.

Model data (context windows, output limits, prices) comes from the providers' public model and pricing pages
(docs.anthropic.com "Models overview" and "Pricing", platform.openai.com "Models" and "Pricing",
ai.google.dev "Gemini models" and "Pricing", api-docs.deepseek.com "Models & Pricing", docs.x.ai "Models",
docs.mistral.ai, inference-docs.cerebras.ai), as of late 2025. Prices are US dollars per million tokens;
`cacheWrite` is Anthropic's 5-minute cache-write price; OpenAI, Google, DeepSeek and xAI bill no separate cache
write (0). Endpoints, key variables and compat flags of the hosts are data in `ai.hosts`; `models.json`
overrides any of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias, TypeGuard

from .hosts import ANTHROPIC_BASE_URL, HOSTS, OPENAI_BASE_URL, provider_endpoints, provider_env_keys
from .options import THINKING_LEVELS

if TYPE_CHECKING:
    from .types import JsonValue, Model

__all__ = ["ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "BUILTIN_MODELS", "PROVIDER_ENV_KEYS", "PROVIDER_ENDPOINTS"]

_TEXT_IMAGE = ("text", "image")
_TEXT = ("text",)
_SONNET_WINDOWS = (200_000, 1_000_000)  # 1M is Anthropic's long-context beta for the Sonnet 4 family

_Extras: TypeAlias = "dict[str, tuple[int | str, ...] | dict[str, JsonValue]]"
"""Optional Model fields of a row: `contextWindowOptions`, `thinkingLevels` (tuples) or `thinkingLevelMap`."""
_Row = tuple[str, str, bool, tuple[str, ...], int, int, float, float, float, float, _Extras]
# id, name, reasoning, input, contextWindow, maxTokens, $input, $output, $cacheRead, $cacheWrite, extras.
# Within a provider the first row is the preferred default; aliases come before dated snapshots.
_ANTHROPIC_ROWS: tuple[_Row, ...] = (
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

_XHIGH = ("off", "minimal", "low", "medium", "high", "xhigh")
# Reasoning efforts the Responses API accepts differ by family (platform.openai.com, "Reasoning models"):
# GPT-5 has "minimal"; GPT-5.1+ replaced it by "none"; the o-series starts at "low".
_GPT5: _Extras = {"thinkingLevelMap": {"off": "minimal"}}
_GPT51: _Extras = {"thinkingLevelMap": {"off": "none", "minimal": "low"}}
_O_SERIES: _Extras = {"thinkingLevelMap": {"minimal": "low"}}

_OPENAI_ROWS: tuple[_Row, ...] = (
    ("gpt-5", "GPT-5", True, _TEXT_IMAGE, 400_000, 128_000, 1.25, 10, 0.125, 0, _GPT5),
    ("gpt-5-mini", "GPT-5 mini", True, _TEXT_IMAGE, 400_000, 128_000, 0.25, 2, 0.025, 0, _GPT5),
    ("gpt-5-nano", "GPT-5 nano", True, _TEXT_IMAGE, 400_000, 128_000, 0.05, 0.4, 0.005, 0, _GPT5),
    ("gpt-5.1", "GPT-5.1", True, _TEXT_IMAGE, 400_000, 128_000, 1.25, 10, 0.125, 0, _GPT51),
    ("gpt-5.2", "GPT-5.2", True, _TEXT_IMAGE, 400_000, 128_000, 1.75, 14, 0.175, 0,
     {**_GPT51, "thinkingLevels": _XHIGH}),
    ("gpt-4.1", "GPT-4.1", False, _TEXT_IMAGE, 1_047_576, 32_768, 2, 8, 0.5, 0, {}),
    ("gpt-4.1-mini", "GPT-4.1 mini", False, _TEXT_IMAGE, 1_047_576, 32_768, 0.4, 1.6, 0.1, 0, {}),
    ("gpt-4.1-nano", "GPT-4.1 nano", False, _TEXT_IMAGE, 1_047_576, 32_768, 0.1, 0.4, 0.025, 0, {}),
    ("gpt-4o", "GPT-4o", False, _TEXT_IMAGE, 128_000, 16_384, 2.5, 10, 1.25, 0, {}),
    ("gpt-4o-mini", "GPT-4o mini", False, _TEXT_IMAGE, 128_000, 16_384, 0.15, 0.6, 0.075, 0, {}),
    ("o3", "o3", True, _TEXT_IMAGE, 200_000, 100_000, 2, 8, 0.5, 0, _O_SERIES),
    ("o4-mini", "o4-mini", True, _TEXT_IMAGE, 200_000, 100_000, 1.1, 4.4, 0.275, 0, _O_SERIES),
    ("o3-mini", "o3-mini", True, _TEXT, 200_000, 100_000, 1.1, 4.4, 0.55, 0, _O_SERIES),
)

# Gemini thinking (ai.google.dev, "Gemini thinking"): 2.5 models take a token budget (Flash can turn it off
# with 0, Pro needs at least 128); Gemini 3 takes a level ("low" or "high") and cannot turn thinking off.
_GOOGLE_ROWS: tuple[_Row, ...] = (
    ("gemini-2.5-pro", "Gemini 2.5 Pro", True, _TEXT_IMAGE, 1_048_576, 65_536, 1.25, 10, 0.125, 0,
     {"thinkingLevelMap": {"off": 128}}),
    ("gemini-2.5-flash", "Gemini 2.5 Flash", True, _TEXT_IMAGE, 1_048_576, 65_536, 0.3, 2.5, 0.03, 0,
     {"thinkingLevelMap": {"off": 0}}),
    ("gemini-2.5-flash-lite", "Gemini 2.5 Flash-Lite", True, _TEXT_IMAGE, 1_048_576, 65_536, 0.1, 0.4, 0.01, 0,
     {"thinkingLevelMap": {"off": 0}}),
    ("gemini-3-pro-preview", "Gemini 3 Pro (preview)", True, _TEXT_IMAGE, 1_048_576, 65_536, 2, 12, 0.2, 0,
     {"thinkingLevelMap": {"off": None, "minimal": "low", "low": "low", "medium": "high", "high": "high"}}),
)

_DEEPSEEK_ROWS: tuple[_Row, ...] = (
    ("deepseek-chat", "DeepSeek V3.2", False, _TEXT, 131_072, 8_192, 0.28, 0.42, 0.028, 0, {}),
    ("deepseek-reasoner", "DeepSeek V3.2 (thinking)", True, _TEXT, 131_072, 65_536, 0.28, 0.42, 0.028, 0, {}),
)

_XAI_ROWS: tuple[_Row, ...] = (
    ("grok-4", "Grok 4", True, _TEXT_IMAGE, 256_000, 64_000, 3, 15, 0.75, 0, {}),
    ("grok-code-fast-1", "Grok Code Fast 1", True, _TEXT, 256_000, 10_000, 0.2, 1.5, 0.02, 0, {}),
)

_MISTRAL_ROWS: tuple[_Row, ...] = (
    ("devstral-medium-latest", "Devstral Medium", False, _TEXT, 128_000, 32_768, 0.4, 2, 0, 0, {}),
    ("codestral-latest", "Codestral", False, _TEXT, 256_000, 32_768, 0.3, 0.9, 0, 0, {}),
)

_CEREBRAS_ROWS: tuple[_Row, ...] = (
    ("gpt-oss-120b", "gpt-oss-120b", True, _TEXT, 131_072, 32_768, 0.35, 0.75, 0, 0, {}),
)

_ROWS: dict[str, tuple[_Row, ...]] = {
    "anthropic": _ANTHROPIC_ROWS, "openai": _OPENAI_ROWS, "google": _GOOGLE_ROWS, "deepseek": _DEEPSEEK_ROWS,
    "xai": _XAI_ROWS, "mistral": _MISTRAL_ROWS, "cerebras": _CEREBRAS_ROWS,
}
"""Provider id -> its model rows; the order of providers is the catalogue order. Aggregators (OpenRouter,
Groq, Together, Fireworks) have no built-in rows: their model lists change weekly, so users name the models
they want in `models.json` and inherit the host's endpoint, key variable and flags."""


def _model(provider: str, api: str, base_url: str, row: _Row) -> Model:
    mid, name, reasoning, inputs, window, max_tokens, c_in, c_out, c_read, c_write, extras = row
    model: dict[str, Any] = {
        "id": mid, "name": name, "api": api, "provider": provider, "baseUrl": base_url,
        "reasoning": reasoning, "input": list(inputs), "contextWindow": window, "maxTokens": max_tokens,
        "cost": {"input": c_in, "output": c_out, "cacheRead": c_read, "cacheWrite": c_write},
    }
    if "contextWindowOptions" in extras:
        model["defaultContextWindow"] = window
    for key, value in extras.items():
        model[key] = dict(value) if isinstance(value, dict) else list(value)
    return model  # type: ignore[return-value]


BUILTIN_MODELS: list[Model] = [
    _model(provider, HOSTS[provider].api, HOSTS[provider].base_url, row)
    for provider, rows in _ROWS.items() for row in rows
]
"""Catalogue order: the order of `get_available_models` and of the automatic start-up choice.

Treat as read-only: `ModelRegistry` copies these dicts before applying `models.json` overrides.
"""

PROVIDER_ENV_KEYS: dict[str, str] = provider_env_keys()
"""Provider id -> the environment variable holding its API key (names as in the reference `providers.md`)."""

PROVIDER_ENDPOINTS: dict[str, tuple[str, str]] = provider_endpoints()
"""Provider id -> (api, baseUrl) for known hosts, so a `models.json` entry for them may list only models."""

_BASE_LEVELS = ("off", "minimal", "low", "medium", "high")


def thinking_levels_for(model: Model) -> list[str]:
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


def clamp_thinking_level(model: Model, level: str) -> str:
    """`level` if `model` supports it, else the highest supported level below it, else its lowest level.

    An unknown level string counts as `"off"`.
    """
    levels = thinking_levels_for(model)
    if level in levels:
        return level
    rank = THINKING_LEVELS.index(level) if level in THINKING_LEVELS else 0
    below = [lv for lv in levels if THINKING_LEVELS.index(lv) <= rank]
    return below[-1] if below else levels[0]


def default_thinking_level(model: Model) -> str:
    """`"medium"` for a reasoning model (clamped to what it supports), `"off"` otherwise."""
    return clamp_thinking_level(model, "medium") if model.get("reasoning") else "off"


def default_context_window(model: Model) -> int:
    """The token budget `model` starts with: its `defaultContextWindow`, else its `contextWindow` (seed 003)."""
    value = model.get("defaultContextWindow")
    if _positive(value):
        return int(value)
    return int(model["contextWindow"])


def context_windows_for(model: Model) -> list[int]:
    """Token budgets `model` can run with, ascending: its `contextWindowOptions` plus its default.

    A model without options has exactly one budget, so selection is not offered for it (seed 003,
    `get_available_context_windows.supportsSelection`).
    """
    options = model.get("contextWindowOptions")
    values = {int(v) for v in options if _positive(v)} if isinstance(options, list) else set()
    values.add(default_context_window(model))
    return sorted(values)


def _positive(value: object) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


CONTEXT_WINDOW_HEADERS: dict[tuple[str, int], dict[str, str]] = {
    ("anthropic", 1_000_000): {"anthropic-beta": "context-1m-2025-08-07"},
}
"""(provider, selected context window) -> request headers that unlock that budget. Anthropic serves 1M tokens
to the Sonnet 4 family only with this beta flag (docs.anthropic.com, "Context windows")."""
