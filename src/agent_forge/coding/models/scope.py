"""The model cycling scope (`--models`, settings `enabledModels`): which available models its patterns select."""

from __future__ import annotations

import fnmatch
from collections import namedtuple
from typing import TYPE_CHECKING, Any

from ...ai.options import THINKING_LEVELS
from ..paths import path_text

if TYPE_CHECKING:
    from ...ai.types import Model
    from .registry import ModelRegistry

_GLOB_CHARS = ("*", "?", "[")


class ScopedModel(namedtuple("ScopedModel", ("model", "thinking_level"), defaults=(None,))):  # `ai.hosts.Host`
    """A model in the cycling scope; `thinking_level` is the level a `:<level>` pattern suffix pinned."""

    __slots__ = ()
    model: Model
    thinking_level: str | None


def split_patterns(patterns: Any) -> list[str] | None:
    """`"a, b:high"` or `["a", "b:high"]` -> `["a", "b:high"]` (blanks dropped); None when malformed."""
    if isinstance(patterns, str):
        patterns = patterns.split(",")
    if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
        return None
    return [p.strip() for p in patterns if p.strip()]


def resolve_scope(registry: ModelRegistry, patterns: list[str], source: str = "--models"
                  ) -> tuple[list[ScopedModel], list[str]]:
    """The models `patterns` select among the available ones (those with credentials), and warnings.

    A pattern is a case-insensitive glob on `provider/id` or `id` (`anthropic/*`, `*sonnet*`), else an exact
    id or `provider/id`, else a fuzzy match as for `--model`; each may end in `:<thinking level>`. An exact id
    offered by several providers adds each of them (with a warning). The first pattern to select a model
    decides its pinned level; order follows the patterns, then the catalogue.
    """
    scope: dict[tuple[str, str], ScopedModel] = {}
    warnings: list[str] = []
    available = registry.available_models()
    for raw in patterns:
        pattern, level = _split_level(raw)
        matches = _matches(registry, available, pattern, warnings)
        if not matches:
            warnings.append(f'{source}: no available model matches "{path_text(raw)}"')
        for model in matches:
            scope.setdefault((model["provider"], model["id"]), ScopedModel(model, level))
    return list(scope.values()), warnings


def _split_level(pattern: str) -> tuple[str, str | None]:
    head, sep, tail = pattern.rpartition(":")
    if sep and head and tail.lower() in THINKING_LEVELS:
        return head, tail.lower()
    return pattern, None


def _matches(registry: ModelRegistry, available: list[Model], pattern: str, warnings: list[str]) -> list[Model]:
    if any(c in pattern for c in _GLOB_CHARS):
        return _glob(available, pattern)
    return _named(registry, available, pattern, warnings)


def _glob(available: list[Model], pattern: str) -> list[Model]:
    needle = pattern.lower()
    return [m for m in available if fnmatch.fnmatchcase(f"{m['provider']}/{m['id']}".lower(), needle)
            or fnmatch.fnmatchcase(m["id"].lower(), needle)]


def _named(registry: ModelRegistry, available: list[Model], pattern: str, warnings: list[str]) -> list[Model]:
    needle = pattern.lower()
    exact = [m for m in available if f"{m['provider']}/{m['id']}".lower() == needle]
    exact = exact or [m for m in available if m["id"].lower() == needle]
    if len(exact) > 1:
        providers = ", ".join(m["provider"] for m in exact)
        warnings.append(f'Model "{path_text(pattern)}" is offered by several providers ({providers}); each is in the scope')
    if exact:
        return exact
    model, _, _ = registry.resolve_model_pattern(pattern)
    return [model] if model is not None and registry.has_auth(model) else []
