"""Model selection: `--model` patterns, the start-up model and its thinking level.

Pure functions over a `Catalogue` (the `ModelRegistry`): they read models and credentials, and only change the
catalogue by adding a host model (`host_model`) that a pattern names.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ...ai.catalogue import clamp_thinking_level, default_thinking_level
from ...ai.options import THINKING_LEVELS
from ...lazy_re import LazyPattern
from .hosts import HOST_ONLY_PROVIDERS
from ..paths import path_text

if TYPE_CHECKING:
    from ...ai.types import Model
    from ..settings import Settings

_DATED_ID = LazyPattern(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")

Scope = Sequence[tuple["Model", str | None]]
"""Scoped models (`--models`, settings `enabledModels`) as `(model, pinned thinking level or None)` pairs."""

Resolved = tuple["Model | None", str | None, str | None]
"""`(model, thinking level, error)` of a pattern: exactly one of model and error is set."""


class Catalogue(Protocol):
    """What selection reads: the `ModelRegistry` methods of the same names."""

    @property
    def models_path(self) -> Path: ...

    @property
    def models(self) -> list[Model]: ...

    def find(self, provider: str, model_id: str) -> Model | None: ...

    def of_provider(self, provider: str) -> list[Model]: ...

    def providers(self) -> list[str]: ...

    def known_providers(self) -> list[str]: ...

    def known_provider(self, provider: str) -> str | None: ...

    def has_auth(self, model: Model) -> bool: ...

    def available_models(self) -> list[Model]: ...

    def host_model(self, provider: str, model_id: str) -> Model | None: ...

    def is_host_default(self, model: Model) -> bool: ...



def unknown_provider(catalogue: Catalogue, provider: str) -> str:
    """The error for a provider id the agent does not know, listing `catalogue.known_providers()`."""
    return f'Unknown provider "{path_text(provider)}". Known providers: {", ".join(catalogue.known_providers())}'

def require_provider(catalogue: Catalogue, provider: str) -> str:
    """`provider` as `known_providers()` spells it (any case: `/login OpenRouter`); `CommandError` with
    `unknown_provider`'s words when the agent does not know it (`/login`, `/logout`, RPC `logout_provider`)."""
    from ..errors import CommandError

    known = catalogue.known_provider(provider)
    if known is None:
        raise CommandError(unknown_provider(catalogue, provider))
    return known


def resolve_model_pattern(catalogue: Catalogue, pattern: str, provider: str | None = None) -> Resolved:
    """Resolve a `--model` pattern to `(model, thinking_level, error)`; exactly one of model/error is set.

    Accepts `id`, `provider/id`, and a `:<level>` suffix (`sonnet:high`); ids containing `:` (Ollama's
    `qwen2.5-coder:7b`) match whole first. Exact ids (case-insensitive) beat substring matches of id or
    name. Among several matches, models with a credential win; then ids over names, undated aliases over
    dated snapshots, shorter ids, and finally the higher id (`opus-4-5` over `opus-4-1`). An exact id
    offered by several providers, none with a credential, is an error asking for `--provider`. When
    nothing matches, a host without built-in models accepts any id (`--provider groq` with
    `llama-3.3-70b`, or `groq/llama-3.3-70b`: see `hosts.py`).
    `thinking_level` is the suffix as given (not clamped), or None.
    """
    if not isinstance(pattern, str) or (provider is not None and not isinstance(provider, str)):
        return None, None, "A model pattern and provider must be strings"
    pattern = pattern.strip()
    if not pattern:
        return None, None, "Empty model pattern"
    if provider and not catalogue.of_provider(provider) and provider.lower() not in HOST_ONLY_PROVIDERS:
        return None, None, unknown_provider(catalogue, provider)
    model, error = _match(catalogue, pattern, provider)
    if model or error:
        return model, None, error
    head, sep, suffix = pattern.rpartition(":")
    model, error = _match(catalogue, head, provider) if sep and head else (None, None)
    if model and suffix not in THINKING_LEVELS:
        return None, None, (f'Invalid thinking level "{path_text(suffix)}" in model pattern "{path_text(pattern)}". '
                            f"Valid levels: {', '.join(THINKING_LEVELS)}")
    if model or error:
        return model, (suffix if model else None), error
    model, level = _host_pattern(catalogue, pattern, provider)
    if model:
        return model, level, None
    scope = f' for provider "{path_text(provider)}"' if provider else ""
    return None, None, f'No model matches "{path_text(pattern)}"{scope}'


