"""ModelRegistry: models.json, key precedence, pattern resolution and the start-up model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_forge.ai.catalogue import BUILTIN_MODELS, PROVIDER_ENV_KEYS
from agent_forge.ai.errors import AIError
from agent_forge.coding.models.auth_file import AuthStorage
from agent_forge.coding.models.registry import ModelRegistry
from agent_forge.coding.settings import load_settings

OLLAMA = {"providers": {"ollama": {"baseUrl": "http://localhost:11434/v1", "api": "openai-completions",
                                   "models": [{"id": "qwen2.5-coder:7b"}]}}}


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROVIDER_ENV_KEYS.values():
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    path = tmp_path / "agent"
    path.mkdir()
    return path


def write_models(agent_dir: Path, data: object) -> Path:
    path = agent_dir / "models.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def write_auth(agent_dir: Path, data: dict) -> None:
    (agent_dir / "auth.json").write_text(json.dumps(data), encoding="utf-8")


def ids(models: list) -> list[str]:
    return [f"{m['provider']}/{m['id']}" for m in models]


# -- models and models.json ---------------------------------------------------------------------------------

def test_builtins_without_models_json(agent_dir: Path) -> None:
    registry = ModelRegistry(agent_dir)
    assert registry.errors == []
    assert ids(registry.models) == ids(BUILTIN_MODELS)
    assert registry.available_models() == []
    assert registry.find("anthropic", "claude-sonnet-4-5")["contextWindow"] == 200_000
    assert registry.find("anthropic", "nope") is None


def test_registry_copies_do_not_leak_into_the_catalogue(agent_dir: Path) -> None:
    registry = ModelRegistry(agent_dir)
    registry.find("openai", "gpt-5")["contextWindow"] = 1
    assert next(m for m in BUILTIN_MODELS if m["id"] == "gpt-5")["contextWindow"] == 400_000


def test_ollama_five_lines_appear_and_need_no_real_key(agent_dir: Path) -> None:
    write_models(agent_dir, OLLAMA)
    registry = ModelRegistry(agent_dir)
    assert registry.errors == []
    model = registry.find("ollama", "qwen2.5-coder:7b")
    assert model == {
        "id": "qwen2.5-coder:7b", "name": "qwen2.5-coder:7b", "api": "openai-completions", "provider": "ollama",
        "baseUrl": "http://localhost:11434/v1", "reasoning": False, "input": ["text"],
        "contextWindow": 128_000, "maxTokens": 16_384,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "compat": {"apiKeyRequired": False},
    }
    assert registry.has_auth(model)
    assert ids(registry.available_models()) == ["ollama/qwen2.5-coder:7b"]
    assert registry.get_api_key(model) is None  # the provider sends no credential at all


def test_dummy_api_key_is_used_when_given(agent_dir: Path) -> None:
    data = json.loads(json.dumps(OLLAMA))
    data["providers"]["ollama"]["apiKey"] = "ollama"
    write_models(agent_dir, data)
    registry = ModelRegistry(agent_dir)
    model = registry.find("ollama", "qwen2.5-coder:7b")
    assert "compat" not in model
    assert registry.get_api_key(model) == "ollama"


def test_invalid_json_is_reported_and_builtins_still_work(agent_dir: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_models(agent_dir, '{"providers": {"ollama": }}')
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    registry = ModelRegistry(agent_dir)
    [error] = registry.errors
    assert error.startswith(f"{path}: invalid JSON at line 1")
    assert "built-in models still work" in error
    assert registry.find("ollama", "qwen2.5-coder:7b") is None
    assert ids(registry.available_models())[0] == "openai/gpt-5"


@pytest.mark.parametrize("content, expected", [
    ("[]", 'expected a JSON object with a "providers" object'),
    ('{"providers": []}', '"providers" must be an object keyed by provider id'),
])
def test_wrong_top_level_shapes(agent_dir: Path, content: str, expected: str) -> None:
    write_models(agent_dir, content)
    registry = ModelRegistry(agent_dir)
    assert len(registry.errors) == 1 and expected in registry.errors[0]
    assert len(registry.models) == len(BUILTIN_MODELS)


def test_bad_entries_are_skipped_one_by_one(agent_dir: Path) -> None:
    path = write_models(agent_dir, {"providers": {
        "nourl": {"api": "openai-completions", "models": [{"id": "a"}]},
        "local": {"baseUrl": "http://127.0.0.1:8000/v1", "api": "openai-completions",
                  "models": [{"id": "bad", "contextWindow": -1}, {"name": "no id"}, "x", {"id": "good"}]},
        "typo": {"baseUrl": 5, "models": [{"id": "t"}]},
    }})
    registry = ModelRegistry(agent_dir)
    assert [m["id"] for m in registry.models if m["provider"] in ("nourl", "local", "typo")] == ["good"]
    joined = "\n".join(registry.errors)
    assert all(e.startswith(f"{path}:1: providers.") for e in registry.errors)  # path:line: where
    assert 'providers.nourl.models[0]: "baseUrl" is required' in joined
    assert 'providers.local.models[0]: "contextWindow" must be a positive integer' in joined
    assert 'providers.local.models[1]: "id" is required' in joined
    assert "providers.local.models[2]: must be an object" in joined
    assert 'providers.typo: "baseUrl" must be a non-empty string, got 5; provider skipped' in joined


def test_full_custom_model_fields(agent_dir: Path) -> None:
    write_models(agent_dir, {"providers": {"vllm": {
        "baseUrl": "http://gpu:8000/v1", "api": "openai-completions", "apiKey": "EMPTY",
        "compat": {"supportsDeveloperRole": False},
        "models": [{"id": "qwen3", "name": "Qwen 3", "reasoning": True, "input": ["text", "image"],
                    "contextWindow": 32768, "maxTokens": 4096,
                    "cost": {"input": 1, "output": 2, "cacheRead": 0.5, "cacheWrite": 0},
                    "compat": {"maxTokensField": "max_tokens"},
                    "thinkingLevelMap": {"minimal": None}, "samplingParams": {"top_k": 20}}]}}})
    registry = ModelRegistry(agent_dir)
    model = registry.find("vllm", "qwen3")
    assert registry.errors == []
    assert model["name"] == "Qwen 3" and model["reasoning"] is True and model["input"] == ["text", "image"]
    assert (model["contextWindow"], model["maxTokens"]) == (32768, 4096)
    assert model["compat"] == {"supportsDeveloperRole": False, "maxTokensField": "max_tokens"}
    assert model["thinkingLevelMap"] == {"minimal": None} and model["samplingParams"] == {"top_k": 20}
    assert registry.get_api_key(model) == "EMPTY"


def test_builtin_provider_base_url_override_keeps_models_and_auth(agent_dir: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    write_models(agent_dir, {"providers": {"anthropic": {"baseUrl": "https://proxy.example.com/v1"}}})
    registry = ModelRegistry(agent_dir)
    anthropic = [m for m in registry.models if m["provider"] == "anthropic"]
    assert len(anthropic) == sum(m["provider"] == "anthropic" for m in BUILTIN_MODELS)
    assert {m["baseUrl"] for m in anthropic} == {"https://proxy.example.com/v1"}
    assert not registry.has_auth(anthropic[0])  # still needs a real key
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant")
    assert registry.get_api_key(anthropic[0]) == "sk-ant"


def test_models_entry_replaces_a_builtin_and_overrides_merge(agent_dir: Path) -> None:
    write_models(agent_dir, {"providers": {"openai": {
        "models": [{"id": "gpt-4o", "name": "My 4o", "contextWindow": 64000}, {"id": "gpt-next"}],
        "modelOverrides": {"gpt-5": {"name": "GPT-5 (team)", "cost": {"input": 1}},
                           "no-such-model": {"name": "ignored"}}}}})
    registry = ModelRegistry(agent_dir)
    assert registry.errors == []
    order = [m["id"] for m in registry.models if m["provider"] == "openai"]
    assert order.index("gpt-4o") < order.index("gpt-4o-mini") and order[-1] == "gpt-next"
    assert registry.find("openai", "gpt-4o")["name"] == "My 4o"
    assert registry.find("openai", "gpt-4o")["contextWindow"] == 64000
    assert registry.find("openai", "gpt-next")["baseUrl"] == "https://api.openai.com/v1"
    assert "compat" not in registry.find("openai", "gpt-next")  # a hosted provider is never keyless
    gpt5 = registry.find("openai", "gpt-5")
    assert gpt5["name"] == "GPT-5 (team)"
    assert gpt5["cost"] == {"input": 1, "output": 10, "cacheRead": 0.125, "cacheWrite": 0}


def test_known_hosted_provider_needs_only_models(agent_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_models(agent_dir, {"providers": {"groq": {"models": [{"id": "llama-3.3-70b-versatile"}]}}})
    registry = ModelRegistry(agent_dir)
    model = registry.find("groq", "llama-3.3-70b-versatile")
    assert model["baseUrl"] == "https://api.groq.com/openai/v1" and model["api"] == "openai-completions"
    assert not registry.has_auth(model)
    assert "Set GROQ_API_KEY" in registry.auth_error_message(model)
    monkeypatch.setenv("GROQ_API_KEY", "gsk")
    assert registry.get_api_key(model) == "gsk"


def test_headers_are_resolved_per_request_and_kept_out_of_the_model(agent_dir: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "header-command-ran"
    write_models(agent_dir, {"providers": {"proxy": {
        "baseUrl": "https://proxy.example.com/v1", "api": "openai-completions", "apiKey": "k",
        "headers": {"X-Team": "core", "X-Token": "$PROXY_TOKEN", "X-Missing": "$UNSET_HEADER_VAR"},
        "models": [{"id": "m", "headers": {"X-Cmd": f"!touch {marker}; echo from-cmd"}}]}}})
    monkeypatch.setenv("PROXY_TOKEN", "tok")
    monkeypatch.delenv("UNSET_HEADER_VAR", raising=False)
    registry = ModelRegistry(agent_dir)
    model = registry.find("proxy", "m")
    assert "headers" not in model and not marker.exists()
    with pytest.raises(AIError, match="header 'X-Missing' .* the environment variable UNSET_HEADER_VAR, which is not set"):
        registry.request_headers(model)  # not left out: the request would fail less clearly without it
    monkeypatch.setenv("UNSET_HEADER_VAR", "now-set")
    assert registry.request_headers(model) == {"X-Team": "core", "X-Token": "tok", "X-Missing": "now-set",
                                               "X-Cmd": "from-cmd"}


def test_reload_picks_up_changes(agent_dir: Path) -> None:
    registry = ModelRegistry(agent_dir)
    write_models(agent_dir, OLLAMA)
    assert registry.find("ollama", "qwen2.5-coder:7b") is None
    registry.reload()
    assert registry.find("ollama", "qwen2.5-coder:7b") is not None


# -- API keys -----------------------------------------------------------------------------------------------

def test_key_precedence_cli_then_auth_then_env_then_models_json(agent_dir: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    write_models(agent_dir, {"providers": {"anthropic": {"apiKey": "from-models-json"}}})
    write_auth(agent_dir, {"anthropic": {"type": "api_key", "key": "from-auth-json"}})
    monkeypatch.setenv("ANTHROPIC_API_KEY", "from-env")
    model = {"provider": "anthropic", "id": "claude-sonnet-4-5"}
    assert ModelRegistry(agent_dir, cli_api_key="from-cli").get_api_key(model) == "from-cli"
    assert ModelRegistry(agent_dir).get_api_key(model) == "from-auth-json"
    AuthStorage(agent_dir / "auth.json").remove("anthropic")
    assert ModelRegistry(agent_dir).get_api_key(model) == "from-env"
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert ModelRegistry(agent_dir).get_api_key(model) == "from-models-json"


def test_cli_key_applies_only_to_the_cli_provider(agent_dir: Path) -> None:
    registry = ModelRegistry(agent_dir, cli_api_key="sk-cli", cli_provider="openai")
    assert registry.get_api_key(registry.find("openai", "gpt-5")) == "sk-cli"
    anthropic = registry.find("anthropic", "claude-opus-4-5")
    assert registry.get_api_key(anthropic) is None and not registry.has_auth(anthropic)
    assert {m["provider"] for m in registry.available_models()} == {"openai"}


def test_cli_key_binds_to_the_initially_selected_provider(agent_dir: Path) -> None:
    registry = ModelRegistry(agent_dir, cli_api_key="sk-cli")
    model, _, _ = registry.initial_model(model_pattern="claude-haiku-4-5")
    assert model["provider"] == "anthropic" and registry.cli_provider == "anthropic"
    assert registry.get_api_key(model) == "sk-cli"
    assert registry.get_api_key(registry.find("openai", "gpt-5")) is None


def test_auth_json_command_runs_only_when_the_key_is_requested(agent_dir: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    write_auth(agent_dir, {"openai": {"type": "api_key", "key": f"!touch {marker}; echo sk-cmd"}})
    registry = ModelRegistry(agent_dir)
    available = registry.available_models()
    model, _, _ = registry.initial_model()
    assert {m["provider"] for m in available} == {"openai"} and model["id"] == "gpt-5"
    assert not marker.exists()
    assert registry.get_api_key(model) == "sk-cmd"
    assert marker.exists()


def test_failing_command_falls_through_and_is_explained(agent_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_auth(agent_dir, {"anthropic": {"type": "api_key", "key": "!exit 7"}})
    registry = ModelRegistry(agent_dir)
    model = registry.find("anthropic", "claude-sonnet-4-5")
    assert registry.has_auth(model)
    assert registry.get_api_key(model) is None
    assert not registry.has_auth(model)
    message = registry.auth_error_message(model)
    assert message.startswith(f'No API key for provider "anthropic": {agent_dir / "auth.json"}: the key command '
                              '`exit 7` failed with exit status 7. ')
    assert f"Set ANTHROPIC_API_KEY, add it to {agent_dir / 'auth.json'}, or pass --api-key." in message
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    assert registry.get_api_key(model) == "sk-env"


def test_models_json_key_forms(agent_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_models(agent_dir, {"providers": {
        "envy": {"baseUrl": "https://e.example/v1", "api": "openai-completions", "apiKey": "${ENVY_KEY}",
                 "models": [{"id": "e"}]},
        "cmd": {"baseUrl": "https://c.example/v1", "api": "openai-completions", "apiKey": "!echo sk-c",
                "models": [{"id": "c"}]}}})
    monkeypatch.delenv("ENVY_KEY", raising=False)
    registry = ModelRegistry(agent_dir)
    envy, cmd = registry.find("envy", "e"), registry.find("cmd", "c")
    assert not registry.has_auth(envy) and registry.has_auth(cmd)
    assert registry.get_api_key(cmd) == "sk-c"
    assert registry.get_api_key(envy) is None
    assert "the environment variable ENVY_KEY, which is not set" in registry.auth_error_message(envy)
    monkeypatch.setenv("ENVY_KEY", "sk-e")
    assert registry.has_auth(envy) and registry.get_api_key(envy) == "sk-e"


@pytest.mark.parametrize("auth,api_key,env,expected", [
    (None, "!echo sk-m", None, "sk-m"),
    ({"type": "api_key", "key": "!echo sk-a"}, "!echo sk-m", None, "sk-a"),
    ({"type": "api_key", "key": "!exit 3"}, "!echo sk-m", None, "sk-m"),
    ({"type": "api_key", "key": "!exit 3"}, "$LOC_UNSET_KEY", "sk-env", "sk-env"),
    ({"type": "api_key", "key": "!exit 3"}, "!echo oops >&2; exit 4", None, None),
])
async def test_the_sync_and_async_key_lookups_agree(agent_dir: Path, monkeypatch: pytest.MonkeyPatch, auth,
                                                    api_key, env, expected) -> None:
    from agent_forge.ai.errors import MissingApiKeyError

    write_models(agent_dir, {"providers": {"groq": {"apiKey": api_key, "models": [{"id": "m"}]}}})
    if auth:
        write_auth(agent_dir, {"groq": auth})
    monkeypatch.delenv("LOC_UNSET_KEY", raising=False)
    if env:
        monkeypatch.setenv("GROQ_API_KEY", env)
    sync_registry, async_registry = ModelRegistry(agent_dir), ModelRegistry(agent_dir)
    model = sync_registry.find("groq", "m")
    assert sync_registry.get_api_key(model) == expected
    if expected is None:
        with pytest.raises(MissingApiKeyError) as failed:
            await async_registry.resolve_api_key(model)
        assert str(failed.value) == sync_registry.auth_error_message(model)
        assert "exit status 3" in str(failed.value) and "exit status 4: oops" in str(failed.value)
    else:
        assert await async_registry.resolve_api_key(model) == expected
    assert async_registry.auth_error_message(model) == sync_registry.auth_error_message(model)


async def test_a_models_json_command_runs_at_every_request_on_both_paths(agent_dir: Path, tmp_path: Path) -> None:
    counter = tmp_path / "count"
    write_models(agent_dir, {"providers": {"loc": {
        "baseUrl": "http://localhost:8080/v1", "api": "openai-completions", "apiKey": f"!echo x >> {counter}; echo k",
        "headers": {"X-Token": f"!echo x >> {counter}; echo t", "X-Team": "core"}, "models": [{"id": "m"}]}}})
    registry = ModelRegistry(agent_dir)
    model = registry.find("loc", "m")
    assert registry.get_api_key(model) == "k" and await registry.resolve_api_key(model) == "k"
    assert registry.request_headers(model) == await registry.resolve_request_headers(model) == {
        "X-Token": "t", "X-Team": "core"}
    assert counter.read_text().count("x") == 4


def test_auth_error_message_for_a_provider_without_env_var(agent_dir: Path) -> None:
    write_models(agent_dir, {"providers": {"anthropic": {"models": []},
                                           "corp": {"baseUrl": "https://llm.corp/v1", "api": "openai-completions",
                                                    "apiKey": "$CORP_KEY_UNSET", "models": [{"id": "c"}]}}})
    registry = ModelRegistry(agent_dir)
    message = registry.auth_error_message(registry.find("corp", "c"))
    assert message == (f'No API key for provider "corp": {agent_dir / "models.json"} apiKey: "$CORP_KEY_UNSET" reads '
                       'the environment variable CORP_KEY_UNSET, which is not set. Set "apiKey" for provider "corp" '
                       f"in {agent_dir / 'models.json'}, add it to {agent_dir / 'auth.json'}, or pass --api-key.")


# -- pattern resolution -------------------------------------------------------------------------------------

@pytest.fixture
def registry(agent_dir: Path) -> ModelRegistry:
    write_models(agent_dir, OLLAMA)
    return ModelRegistry(agent_dir)


@pytest.mark.parametrize("pattern, expected, level", [
    ("claude-opus-4-1", "anthropic/claude-opus-4-1", None),
    ("CLAUDE-OPUS-4-1", "anthropic/claude-opus-4-1", None),
    ("anthropic/claude-sonnet-4-20250514", "anthropic/claude-sonnet-4-20250514", None),
    ("openai/gpt-4o", "openai/gpt-4o", None),
    ("gpt-5:high", "openai/gpt-5", "high"),
    ("anthropic/sonnet:minimal", "anthropic/claude-sonnet-4-5", "minimal"),
    ("qwen2.5-coder:7b", "ollama/qwen2.5-coder:7b", None),
    ("qwen2.5-coder:7b:low", "ollama/qwen2.5-coder:7b", "low"),
    ("opus", "anthropic/claude-opus-4-5", None),          # undated aliases, highest version
    ("sonnet-4-5-2025", "anthropic/claude-sonnet-4-5-20250929", None),
    ("Opus 4.1", "anthropic/claude-opus-4-1", None),      # display names match too
    ("gpt-4.1", "openai/gpt-4.1", None),                  # exact beats gpt-4.1-mini
])
def test_resolve_pattern(registry: ModelRegistry, pattern: str, expected: str, level: str | None) -> None:
    model, got_level, error = registry.resolve_model_pattern(pattern)
    assert error is None
    assert f"{model['provider']}/{model['id']}" == expected and got_level == level


def test_invalid_thinking_suffix_is_an_error(registry: ModelRegistry) -> None:
    assert registry.resolve_model_pattern("sonnet:loud") == (
        None, None, 'Invalid thinking level "loud" in model pattern "sonnet:loud". '
                    "Valid levels: off, minimal, low, medium, high, xhigh, max")


def test_no_match_and_unknown_provider(registry: ModelRegistry) -> None:
    assert registry.resolve_model_pattern("gemini-9") == (None, None, 'No model matches "gemini-9"')
    assert registry.resolve_model_pattern("") == (None, None, "Empty model pattern")
    model, _, error = registry.resolve_model_pattern("gpt-5", provider="nosuch")
    assert model is None and error.startswith('Unknown provider "nosuch". Known providers: anthropic, openai')
    assert registry.resolve_model_pattern("opus", provider="openai") == (
        None, None, 'No model matches "opus" for provider "openai"')


def test_provider_argument_restricts_the_search(registry: ModelRegistry) -> None:
    model, _, _ = registry.resolve_model_pattern("mini", provider="openai")
    assert model["provider"] == "openai"
    model, _, _ = registry.resolve_model_pattern("openai/gpt-4o-mini", provider="openai")
    assert model["id"] == "gpt-4o-mini"


def test_fuzzy_match_prefers_models_with_auth(agent_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_models(agent_dir, {"providers": {"local": {"baseUrl": "http://127.0.0.1:1234/v1",
                                                     "api": "openai-completions",
                                                     "models": [{"id": "my-sonnet-finetune-x"}]}}})
    registry = ModelRegistry(agent_dir)
    assert registry.resolve_model_pattern("sonnet")[0]["id"] == "my-sonnet-finetune-x"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk")
    assert registry.resolve_model_pattern("sonnet")[0]["id"] == "claude-sonnet-4-5"


def test_same_id_on_several_providers(agent_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_models(agent_dir, {"providers": {"openrouter": {"models": [{"id": "gpt-4o"}]}}})
    registry = ModelRegistry(agent_dir)
    model, _, error = registry.resolve_model_pattern("gpt-4o")
    assert model is None and "offered by several providers (openai, openrouter)" in error
    assert "--provider" in error
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or")
    assert registry.resolve_model_pattern("gpt-4o")[0]["provider"] == "openrouter"
    assert registry.resolve_model_pattern("openai/gpt-4o")[0]["provider"] == "openai"


def test_slash_ids_still_match_whole(agent_dir: Path) -> None:
    write_models(agent_dir, {"providers": {"openrouter": {"models": [{"id": "anthropic/claude-3.5-haiku"}]}}})
    registry = ModelRegistry(agent_dir)
    model, _, error = registry.resolve_model_pattern("anthropic/claude-3.5-haiku")
    assert error is None and model["provider"] == "openrouter"


# -- initial model ------------------------------------------------------------------------------------------

def settings_with(tmp_path: Path, agent_dir: Path, data: dict):
    (agent_dir / "settings.json").write_text(json.dumps(data))
    return load_settings(tmp_path / "project", agent_dir)


def test_no_credentials_anywhere_gives_no_model(agent_dir: Path, tmp_path: Path) -> None:
    registry = ModelRegistry(agent_dir)
    assert registry.initial_model(settings=load_settings(tmp_path, agent_dir)) == (None, "off", [])


def test_first_model_with_auth_in_catalogue_order(agent_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk")
    model, level, warnings = ModelRegistry(agent_dir).initial_model()
    assert (model["id"], level, warnings) == ("gpt-5", "medium", [])
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk")
    model, level, _ = ModelRegistry(agent_dir).initial_model()
    assert (model["id"], level) == ("claude-sonnet-4-5", "medium")


def test_cli_pattern_wins_and_its_suffix_is_clamped(agent_dir: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk")
    settings = settings_with(tmp_path, agent_dir, {"defaultProvider": "openai", "defaultModel": "gpt-5"})
    registry = ModelRegistry(agent_dir)
    model, level, warnings = registry.initial_model(model_pattern="opus:xhigh", settings=settings)
    assert (model["id"], level) == ("claude-opus-4-5", "high")
    assert warnings == ['Thinking level "xhigh" is not supported by anthropic/claude-opus-4-5; using "high"']
    model, level, _ = registry.initial_model(model_pattern="gpt-4o:high", settings=settings, thinking="low")
    assert (model["id"], level) == ("gpt-4o", "off")


def test_unresolvable_cli_pattern_is_returned_as_the_only_warning(agent_dir: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk")
    assert ModelRegistry(agent_dir).initial_model(model_pattern="nothing-like-this") == (
        None, "off", ['No model matches "nothing-like-this"'])


def test_settings_default_model_and_thinking(agent_dir: Path, tmp_path: Path) -> None:
    settings = settings_with(tmp_path, agent_dir, {"defaultProvider": "anthropic",
                                                   "defaultModel": "claude-haiku-4-5",
                                                   "defaultThinkingLevel": "max"})
    model, level, warnings = ModelRegistry(agent_dir).initial_model(settings=settings)
    assert (model["id"], level, warnings) == ("claude-haiku-4-5", "high", [])  # clamped without noise


def test_per_model_thinking_setting(agent_dir: Path, tmp_path: Path) -> None:
    settings = settings_with(tmp_path, agent_dir, {"defaultModel": "gpt-5", "defaultThinkingLevel": "low",
                                                   "modelThinkingLevels": {"openai/gpt-5": "minimal"}})
    model, level, _ = ModelRegistry(agent_dir).initial_model(settings=settings)
    assert (model["id"], level) == ("gpt-5", "minimal")


def test_missing_settings_default_falls_back_with_a_warning(agent_dir: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk")
    settings = settings_with(tmp_path, agent_dir, {"defaultProvider": "anthropic", "defaultModel": "claude-9"})
    model, level, warnings = ModelRegistry(agent_dir).initial_model(settings=settings)
    assert model["id"] == "gpt-5" and level == "medium"
    assert len(warnings) == 1 and 'Default model "anthropic/claude-9" from settings' in warnings[0]


def test_provider_flag_alone(agent_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    registry = ModelRegistry(agent_dir)
    model, level, _ = registry.initial_model(provider="openai")
    assert (model["id"], level) == ("gpt-5", "medium")
    assert registry.initial_model(provider="nosuch")[0] is None
    assert registry.initial_model(provider="nosuch")[2][0].startswith('Unknown provider "nosuch"')


def test_non_reasoning_default_is_off_and_bad_thinking_flag_warns(agent_dir: Path) -> None:
    model, level, warnings = ModelRegistry(agent_dir).initial_model(model_pattern="gpt-4o-mini", thinking="hot")
    assert (model["id"], level) == ("gpt-4o-mini", "off")
    assert warnings and warnings[0].startswith('Invalid thinking level "hot" ignored')


def test_wrong_types_from_a_client_never_raise(registry: ModelRegistry) -> None:
    assert registry.find(5, None) is None  # type: ignore[arg-type]
    assert registry.resolve_model_pattern(42)[2] == "A model pattern and provider must be strings"  # type: ignore[arg-type]


# -- models.json problems found at load -------------------------------------------------------------------

def test_deeply_nested_models_json_is_reported_not_raised(agent_dir: Path) -> None:
    path = write_models(agent_dir, "[" * 100_000 + "]" * 100_000)
    registry = ModelRegistry(agent_dir)
    [error] = registry.errors
    assert error.startswith(f"{path}: invalid JSON: arrays and objects nested more than")
    assert len(registry.models) == len(BUILTIN_MODELS)


def test_models_json_that_is_not_a_regular_file_is_reported(agent_dir: Path) -> None:
    (agent_dir / "models.json").symlink_to("/dev/zero")
    [error] = ModelRegistry(agent_dir).errors
    assert "not a regular file but a character device" in error and "built-in models still work" in error


def test_unknown_api_bad_url_duplicates_and_empty_provider_are_reported(agent_dir: Path) -> None:
    path = write_models(agent_dir, {"providers": {
        "mind": {"baseUrl": "http://127.0.0.1:1/v1", "api": "telepathy", "apiKey": "k", "models": [{"id": "m"}]},
        "typo": {"baseUrl": "not a url", "api": "openai-completions", "models": [{"id": "t"}]},
        "modelurl": {"api": "openai-completions", "models": [{"id": "u", "baseUrl": "localhost:8000"}]},
        "dup": {"baseUrl": "http://127.0.0.1:1/v1", "api": "openai-completions",
                "models": [{"id": "d", "name": "first"}, {"id": "d", "name": "second"}]},
        "empty": {"baseUrl": "http://127.0.0.1:1/v1", "api": "openai-completions"},
        "nolist": {"baseUrl": "http://127.0.0.1:1/v1", "api": "openai-completions", "models": []},
    }})
    registry = ModelRegistry(agent_dir)
    errors = "\n".join(registry.errors)
    assert all(e.startswith(f"{path}:1: providers.") for e in registry.errors)  # path:line: where
    assert 'providers.mind: "api" "telepathy" is not a known API (' in errors and "openai-completions" in errors
    assert registry.find("mind", "m") is not None  # kept: a plugin may register the API later
    assert 'providers.typo: "baseUrl" must be an http:// or https:// URL' in errors and '"not a url"' in errors
    assert registry.find("typo", "t") is None
    assert 'providers.modelurl.models[0]: "baseUrl" must be an http:// or https:// URL' in errors
    assert 'providers.dup.models[1]: duplicate model id "d" (also models[0])' in errors
    assert registry.find("dup", "d")["name"] == "second"
    assert "providers.empty: adds no models" in errors and "providers.nolist: adds no models" in errors
    assert len(registry.errors) == 6


def test_known_hosts_without_models_are_not_reported(agent_dir: Path) -> None:
    write_models(agent_dir, {"providers": {"anthropic": {"baseUrl": "https://proxy.example.com"},
                                           "groq": {"baseUrl": "https://proxy.example.com/groq/v1"}}})
    assert ModelRegistry(agent_dir).errors == []


def test_errors_note_names_models_json_problems(agent_dir: Path) -> None:
    assert ModelRegistry(agent_dir).errors_note() == ""
    path = write_models(agent_dir, {"providers": {"typo": {"baseUrl": "nope", "api": "openai-completions",
                                                           "models": [{"id": "t"}]}, "x": {}}})
    note = ModelRegistry(agent_dir).errors_note()
    assert note.startswith(f" {path} had errors, so some of its models may have been skipped: line 1: providers.typo:")
    assert note.endswith("(and 1 more problem(s)).")


def test_problems_name_the_line_of_the_offending_key(agent_dir: Path) -> None:
    path = write_models(agent_dir, json.dumps({"providers": {
        "a": {"baseUrl": "http://127.0.0.1:1/v1", "api": "openai-completions", "models": [{"id": "x"}]},
        "b": {"api": "openai-completions", "baseUrl": "127.0.0.1:2/v1", "models": [{"id": "y"}]},
    }}, indent=2))
    lines = path.read_text().splitlines()
    url_line = next(i for i, line in enumerate(lines, 1) if '"127.0.0.1:2/v1"' in line)
    [error] = ModelRegistry(agent_dir).errors
    assert error.startswith(f'{path}:{url_line}: providers.b: "baseUrl" must be an http:// or https:// URL')
    assert ModelRegistry(agent_dir).explain_missing('No model matches "b/y"') == (
        f'No model matches "b/y". {path} has problems, so some of its models were not loaded:\n  {error}')


# -- hosts without built-in models accept any model id ----------------------------------------------------

def test_provider_and_any_model_id_of_a_known_host(agent_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    registry = ModelRegistry(agent_dir)
    assert registry.find("groq", "llama-3.3-70b-versatile") is None
    model, level, error = registry.resolve_model_pattern("llama-3.3-70b-versatile", "groq")
    assert error is None and level is None
    assert model == {"id": "llama-3.3-70b-versatile", "name": "llama-3.3-70b-versatile", "api": "openai-completions",
                     "provider": "groq", "baseUrl": "https://api.groq.com/openai/v1", "reasoning": False,
                     "input": ["text"], "contextWindow": 128_000, "maxTokens": 16_384,
                     "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}
    assert registry.find("groq", "llama-3.3-70b-versatile") is model  # later lookups (set_model) find it
    assert not registry.has_auth(model)
    monkeypatch.setenv("GROQ_API_KEY", "gsk-test")
    assert registry.get_api_key(model) == "gsk-test"


def test_host_prefix_thinking_suffix_and_slashes_in_ids(agent_dir: Path) -> None:
    registry = ModelRegistry(agent_dir)
    model, level, _ = registry.resolve_model_pattern("together/meta-llama/Llama-3-70b:high")
    assert (model["provider"], model["id"], level) == ("together", "meta-llama/Llama-3-70b", "high")
    model, level, _ = registry.resolve_model_pattern("anthropic/claude-sonnet-4.5", "openrouter")
    assert (model["provider"], model["id"], level) == ("openrouter", "anthropic/claude-sonnet-4.5", None)
    model, _, _ = registry.resolve_model_pattern("ollama/qwen2.5-coder:7b")
    assert model["id"] == "qwen2.5-coder:7b" and registry.has_auth(model)  # local server: keyless
    assert registry.get_api_key(model) is None
    assert registry.resolve_model_pattern("nobody/x")[2] == 'No model matches "nobody/x"'
    assert registry.resolve_model_pattern("opus", "openai")[2] == 'No model matches "opus" for provider "openai"'


def test_host_model_takes_the_models_json_provider_entry(agent_dir: Path) -> None:
    write_models(agent_dir, {"providers": {"groq": {"baseUrl": "http://127.0.0.1:9/v1", "apiKey": "literal-key",
                                                    "compat": {"supportsStore": True},
                                                    "models": [{"id": "listed", "contextWindow": 8192}]}}})
    registry = ModelRegistry(agent_dir)
    assert registry.errors == []
    assert registry.resolve_model_pattern("listed", "groq")[0]["contextWindow"] == 8192
    model = registry.resolve_model_pattern("other-model", "groq")[0]
    assert model["baseUrl"] == "http://127.0.0.1:9/v1" and model["compat"] == {"supportsStore": True}
    assert registry.get_api_key(model) == "literal-key"
    registry.reload()
    assert registry.find("groq", "other-model") is not None  # kept across reloads (logout reloads)


def test_initial_model_for_a_host_warns_about_defaults(agent_dir: Path) -> None:
    registry = ModelRegistry(agent_dir)
    model, level, warnings = registry.initial_model(provider="groq", model_pattern="kimi-k2")
    assert (model["provider"], model["id"], level) == ("groq", "kimi-k2", "off")
    assert warnings == [f'Model "kimi-k2" of groq is not described in the catalogue: using defaults (128000-token '
                        "context window, 16384 output tokens, no reasoning, text only); describe it in "
                        f"{agent_dir / 'models.json'} to change them"]
    model, _, warnings = ModelRegistry(agent_dir).initial_model(provider="groq")
    assert model is None and warnings[0].startswith('Provider "groq" has no built-in models: name one with --model')
    model, _, warnings = registry.initial_model(provider="groq")  # once one is named, it is the provider's model
    assert model["id"] == "kimi-k2"
