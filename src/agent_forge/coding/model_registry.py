"""The models the agent can use (built-ins plus `models.json`), their credentials, and model selection.

`models.json` (`<agent dir>/models.json`) keeps the reference agent's schema (`models-configuration.md`):
`{"providers": {"<id>": {baseUrl, api, apiKey, headers, compat, models: [...], modelOverrides: {...}}}}`.
A built-in provider id changes that provider (its `baseUrl`, `compat` and `headers` apply to its built-in
models); any other id adds a provider and needs `api` and `baseUrl` (at provider or model level, or known
from `PROVIDER_ENDPOINTS`). A `models` entry adds a model or replaces the one with the same id; a
`modelOverrides` entry merges into an existing model (object fields key by key). Problems go to `errors` as
`<path>:<line>: <where>: <problem>` (the line of the offending key; a file that cannot be parsed at all gives
`<path>: invalid JSON at line L column C: ...`); the offending provider or model is skipped, the rest still loads.
Reported too, though nothing is skipped: an `api` no built-in module serves (a plugin may register it later),
a duplicate model id within a provider, a provider that is neither known nor adds models, a number out of range
(`config_values.py`: removed, so the default applies), a `baseUrl` ending in an endpoint path the provider module
appends (`ENDPOINT_SUFFIXES`: removed), and an empty file. The file is read
through `safe_read.py` (a regular file of at most 1 MB, JSON nested at most 64 levels).

Hosts without built-in models (`HOST_ONLY_PROVIDERS`: Groq, OpenRouter, Ollama, ...) accept any model id,
built from the host's data with the `models.json` defaults (`host_model`).

API keys, first match wins (`get_api_key`): `--api-key`, then `auth.json`, then the provider's environment
variable (`PROVIDER_ENV_KEYS`), then the provider's `models.json` `apiKey`. A source that fails (a `!command`
exiting non-zero, a `$VAR` that is unset) is skipped and its reason shows in `auth_error_message`. The agent
asks once per model request (`Agent` builds a request's options once): an `auth.json` `!command` then runs at
most once per process (cached, as the reference does), a `models.json` `apiKey` or header `!command` at most
once per request (so a short-lived token is fetched fresh).

Keyless local servers: a `models.json` provider that is not a known hosted provider and has no `apiKey`
(the Ollama / LM Studio / vLLM case) gets `compat.apiKeyRequired: false` on its models. Such models count as
authenticated, and `get_api_key` returns None for them unless a key is configured somewhere, so provider
modules send no credential at all rather than a made-up one.

`logout(provider)` deletes only the `auth.json` credential; `auth_status(provider)` then says which source, if
any, still provides a key. Nothing here touches the network; a `!command` runs only when its key is requested.
"""

from __future__ import annotations

import copy
import inspect
import json
import os
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..ai.catalogue import (
    BUILTIN_MODELS,
    CONTEXT_WINDOW_HEADERS,
    PROVIDER_ENDPOINTS,
    PROVIDER_ENV_KEYS,
    clamp_thinking_level,
    default_thinking_level,
)
from ..ai.registry import known_apis
from ..ai.types import THINKING_LEVELS, Model
from .auth import AuthStorage, explain_key_value, key_value_configured, resolve_key_value_async
from .config_values import OUT_OF_RANGE, drop_out_of_range, is_number, is_positive_int
from .safe_read import ConfigFileError, read_json_document

MODELS_FILE = "models.json"
AUTH_FILE = "auth.json"
DEFAULT_CONTEXT_WINDOW = 128_000
DEFAULT_MAX_TOKENS = 16_384

_DATED_ID = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")
_PASSTHROUGH = ("thinkingLevelMap", "thinkingLevels", "inputLimits", "promptCache", "samplingParams",
                "samplingParamsByThinkingLevel", "defaultContextWindow", "contextWindowOptions")

HOST_ONLY_PROVIDERS = frozenset(p for p in PROVIDER_ENDPOINTS if p not in {m["provider"] for m in BUILTIN_MODELS})
"""Known hosts without built-in models (OpenRouter, Groq, Together, Fireworks, Ollama, ...): their model lists
change too often to ship, so `--provider <host> --model <any id>` builds the model from the host's data
(`host_model`), and `models.json` may describe the ones a user wants in more detail."""

KeyResult = tuple[str | None, str | None]
Scope = Sequence[tuple[Model, str | None]]
"""Scoped models (`--models`, settings `enabledModels`) as `(model, pinned thinking level or None)` pairs."""


def _nonempty_str(v: Any) -> bool:
    return isinstance(v, str) and bool(v.strip())


_positive = is_positive_int


