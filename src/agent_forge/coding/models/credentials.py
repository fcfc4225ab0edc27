"""Which credential and headers a model's requests use, and why a model has none.

API keys, first match wins: `--api-key` (bound to one provider, see `cli_provider`), then `auth.json`
(`auth_file.py`), then the provider's environment variable (`PROVIDER_ENV_KEYS`), then the provider's
`models.json` `apiKey`. A source that fails (a `!command` exiting non-zero, a `$VAR` that is unset) is skipped
and its reason shows in `auth_error_message`. The agent asks once per model request (`Agent` builds a
request's options once): an `auth.json` `!command` then runs at most once per process (cached, as the
reference does), a `models.json` `apiKey` or header `!command` at most once per request (so a short-lived token
is fetched fresh).

Keyless local servers (`compat.apiKeyRequired: false`, see `models_json.py`) count as authenticated, and get no
key unless one is configured somewhere, so provider modules send no credential at all rather than a made-up one.

The lookups are written once (`key_values.KeyLookup`); the synchronous methods (`api_key`, `request_headers`)
and the asynchronous ones a request uses (`api_key_async`, `request_headers_async`: cancellable) differ only in
how a `!command` runs. Nothing here touches the network; a `!command` runs only when its key is requested.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypedDict

from ...ai.catalogue import CONTEXT_WINDOW_HEADERS, PROVIDER_ENV_KEYS
from ...ai.transport_errors import header_value_problem
from ..paths import path_text
from .auth_file import AuthStorage
from .key_values import (KeyLookup, KeyOutcome, key_value_configured, key_value_lookup, outcome_without_running,
                         run_lookup, run_lookup_async)
from .models_json import HeaderKey, ModelsConfig

if TYPE_CHECKING:
    from ...ai.types import Model

KeySource = KeyOutcome | KeyLookup[KeyOutcome]
"""One place a key may come from: its outcome when known without running anything, else its lookup."""


# The functional form takes the field types as objects: the class form would hold them as text here (`from
# __future__ import annotations`) and compile each (`ai.hosts.Host`).
AuthStatus = TypedDict("AuthStatus", {"configured": bool, "source": Literal["runtime", "auth.json", "environment",
                                                                           "models.json"], "label": str}, total=False)
AuthStatus.__doc__ = """Where a provider's key would come from now (seed 003, `logout_provider.authStatus`):
`configured`, and for a configured one the first `source` in lookup order with its `label` (a flag, path or
variable)."""


class Credentials:
    """The credential sources of one registry; `configure` gives it each new `models.json` read.

    `cli_api_key`: `--api-key`; `cli_provider`: the only provider it is sent to (None: any, until the
    registry binds it to the start-up model's provider).
    """

    def __init__(self, auth: AuthStorage, models_path: Path, cli_api_key: str | None = None,
                 cli_provider: str | None = None) -> None:
        self.auth = auth
        self.models_path = models_path
        self.cli_api_key = cli_api_key
        self.cli_provider = cli_provider
        self._provider_keys: dict[str, str] = {}
        self._headers: dict[HeaderKey, dict[str, str]] = {}
        self._problems: dict[str, list[str]] = {}  # provider -> how its configured sources failed last time
        self._unusable: dict[str, str] = {}  # provider -> why its first key cannot be sent (last lookup)

    def configure(self, config: ModelsConfig) -> None:
        """Use the `apiKey`s and headers of a new `models.json` read."""
        self._provider_keys, self._headers = config.provider_keys, config.headers

    def has_auth(self, model: Model) -> bool:
        """Whether a credential is configured for `model` (cheap: `!command` keys are not run here)."""
        provider = model["provider"]
        env_name = PROVIDER_ENV_KEYS.get(provider)
        return (self._cli_key_applies(provider)
                or self.auth.has_api_key(provider)
                or bool(env_name and os.environ.get(env_name))
                or key_value_configured(self._provider_keys.get(provider))
                or (model.get("compat") or {}).get("apiKeyRequired") is False)

    def api_key(self, model: Model) -> str | None:
        """The API key for `model`'s provider, resolved now (a `!command` blocks the caller).

        None when no source yields a key (then `auth_error_message` says why), and for keyless models
        without a configured key.
        """
        return run_lookup(self._key_lookup(model["provider"]))

    async def api_key_async(self, model: Model) -> str | None:
        """`api_key` for a request: `!command` keys run as asyncio subprocesses (an abort cancels them).

        Raises `MissingApiKeyError` (text: `auth_error_message`) when a configured source failed and none gave
        a key, so the request fails saying why (a command's exit status and stderr), not "no key"."""
        key = await run_lookup_async(self._key_lookup(model["provider"]))
        unusable = self._unusable.get(model["provider"])
        if key is None and unusable:
            from ...ai.errors import MissingApiKeyError

            raise MissingApiKeyError(unusable)
        if key is None and self._problems.get(model["provider"]):
            from ...ai.errors import MissingApiKeyError

            raise MissingApiKeyError(self.auth_error_message(model))
        return key

    def _key_lookup(self, provider: str) -> KeyLookup[str | None]:
        """The first key of `provider`'s sources; records (or clears) how the configured ones failed."""
        problems: list[str] = []
        self._unusable.pop(provider, None)
        for label, source in self._key_sources(provider):
            key, problem = source if isinstance(source, tuple) else (yield from source)
            unsendable = header_value_problem(key) if key else None
            if unsendable:  # the first key found is the one meant: a later source must not stand in for it
                self._unusable[provider] = (
                    f'The API key for provider "{provider}" from {path_text(label)} cannot be sent: it '
                    f"{unsendable}, which an HTTP header cannot carry (the key is not shown). Correct it there"
                    f"{' (or /login again)' if label == str(self.auth.path) else ''}.")
                self._problems[provider] = [f"{path_text(label)}: the key {unsendable}"]
                return None
            if key:
                self._problems.pop(provider, None)
                return key
            if problem:
                problems.append(f"{path_text(label)}: {problem}")
        self._problems[provider] = problems
        return None

    def _key_sources(self, provider: str) -> Iterator[tuple[str, KeySource]]:
        """`(label, source)` in lookup order (see the module docstring); each made only when reached."""
        if self._cli_key_applies(provider):
            yield "--api-key", (self.cli_api_key, None)
        yield str(self.auth.path), self.auth.key_lookup(provider)
        env_name = PROVIDER_ENV_KEYS.get(provider)
        if env_name:
            yield env_name, (os.environ.get(env_name) or None, None)
        if provider in self._provider_keys:
            yield f"{self.models_path} apiKey", key_value_lookup(self._provider_keys[provider])

    def _cli_key_applies(self, provider: str) -> bool:
        return bool(self.cli_api_key) and self.cli_provider in (None, provider)

    def request_headers(self, model: Model) -> dict[str, str]:
        """`models.json` headers for `model` (provider's, then the model's), values resolved like `apiKey`.

        They are kept out of the model dict so secrets never reach `get_state` or session files; pass the
        result as `StreamOptions.headers`. A value that cannot be resolved (an unset `$VAR`, a failing
        `!command`) or sent raises `AIError` naming the header and why (the request is not sent). A selected context
        window that needs a flag (`CONTEXT_WINDOW_HEADERS`) adds it; a configured `anthropic-beta` list is
        extended, not replaced.
        """
        return run_lookup(self._headers_lookup(model))

    async def request_headers_async(self, model: Model) -> dict[str, str]:
        """`request_headers` with `!command` values run as asyncio subprocesses (cancellable)."""
        return await run_lookup_async(self._headers_lookup(model))

    def _headers_lookup(self, model: Model) -> KeyLookup[dict[str, str]]:
        raw = {**self._headers.get((model["provider"], None), {}),
               **self._headers.get((model["provider"], model["id"]), {})}
        headers = {}
        for name, value in raw.items():
            resolved, reason = yield from key_value_lookup(value)
            unsendable = header_value_problem(resolved) if resolved is not None else None
            if unsendable or resolved is None:  # sent without it, the request would fail less clearly
                from ...ai.errors import AIError

                problem = f"{unsendable}, so the request was not sent (the value is not shown)" if unsendable \
                    else f"cannot be resolved: {reason or 'the value is empty'}, so the request was not sent"
                raise AIError(f"{path_text(self.models_path)}: the value of header {name!r} for provider "
                              f'"{model["provider"]}" {problem}')
            headers[name] = resolved
        return _with_context_window_headers(headers, model)

    def auth_status(self, provider: str, models: list[Model]) -> AuthStatus:
        """Where `provider`'s key would come from now; `models`: the provider's models (keyless ones count
        as configured by `models.json`).

        `{"configured": False}`, or `{"configured": True, "source": s, "label": l}` with the first source in
        lookup order: `"runtime"` (`--api-key`), `"auth.json"` (label: its path), `"environment"` (label: the
        variable), `"models.json"` (label: its path; also for keyless local servers).
        """
        env_name = PROVIDER_ENV_KEYS.get(provider)
        keyless = any((m.get("compat") or {}).get("apiKeyRequired") is False for m in models)
        sources: tuple[tuple[Literal["runtime", "auth.json", "environment", "models.json"], str | None, bool], ...]
        sources = (
            ("runtime", "--api-key", self._cli_key_applies(provider)),
            ("auth.json", str(self.auth.path), self.auth.has_api_key(provider)),
            ("environment", env_name, bool(env_name and os.environ.get(env_name))),
            ("models.json", str(self.models_path),
             keyless or key_value_configured(self._provider_keys.get(provider))),
        )
        for source, label, configured in sources:
            if configured and label is not None:
                return {"configured": True, "source": source, "label": label}
        return {"configured": False}

    def auth_error_message(self, model: Model) -> str:
        """Why `model` cannot run and how to fix it, naming the env var and the files to edit."""
        provider = model["provider"]
        env_name = PROVIDER_ENV_KEYS.get(provider)
        first = (f"Set {env_name}" if env_name else
                 f'Set "apiKey" for provider "{provider}" in {path_text(self.models_path)}')
        problems = self._problems.get(provider) or self._known_problems(provider)
        reason = f": {'; '.join(problems)}." if problems else "."  # how a configured key failed, first
        unusable = self.auth.unusable_reason(provider)
        where = path_text(self.auth.path) + (f" (unusable now: {unusable})" if unusable else "")
        return f'No API key for provider "{provider}"{reason} {first}, add it to {where}, or pass --api-key.'


    def _known_problems(self, provider: str) -> list[str]:
        """How `provider`'s configured sources fail as far as is known without running a `!command` (a `$VAR`
        that is unset, an empty key), for a message written before any lookup ran (`has_auth` was False)."""
        problems = []
        for label, source in self._key_sources(provider):
            outcome = source if isinstance(source, tuple) else outcome_without_running(source)
            if outcome is not None and outcome[1]:
                problems.append(f"{path_text(label)}: {outcome[1]}")
        return problems


def _with_context_window_headers(headers: dict[str, str], model: Model) -> dict[str, str]:
    extra = CONTEXT_WINDOW_HEADERS.get((model["provider"], int(model.get("contextWindow") or 0)), {})
    merged = dict(headers)
    for name, value in extra.items():
        current = next((k for k in merged if k.lower() == name.lower()), None)
        if current is None:
            merged[name] = value
        elif value not in [v.strip() for v in merged[current].split(",")]:
            merged[current] = f"{merged[current]},{value}"
    return merged
