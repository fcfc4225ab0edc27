"""Reading `models.json` (`<agent dir>/models.json`) onto the built-in catalogue, reporting every problem.

The file keeps the reference agent's schema (`models-configuration.md`):
`{"providers": {"<id>": {baseUrl, api, apiKey, headers, compat, models: [...], modelOverrides: {...}}}}`.
A built-in provider id changes that provider (its `baseUrl`, `compat` and `headers` apply to its built-in
models); any other id adds a provider and needs `api` and `baseUrl` (at provider or model level, or known
from `PROVIDER_ENDPOINTS`). A `models` entry adds a model or replaces the one with the same id; a
`modelOverrides` entry merges into an existing model (object fields key by key). Field checks: `schema.py`.

Problems go to `errors` as `<path>:<line>: <where>: <problem>` (the line of the offending key; a file that
cannot be parsed at all gives `<path>: invalid JSON at line L column C: ...`); the offending provider or model
is skipped, the rest still loads. Reported too, though nothing is skipped: an `api` no built-in module serves
(a plugin may register it later), a duplicate model id within a provider, a provider that is neither known nor
adds models, a number out of range (`config_values.py`: removed, so the default applies), a `baseUrl` ending
in an endpoint path the provider module appends (`ENDPOINT_SUFFIXES`: removed), and an empty file. The file
is read through `safe_read.py` (a regular file of at most 1 MB, JSON nested at most 64 levels).

Keyless local servers: a provider that is not a known hosted provider and has no `apiKey` (the Ollama /
LM Studio / vLLM case) gets `compat.apiKeyRequired: false` on its models.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

from ...ai.catalogue import BUILTIN_MODELS, PROVIDER_ENDPOINTS, PROVIDER_ENV_KEYS
from ...ai.registry import known_apis
from ..paths import path_text
from ...records import Record, factory
from ..config_values import OUT_OF_RANGE, drop_out_of_range
from ..errors import ConfigFileError
from ..safe_read import MAX_REPORTED_PROBLEMS, read_json_document
from .schema import (COST_FIELDS, ENDPOINT_SUFFIXES, MODEL_FIELDS, MODELS_FILE_FIELDS, PROVIDER_FIELDS, ModelEntry,
                     ProviderEntry, Where, field_problem)

if TYPE_CHECKING:
    from ...ai.types import Model

MODELS_FILE = "models.json"
DEFAULT_CONTEXT_WINDOW = 128_000
DEFAULT_MAX_TOKENS = 16_384

_PASSTHROUGH = ("thinkingLevelMap", "thinkingLevels", "inputLimits", "promptCache", "samplingParams",
                "samplingParamsByThinkingLevel", "defaultContextWindow", "contextWindowOptions")
_MISSING = object()

HeaderKey = tuple[str, str | None]
"""Whose `models.json` headers: `(provider, None)` for the provider's, `(provider, model id)` for a model's."""


class ModelsConfig(Record):
    """What `load_models_json` made of the file: the catalogue and what stays out of the model dicts.

    `models`: built-ins (changed by the file) then additions, in catalogue order. `provider_keys`: each
    provider's `apiKey` key value; `headers`: raw header key values (both resolved per request, so secrets
    never reach a model dict). `provider_entries`: the valid provider entries, for host models built later.
    """

    models: list[Model]
    provider_keys: dict[str, str] = factory(dict)
    headers: dict[HeaderKey, dict[str, str]] = factory(dict)
    provider_entries: dict[str, ProviderEntry] = factory(dict)
    errors: list[str] = factory(list)


def load_models_json(path: Path) -> ModelsConfig:
    """The built-in catalogue with `path` applied (see the module docstring). Never raises: a missing file
    gives the built-ins and no errors, any other problem is in `errors`."""
    return _Loader(path).load()


def find_model(models: list[Model], provider: str, model_id: str) -> Model | None:
    """The model with exactly this provider and id, falling back to a case-insensitive match; None for
    anything else, arguments that are not strings included."""
    if not isinstance(provider, str) or not isinstance(model_id, str):
        return None
    for model in models:
        if model["provider"] == provider and model["id"] == model_id:
            return model
    for model in models:
        if model["provider"].lower() == provider.lower() and model["id"].lower() == model_id.lower():
            return model
    return None


def build_model(provider: str, api: str, base_url: str, pentry: ProviderEntry, entry: ModelEntry,
                keyless: bool) -> Model:
    """A Model dict from a `models.json` model entry of provider entry `pentry`, with the documented defaults
    (`DEFAULT_CONTEXT_WINDOW`; `DEFAULT_MAX_TOKENS`, or the context window when that is smaller; text input, no
    reasoning, zero prices). An explicit `maxTokens` above the window is kept: the loader reports and lowers it."""
    cost = entry.get("cost") or {}
    window = int(entry.get("contextWindow", DEFAULT_CONTEXT_WINDOW))
    model = {
        "id": entry["id"], "name": entry.get("name") or entry["id"], "api": api, "provider": provider,
        "baseUrl": base_url, "reasoning": bool(entry.get("reasoning", False)),
        "input": list(entry.get("input") or ["text"]),
        "contextWindow": window,
        "maxTokens": int(entry.get("maxTokens", min(DEFAULT_MAX_TOKENS, window))),
        "cost": {k: cost.get(k, 0) for k in ("input", "output", "cacheRead", "cacheWrite")},
    }
    compat = merge(pentry.get("compat") or {}, entry.get("compat") or {})
    if keyless:
        compat.setdefault("apiKeyRequired", False)
    if compat:
        model["compat"] = compat
    for key in _PASSTHROUGH:
        if key in entry:
            model[key] = _deepcopy(entry[key])  # type: ignore[literal-required]
    return cast("Model", model)


V = TypeVar("V")


def merge(base: object, over: V) -> V:
    """`over` merged into `base`: objects key by key (recursively), anything else replaced by a copy."""
    if isinstance(base, dict) and isinstance(over, dict):
        return cast(V, {**base, **{k: merge(base.get(k), v) for k, v in over.items()}})
    return _deepcopy(over)


def _deepcopy(value: V) -> V:
    """`copy.deepcopy(value)`; `copy` (with `weakref`) is imported by the first user models.json that needs it,
    not by start-up, which copies only the catalogue (`_json_copy`)."""
    import copy

    return copy.deepcopy(value)


def _json_copy(value: V) -> V:
    """A copy of JSON-shaped `value` (dicts, lists, scalars; no object held twice), as `copy.deepcopy` makes it
    but about 3x faster: every start copies the whole built-in catalogue."""
    if isinstance(value, dict):
        return {key: _json_copy(item) for key, item in value.items()}  # type: ignore[return-value]
    if isinstance(value, list):
        return [_json_copy(item) for item in value]  # type: ignore[return-value]
    return value


class _Loader:
    """One read of `models.json` into a `ModelsConfig` (the file's text kept to locate problems)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.text = ""
        self.unlisted = 0  # problems past MAX_REPORTED_PROBLEMS, counted only
        self.config = ModelsConfig(_json_copy(BUILTIN_MODELS))

    def load(self) -> ModelsConfig:
        for provider_id, entry in self._read().items():
            self._apply_provider(provider_id, entry)
        if self.unlisted:
            self.config.errors.append(f"{path_text(self.path)}: {self.unlisted} more problems not listed (each "
                                      "skips or corrects what it names, as those above do)")
        return self.config

    def _read(self) -> dict[str, object]:
        try:
            document = read_json_document(self.path, if_blank=_MISSING)
        except FileNotFoundError:
            return {}
        except ConfigFileError as exc:
            return self._file_error(str(exc))
        data, self.text = document.data, document.text
        self.config.errors += document.duplicate_warnings(self.path)
        if data is _MISSING:
            return self._file_error('the file is empty (write {"providers": {}} for no custom models)')
        for where in drop_out_of_range(data):
            self._error(tuple(where), f"{OUT_OF_RANGE}; the default is used")
        if not isinstance(data, dict):
            return self._file_error("expected a JSON object with a \"providers\" object")
        self._unknown_fields(data, MODELS_FILE_FIELDS, ())
        providers = data.get("providers", {})
        if not isinstance(providers, dict):
            return self._file_error('"providers" must be an object keyed by provider id')
        return providers

    def _file_error(self, message: str) -> dict[str, object]:
        self.config.errors.append(f"{path_text(self.path)}: {message}; custom models ignored, built-in models "
                                  "still work")
        return {}

    def _error(self, where: Where, message: str, key: str | None = None) -> None:
        """Record a problem as `<path>:<line>: <where>: <message>`; the line is that of `key` inside `where`
        (of `where` itself without a key)."""
        from ..json_locate import dotted, locate  # only when there is something to report

        if len(self.config.errors) >= MAX_REPORTED_PROBLEMS:
            self.unlisted += 1
            return
        position = locate(self.text, (*where, key) if key else where)
        line = f":{position[0]}" if position else ""
        self.config.errors.append(f"{path_text(self.path)}{line}: {dotted(where) + ': ' if where else ''}{message}")

    def _unknown_fields(self, entry: dict[str, object], known: tuple[str, ...], where: Where) -> None:
        """Warn of each key of `entry` (at `where`) that its shape (`schema.py`) does not name: a typo, or a key
        a plugin or a newer version owns. Nothing is skipped."""
        from ..config_keys import unknown_key, unknown_keys

        for key in unknown_keys(entry, known):
            self._error(where, f"{unknown_key(key, known)}; ignored", key)
        cost = entry.get("cost")
        if "cost" in known and isinstance(cost, dict):
            self._unknown_fields(cost, COST_FIELDS, (*where, "cost"))

    def _strip_endpoint(self, entry: ModelEntry, where: Where) -> None:
        """Drop a known endpoint path (`ENDPOINT_SUFFIXES`) from the end of `entry`'s `baseUrl`, saying so."""
        url = entry.get("baseUrl")
        suffix = next((s for s in ENDPOINT_SUFFIXES if isinstance(url, str) and url.rstrip("/").endswith(s)), None)
        if url is None or suffix is None:
            return
        entry["baseUrl"] = url.rstrip("/").removesuffix(suffix)
        self._error(where, f'"baseUrl" ends in "{suffix}", a path the agent appends itself; using '
                           f'"{entry["baseUrl"]}" (write that to silence this warning)', "baseUrl")

    def _apply_provider(self, provider: str, raw: object) -> None:
        where: Where = ("providers", provider)
        if not isinstance(raw, dict):
            return self._error(where, "must be an object")
        self._unknown_fields(raw, PROVIDER_FIELDS, where)
        problem = field_problem(raw)
        if problem:
            return self._error(where, f"{problem[1]}; provider skipped", problem[0])
        entry = cast(ProviderEntry, raw)
        self._strip_endpoint(entry, where)
        existing = [m for m in self.config.models if m["provider"] == provider]
        self._check_provider(provider, entry, bool(existing), where)
        self.config.provider_entries[provider] = entry
        _change_builtin_provider(existing, entry)
        if "apiKey" in entry:
            self.config.provider_keys[provider] = entry["apiKey"]
        if entry.get("headers"):
            self.config.headers[(provider, None)] = dict(entry["headers"])
        keyless = not existing and provider not in PROVIDER_ENV_KEYS and "apiKey" not in entry
        for index, model_entry in enumerate(entry.get("models", [])):
            self._add_model(provider, entry, existing, model_entry, (*where, "models", index), keyless)
        for model_id, override in entry.get("modelOverrides", {}).items():
            self._override_model(provider, model_id, override, (*where, "modelOverrides", model_id))

    def _check_provider(self, provider: str, entry: ProviderEntry, builtin: bool, where: Where) -> None:
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

    def _check_api(self, entry: ModelEntry, where: Where) -> None:
        api = entry.get("api")
        if isinstance(api, str) and api not in known_apis():
            self._error(where, f'"api" "{api}" is not a known API ({", ".join(known_apis())}); requests to its '
                               "models fail unless a plugin provides it", "api")

    def _add_model(self, provider: str, pentry: ProviderEntry, existing: list[Model], raw: object,
                   where: Where, keyless: bool) -> None:
        if not isinstance(raw, dict):
            return self._error(where, "must be an object with an \"id\"")
        self._unknown_fields(raw, MODEL_FIELDS, where)
        problem = field_problem(raw) or (None if "id" in raw else (None, '"id" is required'))
        if problem:
            return self._error(where, f"{problem[1]}; model skipped", problem[0])
        entry = cast(ModelEntry, raw)
        self._strip_endpoint(entry, where)
        self._check_api(entry, where)
        endpoint = PROVIDER_ENDPOINTS.get(provider, (None, None))
        api = entry.get("api") or pentry.get("api") or (existing[0]["api"] if existing else endpoint[0])
        base_url = entry.get("baseUrl") or pentry.get("baseUrl") or (
            existing[0]["baseUrl"] if existing else endpoint[1])
        if not api or not base_url:
            missing = '"api"' if not api else '"baseUrl"'
            return self._error(where, f"{missing} is required (on the model or its provider); model skipped")
        model = build_model(provider, api, base_url, pentry, entry, keyless)
        self._fit_output(model, entry, where)
        if entry.get("headers"):
            self.config.headers[(provider, model["id"])] = dict(entry["headers"])
        _replace_or_append(self.config.models, model)

    def _override_model(self, provider: str, model_id: str, override: object, where: Where) -> None:
        if not isinstance(override, dict):
            return self._error(where, "must be an object")
        self._unknown_fields(override, MODEL_FIELDS, where)
        problem = field_problem({k: v for k, v in override.items() if k not in ("id", "models")})
        if problem:
            return self._error(where, f"{problem[1]}; override skipped", problem[0])
        model = find_model(self.config.models, provider, model_id)
        if model is None:
            return  # documented: overrides for unknown ids are ignored
        headers = self.config.headers
        for key, value in override.items():
            if key in ("id", "provider", "api", "baseUrl", "apiKey"):
                continue
            if key == "headers":
                headers[(provider, model_id)] = {**headers.get((provider, model_id), {}), **value}
            else:
                model[key] = merge(model.get(key), value)  # type: ignore[literal-required]
        self._fit_output(model, cast(ModelEntry, override), where)

    def _fit_output(self, model: Model, entry: ModelEntry, where: Where) -> None:
        """Lower a `maxTokens` above the model's context window to the window (an answer cannot be longer than
        the window it must fit in); reported when `entry` (the file) wrote that `maxTokens`."""
        window = model["contextWindow"]
        if model["maxTokens"] <= window:
            return
        if "maxTokens" in entry:
            overriding = where[-2] == "modelOverrides"
            whose = "" if "contextWindow" in entry else " (the model's)" if overriding else " (the default)"
            self._error(where, f'"maxTokens" {model["maxTokens"]} is larger than "contextWindow" {window}{whose}; '
                               f"the answer must fit in the context window, so {window} is used", "maxTokens")
        model["maxTokens"] = window


def _change_builtin_provider(existing: list[Model], entry: ProviderEntry) -> None:
    for model in existing:
        if "baseUrl" in entry:
            model["baseUrl"] = entry["baseUrl"]
        if "compat" in entry:
            model["compat"] = merge(model.get("compat") or {}, entry["compat"])


def _replace_or_append(models: list[Model], model: Model) -> None:
    for index, current in enumerate(models):
        if current["provider"] == model["provider"] and current["id"] == model["id"]:
            models[index] = model
            return
    models.append(model)
