"""Hosts without built-in models (Groq, OpenRouter, Together, Fireworks, Ollama, ...): any model id they serve.

Their model lists change too often to ship, so `--provider <host> --model <any id>` builds the model from the
host's data (`PROVIDER_ENDPOINTS`: API and base URL) with the `models.json` defaults, and `models.json` may
describe the ones a user wants in more detail. `ModelRegistry.host_model` adds such models to the catalogue.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...ai.catalogue import BUILTIN_MODELS, PROVIDER_ENDPOINTS, PROVIDER_ENV_KEYS
from .models_json import build_model
from .schema import ProviderEntry

if TYPE_CHECKING:
    from ...ai.types import Model

HOST_ONLY_PROVIDERS = frozenset(p for p in PROVIDER_ENDPOINTS if p not in {m["provider"] for m in BUILTIN_MODELS})
"""Known hosts (lower-case provider ids) without built-in models."""


def build_host_model(provider: str, model_id: str, entry: ProviderEntry) -> Model:
    """Model `model_id` of `provider` (one of `HOST_ONLY_PROVIDERS`): the host's API and base URL unless its
    `models.json` provider entry `entry` (`{}` without one) sets them; keyless when the host has no key
    variable and `entry` no `apiKey` (a local server). Raises `KeyError` for a provider that is not a host."""
    api, base_url = PROVIDER_ENDPOINTS[provider]
    keyless = provider not in PROVIDER_ENV_KEYS and "apiKey" not in entry
    return build_model(provider, entry.get("api") or api, entry.get("baseUrl") or base_url, entry,
                       {"id": model_id}, keyless)