def _match(catalogue: Catalogue, pattern: str, provider: str | None) -> tuple[Model | None, str | None]:
    scopes = _scopes(catalogue, pattern, provider)
    for pool, pat in scopes:
        exact = [m for m in pool if m["id"] == pat] or [m for m in pool if m["id"].lower() == pat.lower()]
        if exact:
            return _pick_exact(catalogue, exact, pat)
    for pool, pat in scopes:
        needle = pat.lower()
        fuzzy = [m for m in pool if needle in m["id"].lower() or needle in m.get("name", "").lower()]
        if fuzzy:
            return _pick_fuzzy(catalogue, fuzzy, needle), None
    return None, None


def _scopes(catalogue: Catalogue, pattern: str, provider: str | None) -> list[tuple[list[Model], str]]:
    """(candidate models, pattern to match) pairs, most specific first.

    `provider/id` narrows to that provider, but the whole pattern is tried too: OpenRouter-style ids
    (`openai/gpt-4o`) contain a slash themselves.
    """
    head, sep, tail = pattern.partition("/")
    pool = catalogue.of_provider(provider) if provider else catalogue.models
    scopes = [(pool, pattern)]
    if sep and tail:
        if provider is None and head.lower() in {p.lower() for p in catalogue.providers()}:
            scopes.insert(0, (catalogue.of_provider(head), tail))
        elif provider is not None and head.lower() == provider.lower():
            scopes.insert(0, (pool, tail))
    return scopes


def _pick_exact(catalogue: Catalogue, matches: list[Model], pattern: str) -> tuple[Model | None, str | None]:
    with_auth = [m for m in matches if catalogue.has_auth(m)]
    providers = list(dict.fromkeys(m["provider"] for m in matches))
    if with_auth or len(providers) == 1:
        return (with_auth or matches)[0], None
    return None, (f'Model "{pattern}" is offered by several providers ({", ".join(providers)}) and none '
                  f'has an API key; choose one with --provider or "<provider>/{pattern}"')


def _pick_fuzzy(catalogue: Catalogue, matches: list[Model], needle: str) -> Model:
    ranked = sorted(matches, key=lambda m: m["id"], reverse=True)
    ranked.sort(key=lambda m: (not catalogue.has_auth(m), needle not in m["id"].lower(),
                               bool(_DATED_ID.search(m["id"])), len(m["id"])))
    return ranked[0]


def _host_pattern(catalogue: Catalogue, pattern: str, provider: str | None) -> tuple[Model | None, str | None]:
    """`(model, level)` for `--provider <host> --model <id>` or `--model <host>/<id>` (see `hosts.py`);
    a `:<thinking level>` suffix is split off, any other `:` stays in the id (`qwen2.5-coder:7b`)."""
    if provider is None:
        head, sep, tail = pattern.partition("/")
        provider, pattern = (head, tail) if sep and head.lower() in HOST_ONLY_PROVIDERS else (None, pattern)
    if provider is None or provider.lower() not in HOST_ONLY_PROVIDERS:
        return None, None
    head, sep, suffix = pattern.rpartition(":")
    if sep and head and suffix in THINKING_LEVELS:
        return catalogue.host_model(provider, head), suffix
    return catalogue.host_model(provider, pattern), None


