"""ModelRegistry: the models the agent can use (built-ins plus `models.json`), their credentials and selection.

The registry is the package's front: it holds the catalogue (`models_json.py` reads the file, `hosts.py` adds
host models on demand) and delegates credentials to `credentials.py` and selection to `selection.py`.
Hosts without built-in models (`HOST_ONLY_PROVIDERS`: Groq, OpenRouter, Ollama, ...) accept any model id,
built from the host's data with the `models.json` defaults (`host_model`).

`logout(provider)` deletes only the `auth.json` credential; `auth_status(provider)` then says which source, if
any, still provides a key. Nothing here touches the network; a `!command` runs only when its key is requested.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from ...ai.catalogue import PROVIDER_ENDPOINTS
from ..paths import path_text
from . import selection
from .auth_file import AuthStorage
from .credentials import AuthStatus, Credentials
from .hosts import HOST_ONLY_PROVIDERS, build_host_model
from .models_json import MODELS_FILE, find_model, load_models_json
from .schema import ProviderEntry

if TYPE_CHECKING:
    from ...ai.types import Model
    from ..settings import Settings

AUTH_FILE = "auth.json"


class ModelRegistry:
    """Built-in and `models.json` models, credentials and model selection (see the module docstring).

    Model dicts returned here are shared with the registry: copy one before changing it.
    """

    def __init__(self, agent_dir: str | Path, *, auth: AuthStorage | None = None,
                 cli_api_key: str | None = None, cli_provider: str | None = None) -> None:
        self.agent_dir = Path(agent_dir)
        auth = auth if auth is not None else AuthStorage(self.agent_dir / AUTH_FILE)
        self.credentials = Credentials(auth, self.models_path, cli_api_key or None, cli_provider or None)
        self.errors: list[str] = []
        self._models: list[Model] = []
        self._provider_entries: dict[str, ProviderEntry] = {}
        self._host_model_ids: list[tuple[str, str]] = []  # models `host_model` built: kept across reloads
        self.reload()

    @property
    def models_path(self) -> Path:
        return self.agent_dir / MODELS_FILE

    @property
    def auth(self) -> AuthStorage:
        return self.credentials.auth

    @property
    def auth_path(self) -> Path:
        return self.auth.path

    @property
    def cli_api_key(self) -> str | None:
        """`--api-key`, or None."""
        return self.credentials.cli_api_key

    @property
    def cli_provider(self) -> str | None:
        """The provider `--api-key` is sent to; None: not bound yet (`initial_model` binds it)."""
        return self.credentials.cli_provider

    @cli_provider.setter
    def cli_provider(self, provider: str | None) -> None:
        self.credentials.cli_provider = provider

    @property
    def models(self) -> list[Model]:
        """Every known model in catalogue order (built-ins first, then `models.json` additions)."""
        return list(self._models)

    def reload(self) -> None:
        """Re-read `models.json` (errors replace the previous ones)."""
        config = load_models_json(self.models_path)
        self.errors, self._models, self._provider_entries = config.errors, config.models, config.provider_entries
        self.credentials.configure(config)
        for provider, model_id in self._host_model_ids:
            if self.find(provider, model_id) is None:
                self._models.append(self._build_host_model(provider, model_id))

    def find(self, provider: str, model_id: str) -> Model | None:
        """The model with exactly this provider and id (falling back to a case-insensitive match)."""
        return find_model(self._models, provider, model_id)

    def providers(self) -> list[str]:
        """Provider ids in catalogue order."""
        return list(dict.fromkeys(m["provider"] for m in self._models))

    def known_providers(self) -> list[str]:
        """Every provider id the agent can run or store a key for, in display order: the catalogue's
        (`providers()`: built-ins, then `models.json` providers), then the hosts without built-in models
        (`hosts.py` order: OpenRouter, Groq, ..., Ollama). The one list `Unknown provider` errors, `/login`
        and `/logout` name."""
        hosts = [provider for provider in PROVIDER_ENDPOINTS if provider in HOST_ONLY_PROVIDERS]
        return list(dict.fromkeys([*self.providers(), *hosts]))

    def known_provider(self, provider: str) -> str | None:
        """`provider` as `known_providers()` spells it (case-insensitive match), or None when it is unknown."""
        by_lower = {known.lower(): known for known in self.known_providers()}
        return by_lower.get(provider.lower()) if isinstance(provider, str) else None

    def of_provider(self, provider: str) -> list[Model]:
        """`provider`'s models (case-insensitive id), in catalogue order."""
        return [m for m in self._models if m["provider"].lower() == provider.lower()]

    def available_models(self) -> list[Model]:
        """Models with a configured credential, in catalogue order."""
        return [m for m in self._models if self.has_auth(m)]

    # -- hosts without built-in models --------------------------------------------------------------------

    def host_model(self, provider: str, model_id: str) -> Model | None:
        """`model_id` of a host in `HOST_ONLY_PROVIDERS`, for any id: the catalogue's model when there is one,
        else one built from the host's API, base URL and key variable (a `models.json` entry for the provider
        overrides them) with the `models.json` defaults, added to the catalogue. None for other providers or
        an empty id."""
        provider = provider.lower() if isinstance(provider, str) else provider
        if provider not in HOST_ONLY_PROVIDERS or not isinstance(model_id, str) or not model_id.strip():
            return None
        model_id = model_id.strip()
        existing = self.find(provider, model_id)
        if existing is not None:
            return existing
        model = self._build_host_model(provider, model_id)
        self._models.append(model)
        self._host_model_ids.append((provider, model_id))
        return model

    def is_host_default(self, model: Model) -> bool:
        """Whether `model` was built by `host_model` (its limits are defaults, not the host's real ones)."""
        return (model["provider"], model["id"]) in self._host_model_ids

    def _build_host_model(self, provider: str, model_id: str) -> Model:
        return build_host_model(provider, model_id, self._provider_entries.get(provider, {}))

    # -- credentials (`credentials.py`) --------------------------------------------------------------------

    def has_auth(self, model: Model) -> bool:
        """Whether a credential is configured for `model` (cheap: `!command` keys are not run here)."""
        return self.credentials.has_auth(model)

    def get_api_key(self, model: Model) -> str | None:
        """`Credentials.api_key`: the key for `model` now, a `!command` blocking the caller; None without one."""
        return self.credentials.api_key(model)

    async def resolve_api_key(self, model: Model) -> str | None:
        """`Credentials.api_key_async`: the key for a request (cancellable); raises `MissingApiKeyError` when
        a configured source failed and none gave a key."""
        return await self.credentials.api_key_async(model)

    def request_headers(self, model: Model) -> dict[str, str]:
        """`Credentials.request_headers`: `models.json` headers for `model`, resolved (never in model dicts)."""
        return self.credentials.request_headers(model)

    async def resolve_request_headers(self, model: Model) -> dict[str, str]:
        """`request_headers` for a request: `!command` values run as asyncio subprocesses (cancellable)."""
        return await self.credentials.request_headers_async(model)

    def auth_status(self, provider: str) -> AuthStatus:
        """`Credentials.auth_status`: where `provider`'s key would come from now (seed 003 `authStatus`)."""
        return self.credentials.auth_status(provider, self.of_provider(provider))

    def auth_error_message(self, model: Model) -> str:
        """Why `model` cannot run and how to fix it, naming the env var and the files to edit."""
        return self.credentials.auth_error_message(model)

    def logout(self, provider: str) -> bool:
        """Delete `provider`'s `auth.json` credential and reload the catalogue; False when none was stored.

        Environment variables and `models.json` keys are left alone. Raises `AuthFileError` for an `auth.json`
        it cannot parse (it is not overwritten) and `OSError` when it cannot be written.
        """
        removed = self.auth.remove(provider)
        self.reload()
        return removed

    # -- selection (`selection.py`) ------------------------------------------------------------------------

    def resolve_model_pattern(self, pattern: str, provider: str | None = None) -> selection.Resolved:
        """`selection.resolve_model_pattern`: a `--model` pattern to `(model, thinking_level, error)`."""
        return selection.resolve_model_pattern(self, pattern, provider)

    def initial_model(self, *, provider: str | None = None, model_pattern: str | None = None,
                      settings: Settings | None = None, thinking: str | None = None,
                      scope: selection.Scope | None = None) -> tuple[Model | None, str, list[str]]:
        """`selection.initial_model`: the start-up model, its thinking level, and warnings for the user.

        `--api-key` without `--provider` is bound to the chosen model's provider, so it is never sent to
        another provider after a model switch.
        """
        model, level, warnings = selection.initial_model(self, provider=provider, model_pattern=model_pattern,
                                                         settings=settings, thinking=thinking, scope=scope)
        if model is not None and self.cli_api_key and self.cli_provider is None:
            self.cli_provider = model["provider"]
        return model, level, warnings

    # -- messages ------------------------------------------------------------------------------------------

    def errors_note(self) -> str:
        """A sentence to add to "no model available" messages when `models.json` had problems, else ""."""
        if not self.errors:
            return ""
        more = f" (and {len(self.errors) - 1} more problem(s))" if len(self.errors) > 1 else ""
        first = re.sub(r"^:(\d+): ", r"line \1: ", self.errors[0].removeprefix(path_text(self.models_path)))
        first = first.removeprefix(": ")
        return f" {path_text(self.models_path)} had errors, so some of its models may have been skipped: {first}{more}."

    def explain_missing(self, message: str) -> str:
        """`message` (a model or provider that was not found) followed by every `models.json` problem, one per
        line, since the model may be one the file failed to add; `message` alone when the file had none."""
        if not self.errors:
            return message
        return "\n".join([f"{message}. {path_text(self.models_path)} has problems, so some of its models were "
                          "not loaded:",
                          *(f"  {error}" for error in self.errors)])
