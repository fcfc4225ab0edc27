"""The fields of a `models.json` provider or model entry, the check each must pass, and where a problem is.

One table (`_CHECKS`) serves provider entries, model entries and `modelOverrides` values alike; a value that
has the right type then passes the value checks (`_VALUE_CHECKS`: a `baseUrl` is an http(s) URL with a usable
port). `field_problem` gives the first failing field and a message naming what was expected; an entry that
passes has the shape of `ModelEntry` / `ProviderEntry`.
"""

# No `from __future__ import annotations` here: the TypedDicts' field types stay objects; held as text, typing
# would compile each one at import (a `ForwardRef`), and the first `compile` of a process costs ~1.5 ms (issue 15).
import json
from collections.abc import Callable, Mapping
from typing import TypedDict
from urllib.parse import urlsplit

from ...ai.options import THINKING_LEVELS
from ..config_values import is_number, is_positive_int

Where = tuple[str | int, ...]
"""Where a problem is in `models.json`: keys and indexes from the top, `("providers", "local", "models", 0)`."""

ENDPOINT_SUFFIXES = ("/chat/completions", "/responses", "/v1/messages")
"""Paths the provider modules append to `baseUrl` (openai-completions, openai-responses, anthropic-messages): a
`baseUrl` that already ends in one was copied from an endpoint's documentation, and would be doubled."""


class ModelEntry(TypedDict, total=False):
    """A `models.json` model entry (or `modelOverrides` value) that passed `field_problem`; prices per million
    tokens, sizes in tokens. Passed through to the model as they are: the thinking and sampling fields,
    `inputLimits`, `promptCache`, `defaultContextWindow` and `contextWindowOptions`."""

    id: str
    name: str
    api: str
    baseUrl: str
    apiKey: str
    reasoning: bool
    input: list[str]
    contextWindow: int
    maxTokens: int
    defaultContextWindow: int
    contextWindowOptions: list[int]
    cost: dict[str, float]
    headers: dict[str, str]
    compat: dict[str, object]
    thinkingLevels: list[str]
    thinkingLevelMap: dict[str, str | int | None]
    samplingParams: dict[str, object]
    samplingParamsByThinkingLevel: dict[str, dict[str, object]]
    inputLimits: dict[str, object]
    promptCache: object


class ProviderEntry(ModelEntry, total=False):
    """A `models.json` provider entry that passed `field_problem` (its models not checked yet)."""

    models: list[object]
    modelOverrides: dict[str, object]


class ModelsFile(TypedDict, total=False):
    """The top level of `models.json` (`$schema` aside: `config_keys.SCHEMA_KEY`)."""

    providers: dict[str, object]


def _fields(shape: type) -> tuple[str, ...]:
    return (*shape.__required_keys__, *shape.__optional_keys__)  # type: ignore[attr-defined]


MODELS_FILE_FIELDS = _fields(ModelsFile)
PROVIDER_FIELDS = _fields(ProviderEntry)
MODEL_FIELDS = _fields(ModelEntry)
"""The keys each level of `models.json` may hold (the `TypedDict`s above): any other is warned of and ignored."""


def _nonempty_str(v: object) -> bool:
    return isinstance(v, str) and bool(v.strip())


def _str_map(v: object) -> bool:
    return isinstance(v, dict) and all(isinstance(x, str) for x in v.values())


_PRICES = COST_FIELDS = ("input", "output", "cacheRead", "cacheWrite")  # USD per million tokens


def _price(v: object) -> bool:
    return is_number(v) and v >= 0  # type: ignore[operator]


def _cost(v: object) -> bool:
    return isinstance(v, dict) and all(_price(v.get(k, 0)) for k in _PRICES)


def _levels(v: object) -> bool:
    return isinstance(v, list) and bool(v) and all(x in THINKING_LEVELS for x in v)


def _level_map(v: object) -> bool:
    return isinstance(v, dict) and all(k in THINKING_LEVELS and (x is None or isinstance(x, (str, int)))
                                       for k, x in v.items())


def _windows(v: object) -> bool:
    return isinstance(v, list) and bool(v) and all(is_positive_int(x) for x in v)


def _by_level(v: object) -> bool:
    return isinstance(v, dict) and all(k in THINKING_LEVELS and isinstance(x, dict) for k, x in v.items())


Check = Callable[[object], bool]

# Field -> (check, expectation). Shared by provider entries, model entries and overrides.
_CHECKS: dict[str, tuple[Check, str]] = {
    "id": (_nonempty_str, "a non-empty string"),
    "name": (_nonempty_str, "a non-empty string"),
    "api": (_nonempty_str, "a non-empty string"),
    "baseUrl": (_nonempty_str, "a non-empty string"),
    "apiKey": (_nonempty_str, "a non-empty string"),
    "reasoning": (lambda v: isinstance(v, bool), "true or false"),
    "input": (lambda v: isinstance(v, list) and bool(v) and all(x in ("text", "image") for x in v),
              'a list of "text" and "image"'),
    "contextWindow": (is_positive_int, "a positive integer (tokens)"),
    "maxTokens": (is_positive_int, "a positive integer (tokens)"),
    "defaultContextWindow": (is_positive_int, "a positive integer (tokens)"),
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


def _http_url(v: object) -> bool:
    try:
        parts = urlsplit(str(v).strip())
    except ValueError:  # e.g. an unbalanced "[" in the host part
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def _valid_port(v: object) -> bool:
    try:
        port = urlsplit(str(v).strip()).port  # raises ValueError for a port that is not a number in 0-65535
    except ValueError:
        return False
    return port != 0  # reserved: nothing can be reached there (the request-time check in ai/transport_errors)


def _no_spaces(v: object) -> bool:
    return not any(char.isspace() for char in str(v))  # " http://host/v1" would be sent with its space


def _no_query(v: object) -> bool:
    """The provider appends its endpoint path: a query or fragment would end up in front of it."""
    try:
        parts = urlsplit(str(v).strip())
    except ValueError:
        return False
    return not (parts.query or parts.fragment or "?" in str(v) or "#" in str(v))


# Checks of a value that already has the right type (run after `_CHECKS`), in order.
_VALUE_CHECKS: list[tuple[str, Check, str]] = [
    ("baseUrl", _http_url, "an http:// or https:// URL such as http://localhost:11434/v1"),
    ("baseUrl", _no_spaces, "a URL without spaces (none around it either)"),
    ("baseUrl", _valid_port, "a URL whose port is a number from 1 to 65535"),
    ("baseUrl", _no_query, "a URL without a ?query or #fragment (the agent appends the endpoint path to it)"),
]


def field_problem(entry: Mapping[str, object]) -> tuple[str, str] | None:
    """`(key, message)` of the first field of `entry` that fails its check, or None.

    The message reads `"<key>" must be <expectation>, got <the value as JSON, at most 80 characters>`.
    """
    checks = [(key, check, expected) for key, (check, expected) in _CHECKS.items()] + _VALUE_CHECKS
    for key, check, expected in checks:
        if key in entry and not check(entry[key]):
            return key, _problem(key, entry[key], expected)
    return None


def _problem(key: str, value: object, expected: str) -> str:
    """The message of `field_problem`; for prices, the one price that is wrong (`"cost.output" must be ...`)."""
    if key == "cost" and isinstance(value, dict):
        price = next(k for k in _PRICES if not _price(value.get(k, 0)))
        key, value, expected = f"cost.{price}", value[price], "a non-negative number (USD per million tokens)"
    return f'"{key}" must be {expected}, got {json.dumps(value)[:80]}'