def initial_model(catalogue: Catalogue, *, provider: str | None = None, model_pattern: str | None = None,
                  settings: Settings | None = None, thinking: str | None = None, scope: Scope | None = None
                  ) -> tuple[Model | None, str, list[str]]:
    """The start-up model, its thinking level, and warnings for the user.

    Order: `--model` (with `--provider`), `--provider` alone (its settings default or first model with a
    credential), a non-empty `scope` (the settings default when it is in scope, else the first scoped
    model, with its pinned level), settings `defaultProvider`/`defaultModel`, then the first model with a
    credential.
    A `--model` that does not resolve gives `(None, "off", [error])` with no fallback: the caller should
    treat it as fatal. Thinking: `thinking` (`--thinking`), the pattern's suffix, settings
    `modelThinkingLevels` / `defaultThinkingLevel`, else `"medium"` for reasoning models and `"off"`
    otherwise; always clamped to the model's levels.
    """
    warnings: list[str] = []
    level: str | None = None
    if model_pattern:
        model, level, error = resolve_model_pattern(catalogue, model_pattern, provider)
        if error:
            return None, "off", [error]
    elif provider:
        model = _provider_default(catalogue, provider, settings, warnings)
    elif scope:
        model, level = _scoped_default(catalogue, scope, settings)
    else:
        model, level = _settings_default(catalogue, settings, warnings)
        model = model or next(iter(catalogue.available_models()), None)
    if model is None:
        return None, "off", warnings
    if catalogue.is_host_default(model):
        warnings.append(_host_default_note(catalogue, model))
    return model, _initial_level(model, thinking, level, settings, warnings), warnings


def _provider_default(catalogue: Catalogue, provider: str, settings: Settings | None,
                      warnings: list[str]) -> Model | None:
    models = catalogue.of_provider(provider)
    if not models and provider.lower() in HOST_ONLY_PROVIDERS:
        warnings.append(f'Provider "{path_text(provider)}" has no built-in models: name one with --model <id> (any model '
                        f"the host serves), or list its models in {catalogue.models_path}")
        return None
    if not models:
        warnings.append(unknown_provider(catalogue, provider))
        return None
    if settings is not None and settings.default_model and settings.default_provider == models[0]["provider"]:
        chosen = catalogue.find(models[0]["provider"], settings.default_model)
        if chosen:
            return chosen
    return next((m for m in models if catalogue.has_auth(m)), models[0])


def _host_default_note(catalogue: Catalogue, model: Model) -> str:
    return (f'Model "{model["id"]}" of {model["provider"]} is not described in the catalogue: using defaults '
            f'({model["contextWindow"]}-token context window, {model["maxTokens"]} output tokens, no reasoning, '
            f"text only); describe it in {catalogue.models_path} to change them")


def _scoped_default(catalogue: Catalogue, scope: Scope, settings: Settings | None) -> tuple[Model, str | None]:
    default, _ = _settings_default(catalogue, settings, [])
    for model, level in scope:
        if default is not None and (model["provider"], model["id"]) == (default["provider"], default["id"]):
            return model, level
    return scope[0][0], scope[0][1]


def _settings_default(catalogue: Catalogue, settings: Settings | None,
                      warnings: list[str]) -> tuple[Model | None, str | None]:
    if settings is None or not settings.default_model:
        return None, None
    provider = settings.default_provider
    model, level, error = resolve_model_pattern(catalogue, settings.default_model, provider)
    if error:
        name = path_text(f"{provider}/{settings.default_model}" if provider else settings.default_model)
        warnings.append(f'Default model "{name}" from settings is not available ({error}); '
                        "choosing another model")
    return model, level


def _initial_level(model: Model, thinking: str | None, suffix: str | None, settings: Settings | None,
                   warnings: list[str]) -> str:
    if thinking is not None and thinking not in THINKING_LEVELS:
        warnings.append(f'Invalid thinking level "{path_text(thinking)}" ignored. Valid levels: {", ".join(THINKING_LEVELS)}')
        thinking = None
    explicit = thinking or suffix
    configured = None
    if settings is not None:
        configured = (settings.model_thinking_level(model["provider"], model["id"])
                      or settings.default_thinking_level)
    if explicit:
        level, warning = supported_level(model, explicit)
        warnings.extend([warning] if warning else [])
        return level
    return clamp_thinking_level(model, configured) if configured else default_thinking_level(model)


def supported_level(model: Model, requested: str) -> tuple[str, str | None]:
    """`(level, warning)`: `requested` clamped to the levels `model` supports (`clamp_thinking_level`), and the
    warning the user gets when it had to change (`Thinking level "low" is not supported by fake/m; using "off"`),
    else None. The one wording of every level asked for by a flag, a pattern suffix, a scope pin or a session's
    branch (`ModelControl` reports it; `set_thinking_level` refuses such a level instead)."""
    level = clamp_thinking_level(model, requested)
    if level == requested:
        return level, None
    return level, (f'Thinking level "{requested}" is not supported by {model["provider"]}/{model["id"]}; '
                   f'using "{level}"')