def _str_map(v: Any) -> bool:
    return isinstance(v, dict) and all(isinstance(x, str) for x in v.values())


def _cost(v: Any) -> bool:
    prices = ("input", "output", "cacheRead", "cacheWrite")
    return isinstance(v, dict) and all(is_number(v.get(k, 0)) and v.get(k, 0) >= 0 for k in prices)


def _levels(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(x in THINKING_LEVELS for x in v)


def _level_map(v: Any) -> bool:
    return isinstance(v, dict) and all(k in THINKING_LEVELS and (x is None or isinstance(x, (str, int)))
                                       for k, x in v.items())


def _windows(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(_positive(x) for x in v)


def _by_level(v: Any) -> bool:
    return isinstance(v, dict) and all(k in THINKING_LEVELS and isinstance(x, dict) for k, x in v.items())


# Field -> (check, expectation). Shared by provider entries, model entries and overrides.
_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "id": (_nonempty_str, "a non-empty string"),
    "name": (_nonempty_str, "a non-empty string"),
    "api": (_nonempty_str, "a non-empty string"),
    "baseUrl": (_nonempty_str, "a non-empty string"),
    "apiKey": (_nonempty_str, "a non-empty string"),
    "reasoning": (lambda v: isinstance(v, bool), "true or false"),
    "input": (lambda v: isinstance(v, list) and bool(v) and all(x in ("text", "image") for x in v),
              'a list of "text" and "image"'),
    "contextWindow": (_positive, "a positive integer (tokens)"),
    "maxTokens": (_positive, "a positive integer (tokens)"),
    "defaultContextWindow": (_positive, "a positive integer (tokens)"),
    "contextWindowOptions": (_windows, "a list of positive integers (tokens)"),
    "cost": (_cost, "an object of non-negative prices (input, output, cacheRead, cacheWrite)"),
    "headers": (_str_map, "an object of string header values"),
    "compat": (lambda v: isinstance(v, dict), "an object"),
    "models": (lambda v: isinstance(v, list), "a list of model objects"),
    "modelOverrides": (lambda v: isinstance(v, dict), "an object keyed by model id"),
    "thinkingLevels": (_levels, "a list of thinking levels"),
    "thinkingLevelMap": (_level_map, "an object of thinking level -> value or null"),
    "samplingParams": (lambda v: isinstance(v, dict), 'an object of request fields, e.g. {"temperature": 0}'),
    "samplingParamsByThinkingLevel": (_by_level, "an object of thinking level -> object of request fields"),
}


def _http_url(v: str) -> bool:
    try:
        parts = urlsplit(v.strip())
    except ValueError:  # e.g. an unbalanced "[" in the host part
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def _valid_port(v: str) -> bool:
    try:
        port = urlsplit(v.strip()).port  # raises ValueError for a port that is not a number in 0-65535
    except ValueError:
        return False
    return port != 0  # reserved: nothing can be reached there (the request-time check in ai/transport_errors)


# Checks of a value that already has the right type (run after `_CHECKS`), in order.
_VALUE_CHECKS: list[tuple[str, Callable[[Any], bool], str]] = [
    ("baseUrl", _http_url, "an http:// or https:// URL such as http://localhost:11434/v1"),
    ("baseUrl", _valid_port, "a URL whose port is a number from 1 to 65535"),
]

ENDPOINT_SUFFIXES = ("/chat/completions", "/responses", "/v1/messages")
"""Paths the provider modules append to `baseUrl` (openai-completions, openai-responses, anthropic-messages): a
`baseUrl` that already ends in one was copied from an endpoint's documentation, and would be doubled."""


def _problem(entry: dict[str, Any]) -> tuple[str, str] | None:
    """`(key, message)` of the first field of `entry` that fails its check, or None."""
    checks = [(key, check, expected) for key, (check, expected) in _CHECKS.items()] + _VALUE_CHECKS
    for key, check, expected in checks:
        if key in entry and not check(entry[key]):
            return key, f'"{key}" must be {expected}, got {json.dumps(entry[key])[:80]}'
    return None


_MISSING = object()
Where = tuple[str | int, ...]
"""Where a problem is in `models.json`: keys and indexes from the top, `("providers", "local", "models", 0)`."""


def _dotted(where: Where) -> str:
    """`("providers", "local", "models", 0)` -> `providers.local.models[0]`."""
    text = ""
    for part in where:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _merge(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        return {**base, **{k: _merge(base.get(k), v) for k, v in over.items()}}
    return copy.deepcopy(over)


class ModelRegistry:
    """Built-in and `models.json` models, credentials and model selection (see the module docstring).

    Model dicts returned here are shared with the registry: copy one before changing it.
    """

    def __init__(self, agent_dir: str | Path, *, auth: AuthStorage | None = None,
                 cli_api_key: str | None = None, cli_provider: str | None = None) -> None:
        self.agent_dir = Path(agent_dir)
        self.auth = auth if auth is not None else AuthStorage(self.agent_dir / AUTH_FILE)
        self.cli_api_key = cli_api_key or None
        self.cli_provider = cli_provider or None
        self.errors: list[str] = []
        self._models: list[Model] = []
        self._provider_keys: dict[str, str] = {}
        self._headers: dict[tuple[str, str | None], dict[str, str]] = {}
        self._key_problems: dict[str, list[str]] = {}
        self._provider_entries: dict[str, dict[str, Any]] = {}
        self._host_model_ids: list[tuple[str, str]] = []  # models `host_model` built: kept across reloads
        self.reload()

    @property
    def models_path(self) -> Path:
        return self.agent_dir / MODELS_FILE

    @property
    def auth_path(self) -> Path:
        return self.auth.path

    @property
    def models(self) -> list[Model]:
        """Every known model in catalogue order (built-ins first, then `models.json` additions)."""
        return list(self._models)

    def reload(self) -> None:
        """Re-read `models.json` (errors replace the previous ones)."""
        self.errors = []
        self._models = copy.deepcopy(BUILTIN_MODELS)
        self._provider_keys, self._headers, self._provider_entries = {}, {}, {}
        self._text = ""
        providers = self._read_models_file()
        for provider_id, entry in providers.items():
            self._apply_provider(provider_id, entry)
        for provider, model_id in self._host_model_ids:
            if self.find(provider, model_id) is None:
                self._models.append(self._build_host_model(provider, model_id))

    def find(self, provider: str, model_id: str) -> Model | None:
        """The model with exactly this provider and id (falling back to a case-insensitive match)."""
        if not isinstance(provider, str) or not isinstance(model_id, str):
            return None
        for same in (lambda a, b: a == b, lambda a, b: a.lower() == b.lower()):
            for model in self._models:
                if same(model["provider"], provider) and same(model["id"], model_id):
                    return model
        return None

    def providers(self) -> list[str]:
        """Provider ids in catalogue order."""
        return list(dict.fromkeys(m["provider"] for m in self._models))

    # -- models.json -------------------------------------------------------------------------------------

    def _read_models_file(self) -> dict[str, Any]:
        try:
            data, self._text = read_json_document(self.models_path, if_blank=_MISSING)
        except FileNotFoundError:
            return {}
        except ConfigFileError as exc:
            return self._file_error(str(exc))
        if data is _MISSING:
            return self._file_error('the file is empty (write {"providers": {}} for no custom models)')
        for where in drop_out_of_range(data):
            self._error(tuple(where), f"{OUT_OF_RANGE}; the default is used")
        if not isinstance(data, dict):
            return self._file_error("expected a JSON object with a \"providers\" object")
        providers = data.get("providers", {})
        if not isinstance(providers, dict):
            return self._file_error('"providers" must be an object keyed by provider id')
        return providers

    def _file_error(self, message: str) -> dict[str, Any]:
        self.errors.append(f"{self.models_path}: {message}; custom models ignored, built-in models still work")
        return {}

    def _error(self, where: Where, message: str, key: str | None = None) -> None:
        """Record a problem as `<path>:<line>: <where>: <message>`; the line is that of `key` inside `where`
        (of `where` itself without a key)."""
        from .json_locate import locate  # only when there is something to report

        position = locate(self._text, (*where, key) if key else where)
        line = f":{position[0]}" if position else ""
        self.errors.append(f"{self.models_path}{line}: {_dotted(where)}: {message}")

    def _strip_endpoint(self, entry: dict[str, Any], where: Where) -> None:
        """Drop a known endpoint path (`ENDPOINT_SUFFIXES`) from the end of `entry`'s `baseUrl`, saying so."""
        url = entry.get("baseUrl")
        suffix = next((s for s in ENDPOINT_SUFFIXES if isinstance(url, str) and url.rstrip("/").endswith(s)), None)
        if suffix is None:
            return
        entry["baseUrl"] = url.rstrip("/").removesuffix(suffix)
        self._error(where, f'"baseUrl" ends in "{suffix}", a path the agent appends itself; using '
                           f'"{entry["baseUrl"]}" (write that to silence this warning)', "baseUrl")

    def _apply_provider(self, provider: str, entry: Any) -> None:
        where: Where = ("providers", provider)
        if not isinstance(entry, dict):
            return self._error(where, "must be an object")
        problem = _problem(entry)
        if problem:
            return self._error(where, f"{problem[1]}; provider skipped", problem[0])
        self._strip_endpoint(entry, where)
        existing = [m for m in self._models if m["provider"] == provider]
        self._check_provider(provider, entry, bool(existing), where)
        self._provider_entries[provider] = entry
        self._change_builtin_provider(existing, entry)
        if "apiKey" in entry:
            self._provider_keys[provider] = entry["apiKey"]
        if entry.get("headers"):
            self._headers[(provider, None)] = dict(entry["headers"])
        keyless = not existing and provider not in PROVIDER_ENV_KEYS and "apiKey" not in entry
        for index, model_entry in enumerate(entry.get("models", [])):
            self._add_model(provider, entry, existing, model_entry, (*where, "models", index), keyless)
        for model_id, override in entry.get("modelOverrides", {}).items():
            self._override_model(provider, model_id, override, (*where, "modelOverrides", model_id))

    def _check_provider(self, provider: str, entry: dict[str, Any], builtin: bool, where: Where) -> None:
        """Problems that skip nothing but would surface only at the first request (or never)."""
        self._check_api(entry, where)
        if not entry.get("models") and not builtin and provider not in PROVIDER_ENDPOINTS:
            self._error(where, 'adds no models ("models" is missing or empty) and is not a built-in provider, '
                               "so it has no effect")
        seen: dict[str, int] = {}
        for index, model_entry in enumerate(entry.get("models", [])):
            model_id = model_entry.get("id") if isinstance(model_entry, dict) else None
            if isinstance(model_id, str) and model_id in seen:
                self._error((*where, "models", index), f'duplicate model id "{model_id}" (also '
                                                       f"models[{seen[model_id]}]); this later entry is used", "id")
            elif isinstance(model_id, str):
                seen[model_id] = index

    def _check_api(self, entry: dict[str, Any], where: Where) -> None:
        api = entry.get("api")
        if isinstance(api, str) and api not in known_apis():
            self._error(where, f'"api" "{api}" is not a known API ({", ".join(known_apis())}); requests to its '
                               "models fail unless a plugin provides it", "api")

    def _change_builtin_provider(self, existing: list[Model], entry: dict[str, Any]) -> None:
        for model in existing:
            if "baseUrl" in entry:
                model["baseUrl"] = entry["baseUrl"]
            if "compat" in entry:
                model["compat"] = _merge(model.get("compat") or {}, entry["compat"])

    def _add_model(self, provider: str, pentry: dict[str, Any], existing: list[Model], entry: Any,
                   where: Where, keyless: bool) -> None:
        if not isinstance(entry, dict):
            return self._error(where, "must be an object with an \"id\"")
        problem = _problem(entry) or (None if "id" in entry else (None, '"id" is required'))
        if problem:
            return self._error(where, f"{problem[1]}; model skipped", problem[0])
        self._strip_endpoint(entry, where)
        self._check_api(entry, where)
        endpoint = PROVIDER_ENDPOINTS.get(provider, (None, None))
        api = entry.get("api") or pentry.get("api") or (existing[0]["api"] if existing else endpoint[0])
        base_url = entry.get("baseUrl") or pentry.get("baseUrl") or (
            existing[0]["baseUrl"] if existing else endpoint[1])
        if not api or not base_url:
            missing = '"api"' if not api else '"baseUrl"'
            return self._error(where, f"{missing} is required (on the model or its provider); model skipped")
        model = _build_model(provider, api, base_url, pentry, entry, keyless)
        if entry.get("headers"):
            self._headers[(provider, model["id"])] = dict(entry["headers"])
        self._replace_or_append(model)

    def _replace_or_append(self, model: Model) -> None:
        for index, current in enumerate(self._models):
            if current["provider"] == model["provider"] and current["id"] == model["id"]:
                self._models[index] = model
                return
        self._models.append(model)

    def _override_model(self, provider: str, model_id: str, override: Any, where: Where) -> None:
        if not isinstance(override, dict):
            return self._error(where, "must be an object")
        problem = _problem({k: v for k, v in override.items() if k not in ("id", "models")})
        if problem:
            return self._error(where, f"{problem[1]}; override skipped", problem[0])
        model = self.find(provider, model_id)
        if model is None:
            return  # documented: overrides for unknown ids are ignored
        for key, value in override.items():
            if key in ("id", "provider", "api", "baseUrl", "apiKey"):
                continue
            if key == "headers":
                self._headers[(provider, model_id)] = {**self._headers.get((provider, model_id), {}), **value}
            else:
                model[key] = _merge(model.get(key), value)  # type: ignore[literal-required]

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
        entry = self._provider_entries.get(provider, {})
        api, base_url = PROVIDER_ENDPOINTS[provider]
        keyless = provider not in PROVIDER_ENV_KEYS and "apiKey" not in entry
        return _build_model(provider, entry.get("api") or api, entry.get("baseUrl") or base_url, entry,
                            {"id": model_id}, keyless)

    def _host_pattern(self, pattern: str, provider: str | None) -> tuple[Model | None, str | None]:
        """`(model, level)` for `--provider <host> --model <id>` or `--model <host>/<id>` (see `host_model`);
        a `:<thinking level>` suffix is split off, any other `:` stays in the id (`qwen2.5-coder:7b`)."""
        if provider is None:
            head, sep, tail = pattern.partition("/")
            provider, pattern = (head, tail) if sep and head.lower() in HOST_ONLY_PROVIDERS else (None, pattern)
        if provider is None or provider.lower() not in HOST_ONLY_PROVIDERS:
            return None, None
        head, sep, suffix = pattern.rpartition(":")
        if sep and head and suffix in THINKING_LEVELS:
            return self.host_model(provider, head), suffix
        return self.host_model(provider, pattern), None

    # -- credentials -------------------------------------------------------------------------------------

    def has_auth(self, model: Model) -> bool:
        """Whether a credential is configured for `model` (cheap: `!command` keys are not run here)."""
        provider = model["provider"]
        env_name = PROVIDER_ENV_KEYS.get(provider)
        return (self._cli_key_applies(provider)
                or self.auth.has_api_key(provider)
                or bool(env_name and os.environ.get(env_name))
                or key_value_configured(self._provider_keys.get(provider))
                or (model.get("compat") or {}).get("apiKeyRequired") is False)

    def get_api_key(self, model: Model) -> str | None:
        """The API key for `model`'s provider, resolved now (runs a `!command` if one is configured).

        None when no source yields a key (then `auth_error_message` says why), and for keyless models
        without a configured key.
        """
        provider = model["provider"]
        problems: list[str] = []
        for label, resolve in self._key_sources(provider):
            key, problem = resolve()
            if key:
                self._key_problems.pop(provider, None)
                return key
            if problem:
                problems.append(f"{label}: {problem}")
        self._key_problems[provider] = problems
        return None

    async def resolve_api_key(self, model: Model) -> str | None:
        """`get_api_key` for a request: `!command` keys run as asyncio subprocesses (an abort cancels them).

        Raises `MissingApiKeyError` (text: `auth_error_message`) when a configured source failed and none gave
        a key, so the request fails saying why (a command's exit status and stderr), not "no key"."""
        provider = model["provider"]
        problems: list[str] = []
        for label, resolve in self._key_sources(provider, asynchronous=True):
            result = resolve()
            key, problem = await result if inspect.isawaitable(result) else result
            if key:
                self._key_problems.pop(provider, None)
                return key
            if problem:
                problems.append(f"{label}: {problem}")
        self._key_problems[provider] = problems
        if problems:
            from ..ai.errors import MissingApiKeyError

            raise MissingApiKeyError(self.auth_error_message(model))
        return None

    async def resolve_request_headers(self, model: Model) -> dict[str, str]:
        """`request_headers` with `!command` values run as asyncio subprocesses (cancellable)."""
        raw = {**self._headers.get((model["provider"], None), {}),
               **self._headers.get((model["provider"], model["id"]), {})}
        headers = {}
        for name, value in raw.items():
            resolved = (await resolve_key_value_async(value))[0]
            if resolved is not None:
                headers[name] = resolved
        return _with_context_window_headers(headers, model)

    def _key_sources(self, provider: str, asynchronous: bool = False) -> Iterator[tuple[str, Callable[[], Any]]]:
        """(label, resolver) in `get_api_key` order; `asynchronous`: command keys resolve via awaitables."""
        if self._cli_key_applies(provider):
            yield "--api-key", lambda: (self.cli_api_key, None)
        auth_key = self.auth.api_key_async if asynchronous else self.auth.api_key
        yield str(self.auth_path), lambda: auth_key(provider)
        env_name = PROVIDER_ENV_KEYS.get(provider)
        if env_name:
            yield env_name, lambda: (os.environ.get(env_name) or None, None)
        if provider in self._provider_keys:
            explain = resolve_key_value_async if asynchronous else explain_key_value
            yield f"{self.models_path} apiKey", lambda: explain(self._provider_keys[provider])

    def _cli_key_applies(self, provider: str) -> bool:
        return bool(self.cli_api_key) and self.cli_provider in (None, provider)

    def request_headers(self, model: Model) -> dict[str, str]:
        """`models.json` headers for `model` (provider's, then the model's), values resolved like `apiKey`.

        They are kept out of the model dict so secrets never reach `get_state` or session files; pass the
        result as `StreamOptions.headers`. A value that cannot be resolved is left out. A selected context
        window that needs a flag (`CONTEXT_WINDOW_HEADERS`) adds it; a configured `anthropic-beta` list is
        extended, not replaced.
        """
        raw = {**self._headers.get((model["provider"], None), {}),
               **self._headers.get((model["provider"], model["id"]), {})}
        resolved = {name: explain_key_value(value)[0] for name, value in raw.items()}
        headers = {name: value for name, value in resolved.items() if value is not None}
        return _with_context_window_headers(headers, model)

    def auth_error_message(self, model: Model) -> str:
        """Why `model` cannot run and how to fix it, naming the env var and the files to edit."""
        provider = model["provider"]
        env_name = PROVIDER_ENV_KEYS.get(provider)
        first = f"Set {env_name}" if env_name else f'Set "apiKey" for provider "{provider}" in {self.models_path}'
        problems = self._key_problems.get(provider) or []
        reason = f": {'; '.join(problems)}." if problems else "."  # how a configured key failed, first
        return (f'No API key for provider "{provider}"{reason} {first}, add it to {self.auth_path}, '
                f"or pass --api-key.")

    def errors_note(self) -> str:
        """A sentence to add to "no model available" messages when `models.json` had problems, else ""."""
        if not self.errors:
            return ""
        more = f" (and {len(self.errors) - 1} more problem(s))" if len(self.errors) > 1 else ""
        first = re.sub(r"^:(\d+): ", r"line \1: ", self.errors[0].removeprefix(str(self.models_path)))
        first = first.removeprefix(": ")
        return f" {self.models_path} had errors, so some of its models may have been skipped: {first}{more}."

    def explain_missing(self, message: str) -> str:
        """`message` (a model or provider that was not found) followed by every `models.json` problem, one per
        line, since the model may be one the file failed to add; `message` alone when the file had none."""
        if not self.errors:
            return message
        return "\n".join([f"{message}. {self.models_path} has problems, so some of its models were not loaded:",
                          *(f"  {error}" for error in self.errors)])

    def available_models(self) -> list[Model]:
        """Models with a configured credential, in catalogue order."""
        return [m for m in self._models if self.has_auth(m)]

    def auth_status(self, provider: str) -> dict[str, Any]:
        """Where `provider`'s key would come from now (seed 003, `logout_provider.authStatus`).

        `{"configured": False}`, or `{"configured": True, "source": s, "label": l}` with the first source in
        `get_api_key` order: `"runtime"` (`--api-key`), `"auth.json"` (label: its path), `"environment"`
        (label: the variable), `"models.json"` (label: its path; also for keyless local servers).
        """
        env_name = PROVIDER_ENV_KEYS.get(provider)
        sources = (
            ("runtime", "--api-key", lambda: self._cli_key_applies(provider)),
            ("auth.json", str(self.auth_path), lambda: self.auth.has_api_key(provider)),
            ("environment", env_name, lambda: bool(env_name and os.environ.get(env_name))),
            ("models.json", str(self.models_path), lambda: self._models_json_auth(provider)),
        )
        for source, label, configured in sources:
            if configured():
                return {"configured": True, "source": source, "label": label}
        return {"configured": False}

    def _models_json_auth(self, provider: str) -> bool:
        keyless = any((m.get("compat") or {}).get("apiKeyRequired") is False for m in self._of_provider(provider))
        return keyless or key_value_configured(self._provider_keys.get(provider))

    def logout(self, provider: str) -> bool:
        """Delete `provider`'s `auth.json` credential and reload the catalogue; False when none was stored.

        Environment variables and `models.json` keys are left alone. Raises `AuthFileError` for an `auth.json`
        it cannot parse (it is not overwritten) and `OSError` when it cannot be written.
        """
        removed = self.auth.remove(provider)
        self.reload()
        return removed

    # -- selection ---------------------------------------------------------------------------------------

    def resolve_model_pattern(self, pattern: str, provider: str | None = None
                              ) -> tuple[Model | None, str | None, str | None]:
        """Resolve a `--model` pattern to `(model, thinking_level, error)`; exactly one of model/error is set.

        Accepts `id`, `provider/id`, and a `:<level>` suffix (`sonnet:high`); ids containing `:` (Ollama's
        `qwen2.5-coder:7b`) match whole first. Exact ids (case-insensitive) beat substring matches of id or
        name. Among several matches, models with a credential win; then ids over names, undated aliases over
        dated snapshots, shorter ids, and finally the higher id (`opus-4-5` over `opus-4-1`). An exact id
        offered by several providers, none with a credential, is an error asking for `--provider`. When
        nothing matches, a host without built-in models accepts any id (`--provider groq` with
        `llama-3.3-70b`, or `groq/llama-3.3-70b`: see `host_model`).
        `thinking_level` is the suffix as given (not clamped), or None.
        """
        if not isinstance(pattern, str) or (provider is not None and not isinstance(provider, str)):
            return None, None, "A model pattern and provider must be strings"
        pattern = pattern.strip()
        if not pattern:
            return None, None, "Empty model pattern"
        if provider and not self._of_provider(provider) and provider.lower() not in HOST_ONLY_PROVIDERS:
            return None, None, f'Unknown provider "{provider}". Known providers: {", ".join(self.providers())}'
        model, error = self._match(pattern, provider)
        if model or error:
            return model, None, error
        head, sep, suffix = pattern.rpartition(":")
        model, error = self._match(head, provider) if sep and head else (None, None)
        if model and suffix not in THINKING_LEVELS:
            return None, None, (f'Invalid thinking level "{suffix}" in model pattern "{pattern}". '
                                f"Valid levels: {', '.join(THINKING_LEVELS)}")
        if model or error:
            return model, (suffix if model else None), error
        model, level = self._host_pattern(pattern, provider)
        if model:
            return model, level, None
        scope = f' for provider "{provider}"' if provider else ""
        return None, None, f'No model matches "{pattern}"{scope}'

    def _match(self, pattern: str, provider: str | None) -> tuple[Model | None, str | None]:
        scopes = self._scopes(pattern, provider)
        for pool, pat in scopes:
            exact = [m for m in pool if m["id"] == pat] or [m for m in pool if m["id"].lower() == pat.lower()]
            if exact:
                return self._pick_exact(exact, pat)
        for pool, pat in scopes:
            needle = pat.lower()
            fuzzy = [m for m in pool if needle in m["id"].lower() or needle in m.get("name", "").lower()]
            if fuzzy:
                return self._pick_fuzzy(fuzzy, needle), None
        return None, None

    def _scopes(self, pattern: str, provider: str | None) -> list[tuple[list[Model], str]]:
        """(candidate models, pattern to match) pairs, most specific first.

        `provider/id` narrows to that provider, but the whole pattern is tried too: OpenRouter-style ids
        (`openai/gpt-4o`) contain a slash themselves.
        """
        head, sep, tail = pattern.partition("/")
        pool = self._of_provider(provider) if provider else list(self._models)
        scopes = [(pool, pattern)]
        if sep and tail:
            if provider is None and head.lower() in {p.lower() for p in self.providers()}:
                scopes.insert(0, (self._of_provider(head), tail))
            elif provider is not None and head.lower() == provider.lower():
                scopes.insert(0, (pool, tail))
        return scopes

    def _of_provider(self, provider: str) -> list[Model]:
        return [m for m in self._models if m["provider"].lower() == provider.lower()]

    def _pick_exact(self, matches: list[Model], pattern: str) -> tuple[Model | None, str | None]:
        with_auth = [m for m in matches if self.has_auth(m)]
        providers = list(dict.fromkeys(m["provider"] for m in matches))
        if with_auth or len(providers) == 1:
            return (with_auth or matches)[0], None
        return None, (f'Model "{pattern}" is offered by several providers ({", ".join(providers)}) and none '
                      f'has an API key; choose one with --provider or "<provider>/{pattern}"')

    def _pick_fuzzy(self, matches: list[Model], needle: str) -> Model:
        ranked = sorted(matches, key=lambda m: m["id"], reverse=True)
        ranked.sort(key=lambda m: (not self.has_auth(m), needle not in m["id"].lower(),
                                   bool(_DATED_ID.search(m["id"])), len(m["id"])))
        return ranked[0]

    def initial_model(self, *, provider: str | None = None, model_pattern: str | None = None,
                      settings: Any = None, thinking: str | None = None, scope: Scope | None = None
                      ) -> tuple[Model | None, str, list[str]]:
        """The start-up model, its thinking level, and warnings for the user.

        Order: `--model` (with `--provider`), `--provider` alone (its settings default or first model with a
        credential), a non-empty `scope` (the settings default when it is in scope, else the first scoped
        model, with its pinned level), settings `defaultProvider`/`defaultModel`, then the first model with a
        credential.
        A `--model` that does not resolve gives `(None, "off", [error])` with no fallback: the caller should
        treat it as fatal. Thinking: `thinking` (`--thinking`), the pattern's suffix, settings
        `modelThinkingLevels` / `defaultThinkingLevel`, else `"medium"` for reasoning models and `"off"`
        otherwise; always clamped to the model's levels. `--api-key` without `--provider` is bound to the
        chosen model's provider, so it is never sent to another provider after a model switch.
        """
        warnings: list[str] = []
        level: str | None = None
        if model_pattern:
            model, level, error = self.resolve_model_pattern(model_pattern, provider)
            if error:
                return None, "off", [error]
        elif provider:
            model = self._provider_default(provider, settings, warnings)
            if model is None:
                return None, "off", warnings
        elif scope:
            model, level = self._scoped_default(scope, settings)
        else:
            model, level = self._settings_default(settings, warnings)
            model = model or next(iter(self.available_models()), None)
        if model is None:
            return None, "off", warnings
        if self.cli_api_key and self.cli_provider is None:
            self.cli_provider = model["provider"]
        if self.is_host_default(model):
            warnings.append(self._host_default_note(model))
        return model, self._initial_level(model, thinking, level, settings, warnings), warnings

    def _provider_default(self, provider: str, settings: Any, warnings: list[str]) -> Model | None:
        models = self._of_provider(provider)
        if not models and provider.lower() in HOST_ONLY_PROVIDERS:
            warnings.append(f'Provider "{provider}" has no built-in models: name one with --model <id> (any model '
                            f"the host serves), or list its models in {self.models_path}")
            return None
        if not models:
            warnings.append(f'Unknown provider "{provider}". Known providers: {", ".join(self.providers())}')
            return None
        if settings is not None and settings.default_model and settings.default_provider == models[0]["provider"]:
            chosen = self.find(models[0]["provider"], settings.default_model)
            if chosen:
                return chosen
        return next((m for m in models if self.has_auth(m)), models[0])

    def _host_default_note(self, model: Model) -> str:
        return (f'Model "{model["id"]}" of {model["provider"]} is not described in the catalogue: using defaults '
                f'({model["contextWindow"]}-token context window, {model["maxTokens"]} output tokens, no reasoning, '
                f"text only); describe it in {self.models_path} to change them")

    def _scoped_default(self, scope: Scope, settings: Any) -> tuple[Model, str | None]:
        default, _ = self._settings_default(settings, [])
        for model, level in scope:
            if default is not None and (model["provider"], model["id"]) == (default["provider"], default["id"]):
                return model, level
        return scope[0][0], scope[0][1]

    def _settings_default(self, settings: Any, warnings: list[str]) -> tuple[Model | None, str | None]:
        if settings is None or not settings.default_model:
            return None, None
        provider = settings.default_provider
        model, level, error = self.resolve_model_pattern(settings.default_model, provider)
        if error:
            name = f"{provider}/{settings.default_model}" if provider else settings.default_model
            warnings.append(f'Default model "{name}" from settings is not available ({error}); '
                            "choosing another model")
        return model, level

    def _initial_level(self, model: Model, thinking: str | None, suffix: str | None, settings: Any,
                       warnings: list[str]) -> str:
        if thinking is not None and thinking not in THINKING_LEVELS:
            warnings.append(f'Invalid thinking level "{thinking}" ignored. Valid levels: {", ".join(THINKING_LEVELS)}')
            thinking = None
        explicit = thinking or suffix
        configured = None
        if settings is not None:
            configured = (settings.model_thinking_level(model["provider"], model["id"])
                          or settings.default_thinking_level)
        requested = explicit or configured
        if requested is None:
            return default_thinking_level(model)
        level = clamp_thinking_level(model, requested)
        if explicit and level != explicit:
            warnings.append(f'Thinking level "{explicit}" is not supported by {model["provider"]}/{model["id"]}; '
                            f'using "{level}"')
        return level


def _build_model(provider: str, api: str, base_url: str, pentry: dict[str, Any], entry: dict[str, Any],
                 keyless: bool) -> Model:
    """A Model dict from a `models.json` entry, with the documented defaults."""
    cost = entry.get("cost") or {}
    model: dict[str, Any] = {
        "id": entry["id"], "name": entry.get("name") or entry["id"], "api": api, "provider": provider,
        "baseUrl": base_url, "reasoning": bool(entry.get("reasoning", False)),
        "input": list(entry.get("input") or ["text"]),
        "contextWindow": int(entry.get("contextWindow", DEFAULT_CONTEXT_WINDOW)),
        "maxTokens": int(entry.get("maxTokens", DEFAULT_MAX_TOKENS)),
        "cost": {k: cost.get(k, 0) for k in ("input", "output", "cacheRead", "cacheWrite")},
    }
    compat = _merge(pentry.get("compat") or {}, entry.get("compat") or {})
    if keyless:
        compat.setdefault("apiKeyRequired", False)
    if compat:
        model["compat"] = compat
    for key in _PASSTHROUGH:
        if key in entry:
            model[key] = copy.deepcopy(entry[key])
    return model  # type: ignore[return-value]


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
