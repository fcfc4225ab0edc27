"""models.json numbers that make no sense: `maxTokens` above the context window is reported and lowered to it (the
default `maxTokens` fits the window without a word); zero, negative or fractional token counts and negative or
non-numeric prices are reported naming the field, and the model is skipped (issue 10)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_forge.coding.models.models_json import DEFAULT_MAX_TOKENS, find_model, load_models_json
from agent_forge.coding.safe_read import MAX_REPORTED_PROBLEMS

LOCAL = {"baseUrl": "http://127.0.0.1:8000/v1", "api": "openai-completions"}


def load(tmp_path: Path, providers: dict) -> tuple[Path, list, list[str]]:
    """Write models.json (one key per line, so each value has its own line); returns (path, models, errors)."""
    path = tmp_path / "models.json"
    path.write_text(json.dumps({"providers": providers}, indent=2))
    config = load_models_json(path)
    return path, config.models, config.errors


def line_of(path: Path, fragment: str, occurrence: int = 0) -> int:
    hits = [number for number, line in enumerate(path.read_text().splitlines(), 1) if fragment in line]
    return hits[occurrence]


def test_max_tokens_above_the_window_is_reported_at_its_line_and_lowered(tmp_path):
    path, models, errors = load(tmp_path, {"loc": {**LOCAL, "models": [
        {"id": "small", "contextWindow": 8192, "maxTokens": 32768},
        {"id": "default-window", "maxTokens": 200000}]}})
    small, wide = find_model(models, "loc", "small"), find_model(models, "loc", "default-window")
    assert (small["contextWindow"], small["maxTokens"]) == (8192, 8192)
    assert (wide["contextWindow"], wide["maxTokens"]) == (128000, 128000)
    assert errors == [
        f'{path}:{line_of(path, "32768")}: providers.loc.models[0]: "maxTokens" 32768 is larger than '
        '"contextWindow" 8192; the answer must fit in the context window, so 8192 is used',
        f'{path}:{line_of(path, "200000")}: providers.loc.models[1]: "maxTokens" 200000 is larger than '
        '"contextWindow" 128000 (the default); the answer must fit in the context window, so 128000 is used']


def test_the_default_max_tokens_fits_a_small_window_silently(tmp_path):
    _, models, errors = load(tmp_path, {"loc": {**LOCAL, "models": [
        {"id": "tiny", "contextWindow": 4096}, {"id": "roomy", "contextWindow": 65536},
        {"id": "equal", "contextWindow": 2048, "maxTokens": 2048}]}})
    assert errors == []
    assert find_model(models, "loc", "tiny")["maxTokens"] == 4096
    assert find_model(models, "loc", "roomy")["maxTokens"] == DEFAULT_MAX_TOKENS
    assert find_model(models, "loc", "equal")["maxTokens"] == 2048


def test_overrides_are_fitted_too(tmp_path):
    path, models, errors = load(tmp_path, {"anthropic": {"modelOverrides": {
        "claude-sonnet-4-5": {"maxTokens": 900000},
        "claude-opus-4-1": {"contextWindow": 8000}}}})  # only the window: the built-in maxTokens follows it
    sonnet, opus = find_model(models, "anthropic", "claude-sonnet-4-5"), find_model(models, "anthropic",
                                                                                     "claude-opus-4-1")
    assert sonnet["maxTokens"] == sonnet["contextWindow"] == 200000
    assert (opus["contextWindow"], opus["maxTokens"]) == (8000, 8000)
    assert errors == [
        f'{path}:{line_of(path, "900000")}: providers.anthropic.modelOverrides.claude-sonnet-4-5: "maxTokens" '
        '900000 is larger than "contextWindow" 200000 (the model\'s); the answer must fit in the context window, '
        "so 200000 is used"]


@pytest.mark.parametrize(("fields", "problem"), [
    ({"contextWindow": 0}, '"contextWindow" must be a positive integer (tokens), got 0'),
    ({"contextWindow": -8192}, '"contextWindow" must be a positive integer (tokens), got -8192'),
    ({"contextWindow": 8192.5}, '"contextWindow" must be a positive integer (tokens), got 8192.5'),
    ({"maxTokens": 0}, '"maxTokens" must be a positive integer (tokens), got 0'),
    ({"maxTokens": 1.5}, '"maxTokens" must be a positive integer (tokens), got 1.5'),
    ({"maxTokens": "4096"}, '"maxTokens" must be a positive integer (tokens), got "4096"'),
    ({"maxTokens": True}, '"maxTokens" must be a positive integer (tokens), got true'),
    ({"defaultContextWindow": -1}, '"defaultContextWindow" must be a positive integer (tokens), got -1'),
    ({"contextWindowOptions": [200000, 0]}, '"contextWindowOptions" must be a list of positive integers'),
    ({"cost": {"input": 1, "output": -15}},
     '"cost.output" must be a non-negative number (USD per million tokens), got -15'),
    ({"cost": {"cacheRead": "0.3"}},
     '"cost.cacheRead" must be a non-negative number (USD per million tokens), got "0.3"'),
    ({"cost": {"cacheWrite": None}},
     '"cost.cacheWrite" must be a non-negative number (USD per million tokens), got null'),
    ({"cost": [3, 15]}, '"cost" must be an object of non-negative prices'),
])
def test_nonsensical_numbers_name_the_field_and_skip_the_model(tmp_path, fields, problem):
    key = next(iter(fields))
    path, models, errors = load(tmp_path, {"loc": {**LOCAL, "models": [{"id": "bad", **fields}, {"id": "good"}]}})
    assert [m["id"] for m in models if m["provider"] == "loc"] == ["good"]
    assert len(errors) == 1
    assert errors[0].startswith(f'{path}:{line_of(path, f"{key}")}: providers.loc.models[0]: {problem}')
    assert errors[0].endswith("; model skipped")


def test_zero_prices_and_whole_floats_are_fine(tmp_path):
    _, models, errors = load(tmp_path, {"loc": {**LOCAL, "models": [
        {"id": "m", "contextWindow": 8192.0, "maxTokens": 1024, "cost": {"input": 0, "output": 0.5}}]}})
    assert errors == []
    model = find_model(models, "loc", "m")
    assert model["contextWindow"] == 8192 and isinstance(model["contextWindow"], int)
    assert model["cost"] == {"input": 0, "output": 0.5, "cacheRead": 0, "cacheWrite": 0}


def test_repeated_keys_are_reported_and_the_last_one_is_used(tmp_path):
    path = tmp_path / "models.json"
    path.write_text("""{
  "providers": {
    "mylocal": {"baseUrl": "http://127.0.0.1:1/v1", "api": "openai-completions", "models": [{"id": "old"}]},
    "mylocal": {"baseUrl": "http://127.0.0.1:2/v1", "api": "openai-completions",
                "models": [{"id": "new", "contextWindow": 4096, "contextWindow": 8192}]}
  }
}
""")
    config = load_models_json(path)
    assert [m["id"] for m in config.models if m["provider"] == "mylocal"] == ["new"]
    new = find_model(config.models, "mylocal", "new")
    assert new["baseUrl"] == "http://127.0.0.1:2/v1" and new["contextWindow"] == 8192
    line = path.read_text().splitlines()[4]
    first, second = line.index('"contextWindow"') + 1, line.rindex('"contextWindow"') + 1
    assert config.errors == [
        f'{path}:4: providers: duplicate key "mylocal" (lines 3 and 4); only the last one (line 4) is used, '
        "the earlier one ignored",
        f'{path}:5: providers.mylocal.models[0]: duplicate key "contextWindow" (line 5 column {first} and line 5 '
        f"column {second}); only the last one (line 5 column {second}) is used, the earlier one ignored"]


def test_thousands_of_bad_models_are_listed_a_hundred_then_counted(tmp_path):
    path, models, errors = load(tmp_path, {"loc": {**LOCAL, "models": [
        *({"id": f"m{n}", "contextWindow": -1} for n in range(5000)), {"id": "good"}]}})
    assert [m["id"] for m in models if m["provider"] == "loc"] == ["good"]
    assert len(errors) == MAX_REPORTED_PROBLEMS + 1
    assert errors[99].startswith(f'{path}:{line_of(path, "-1", 99)}: providers.loc.models[99]: "contextWindow"')
    assert errors[100] == (f"{path}: 4900 more problems not listed (each skips or corrects what it names, as those "
                           "above do)")


def test_the_builtin_catalogue_copy_is_equal_and_shares_nothing():
    """`models_json._json_copy` (the start-up copy of the catalogue) is what `copy.deepcopy` gives."""
    import copy

    from agent_forge.ai.catalogue import BUILTIN_MODELS
    from agent_forge.coding.models.models_json import _json_copy

    copied = _json_copy(BUILTIN_MODELS)
    assert copied == copy.deepcopy(BUILTIN_MODELS)
    originals = {id(value) for model in BUILTIN_MODELS for value in [model, *model.values()]
                 if isinstance(value, (dict, list))}
    assert not originals & {id(value) for model in copied for value in [model, *model.values()]
                            if isinstance(value, (dict, list))}
