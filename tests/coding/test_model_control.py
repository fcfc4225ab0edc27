"""ModelControl: switching and cycling models, scopes, thinking levels, context windows and logout, on real
sessions built from real agent dirs (models.json, settings.json, auth.json in tmp_path)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from agent_forge.ai.catalogue import PROVIDER_ENV_KEYS, context_windows_for
from agent_forge.coding.errors import CommandError
from agent_forge.coding.factory import SessionOptions, create_session
from agent_forge.coding.models.auth_file import AuthStorage
from agent_forge.coding.models.control import format_context_window, parse_context_window, resolve_scope
from agent_forge.coding.models.registry import ModelRegistry

BASE_URL = "http://127.0.0.1:9/v1"  # never contacted: nothing here sends a request
THINK = {"id": "think", "reasoning": True}
PLAIN = {"id": "plain", "reasoning": False}
DEEP = {"id": "deep", "reasoning": True, "thinkingLevels": ["off", "low", "medium", "high", "xhigh"]}
WIDE = {"id": "wide", "reasoning": True, "contextWindow": 400000, "contextWindowOptions": [1000000, 400000]}


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROVIDER_ENV_KEYS.values():
        monkeypatch.delenv(name, raising=False)


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def agent_dir(tmp_path: Path, models: list[dict[str, Any]], *, settings: dict[str, Any] | None = None,
              extra_providers: dict[str, Any] | None = None) -> Path:
    directory = tmp_path / "agent"
    providers = {"fake": {"baseUrl": BASE_URL, "api": "openai-completions", "apiKey": "k", "models": models},
                 **(extra_providers or {})}
    write_json(directory / "models.json", {"providers": providers})
    write_json(directory / "settings.json", settings or {})
    return directory


def session_for(tmp_path: Path, models: list[dict[str, Any]] | None = None, *, settings: dict[str, Any] | None = None,
                extra_providers: dict[str, Any] | None = None, **options: Any):
    directory = agent_dir(tmp_path, models or [THINK, PLAIN, DEEP], settings=settings,
                          extra_providers=extra_providers)
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    options.setdefault("no_session", True)
    return create_session(SessionOptions(cwd=str(project), agent_dir=directory,
                                         session_dir=str(tmp_path / "sessions"), **options))


def key(model: dict[str, Any] | None) -> str | None:
    return f"{model['provider']}/{model['id']}" if model else None


def entries(session, kind: str) -> list[dict[str, Any]]:
    return [e for e in session.store.entries if e["type"] == kind]


def collect(session) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    session.subscribe(events.append)
    return events


# -- set_model ----------------------------------------------------------------------------------------------


def test_set_model_unknown_changes_nothing(tmp_path: Path) -> None:
    session = session_for(tmp_path)
    before = list(session.store.entries)
    with pytest.raises(CommandError, match=r"^Model not found: nope/missing$"):
        session.set_model("nope", "missing")
    assert session.store.entries == before and key(session.model) == "fake/think"


def test_set_model_records_the_change_and_clamps_the_thinking_level(tmp_path: Path) -> None:
    session = session_for(tmp_path)
    session.set_thinking_level("high")
    model = session.set_model("fake", "plain")
    assert model["id"] == "plain" and session.agent.thinking_level == "off"
    assert entries(session, "model_change")[-1] | {"id": None, "parentId": None, "timestamp": None} == {
        "type": "model_change", "provider": "fake", "modelId": "plain", "id": None, "parentId": None,
        "timestamp": None}
    assert entries(session, "thinking_level_change")[-1]["thinkingLevel"] == "off"


def test_set_model_without_credentials_names_the_fix(tmp_path: Path) -> None:
    session = session_for(tmp_path)
    with pytest.raises(CommandError, match="ANTHROPIC_API_KEY"):
        session.set_model("anthropic", "claude-opus-4-5")
    assert key(session.model) == "fake/think"


# -- cycle_model --------------------------------------------------------------------------------------------


def test_cycle_model_walks_the_available_models_and_wraps(tmp_path: Path) -> None:
    session = session_for(tmp_path)
    seen = [session.model_control.cycle_model() for _ in range(3)]
    assert [key(r["model"]) for r in seen] == ["fake/plain", "fake/deep", "fake/think"]
    assert all(r["isScoped"] is False for r in seen)
    assert [e["modelId"] for e in entries(session, "model_change")][-3:] == ["plain", "deep", "think"]
    assert seen[-1]["model"] is session.model


def test_cycle_model_keeps_the_current_level_clamped(tmp_path: Path) -> None:
    session = session_for(tmp_path)
    session.set_thinking_level("high")
    levels = [session.model_control.cycle_model()["thinkingLevel"] for _ in range(2)]
    assert levels == ["off", "off"]  # plain cannot think; deep keeps the level it arrived with


def test_cycle_model_with_one_model_is_null(tmp_path: Path) -> None:
    session = session_for(tmp_path, [THINK])
    assert session.model_control.cycle_model() is None
    assert key(session.model) == "fake/think"


def test_models_option_scopes_start_up_and_cycling(tmp_path: Path) -> None:
    session = session_for(tmp_path, scoped_models="fake/deep:xhigh, PLAIN")
    assert key(session.model) == "fake/deep" and session.agent.thinking_level == "xhigh"
    first = session.model_control.cycle_model()
    second = session.model_control.cycle_model()
    assert (key(first["model"]), first["thinkingLevel"], first["isScoped"]) == ("fake/plain", "off", True)
    assert (key(second["model"]), second["thinkingLevel"]) == ("fake/deep", "xhigh")


def test_scope_keeps_the_settings_default_when_it_is_in_scope(tmp_path: Path) -> None:
    settings = {"defaultProvider": "fake", "defaultModel": "plain", "enabledModels": ["fake/*"]}
    session = session_for(tmp_path, settings=settings)
    assert key(session.model) == "fake/plain"
    assert [key(s.model) for s in session.model_control.scope] == ["fake/think", "fake/plain", "fake/deep"]


def test_enabled_models_setting_scopes_and_reports_bad_patterns(tmp_path: Path) -> None:
    session = session_for(tmp_path, settings={"enabledModels": ["*EE*", "nothing-like-this"]})
    assert [key(s.model) for s in session.model_control.scope] == ["fake/deep"]
    assert any('no available model matches "nothing-like-this"' in w for w in session.warnings)
    assert session.model_control.cycle_model() is None  # a scope of one


def test_models_option_wins_over_enabled_models(tmp_path: Path) -> None:
    session = session_for(tmp_path, settings={"enabledModels": ["fake/deep"]}, scoped_models="think,plain")
    assert [key(s.model) for s in session.model_control.scope] == ["fake/think", "fake/plain"]


def test_malformed_enabled_models_is_a_warning(tmp_path: Path) -> None:
    session = session_for(tmp_path, settings={"enabledModels": 42})
    assert session.model_control.scope == []
    assert any("enabledModels must be a list" in w for w in session.warnings)


def test_resolve_scope_exact_ids_across_providers_and_order(tmp_path: Path) -> None:
    twin = {"twin": {"baseUrl": BASE_URL, "api": "openai-completions", "apiKey": "k", "models": [THINK]}}
    registry = ModelRegistry(agent_dir(tmp_path, [THINK, PLAIN], extra_providers=twin))
    scope, warnings = resolve_scope(registry, ["plain:low", "think", "fake/plain:high"])
    assert [(key(s.model), s.thinking_level) for s in scope] == [
        ("fake/plain", "low"), ("fake/think", None), ("twin/think", None)]
    assert warnings == ['Model "think" is offered by several providers (fake, twin); each is in the scope']


def test_resolve_scope_uses_only_models_with_credentials(tmp_path: Path) -> None:
    registry = ModelRegistry(agent_dir(tmp_path, [THINK]))
    scope, warnings = resolve_scope(registry, ["claude-*", "anthropic/claude-opus-4-5", "thi"])
    assert [key(s.model) for s in scope] == ["fake/think"]  # "thi" matches fuzzily
    assert len(warnings) == 2


# -- thinking levels ----------------------------------------------------------------------------------------


def test_invalid_and_unsupported_levels_are_refused(tmp_path: Path) -> None:
    session = session_for(tmp_path)
    count = len(session.store.entries)
    with pytest.raises(CommandError, match=r"^Invalid thinking level: bogus\. Valid levels: off, "):
        session.set_thinking_level("bogus")
    with pytest.raises(CommandError) as refused:
        session.set_thinking_level("xhigh")
    assert str(refused.value) == ('Thinking level "xhigh" is not supported by fake/think. '
                                  "Supported levels: off, minimal, low, medium, high")
    assert session.agent.thinking_level == "medium" and len(session.store.entries) == count
    session.set_model("fake", "deep")
    session.set_thinking_level("xhigh")
    assert session.agent.thinking_level == "xhigh"
    assert entries(session, "thinking_level_change")[-1]["thinkingLevel"] == "xhigh"


def test_non_reasoning_model_accepts_only_off(tmp_path: Path) -> None:
    session = session_for(tmp_path, [PLAIN])
    session.set_thinking_level("off")
    with pytest.raises(CommandError, match="Supported levels: off$"):
        session.set_thinking_level("low")


def test_cycle_thinking_level_wraps_and_is_null_without_reasoning(tmp_path: Path) -> None:
    session = session_for(tmp_path)
    control = session.model_control
    assert [control.cycle_thinking_level()["level"] for _ in range(3)] == ["high", "off", "minimal"]
    assert [e["thinkingLevel"] for e in entries(session, "thinking_level_change")][-3:] == ["high", "off", "minimal"]
    session.set_model("fake", "plain")
    count = len(session.store.entries)
    assert control.cycle_thinking_level() is None and len(session.store.entries) == count


def test_available_thinking_levels_follow_the_model(tmp_path: Path) -> None:
    session = session_for(tmp_path)
    assert session.available_thinking_levels() == ["off", "minimal", "low", "medium", "high"]
    session.set_model("fake", "deep")
    assert session.available_thinking_levels() == ["off", "low", "medium", "high", "xhigh"]


# -- context windows ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "tokens"), [
    (400000, 400000), ("400k", 400000), ("1m", 1000000), ("1M", 1000000), (" 1.5m ", 1500000),
    ("200000", 200000), (1e6, 1000000), ("128K", 128000)])
def test_parse_context_window(value: Any, tokens: int) -> None:
    assert parse_context_window(value) == tokens


@pytest.mark.parametrize("value", ["", "abc", "1g", "-5", "0", 0, -1, 1.5, True, None, "0.0001k", float("inf"), [1],
                                   "٤٠٠k", "４００ｋ", "1٠m", "²k"])  # ASCII digits only
def test_parse_context_window_rejects(value: Any) -> None:
    with pytest.raises(CommandError, match="Invalid context window"):
        parse_context_window(value)


def test_format_context_window() -> None:
    assert [format_context_window(n) for n in (1_000_000, 2_000_000, 400_000, 1_500_000, 1_047_576)] == [
        "1m", "2m", "400k", "1500k", "1047576"]


def test_context_windows_are_ascending_and_include_the_default() -> None:
    assert context_windows_for({"contextWindow": 300, "contextWindowOptions": [900, 100]}) == [100, 300, 900]
    assert context_windows_for({"contextWindow": 300, "defaultContextWindow": 200}) == [200]


def test_select_a_context_window(tmp_path: Path) -> None:
    session = session_for(tmp_path, [WIDE, THINK])
    events = collect(session)
    control = session.model_control
    assert control.available_context_windows() == {
        "contextWindows": [400000, 1000000], "currentContextWindow": 400000, "supportsSelection": True}
    control.set_context_window("1m")
    assert session.get_state()["model"]["contextWindow"] == 1000000
    assert session.model["defaultContextWindow"] == 400000
    assert session.registry.find("fake", "wide")["contextWindow"] == 400000  # the catalogue is not changed
    assert events == [{"type": "context_window_changed", "contextWindow": 1000000,
                       "previousContextWindow": 400000, "provider": "fake", "modelId": "wide"}]
    entry = entries(session, "context_window_change")[-1]
    assert (entry["provider"], entry["modelId"], entry["contextWindow"]) == ("fake", "wide", 1000000)
    control.set_context_window(1000000)
    assert len(events) == 1 and len(entries(session, "context_window_change")) == 1  # no change, no record


def test_unsupported_context_window_error_text(tmp_path: Path) -> None:
    session = session_for(tmp_path, [WIDE])
    with pytest.raises(CommandError) as refused:
        session.model_control.set_context_window("2m")
    assert str(refused.value) == "Context window 2m is not supported by fake/wide. Supported values: 400k, 1m."
    assert session.model["contextWindow"] == 400000


def test_model_without_options_has_one_window(tmp_path: Path) -> None:
    session = session_for(tmp_path)
    assert session.model_control.available_context_windows() == {
        "contextWindows": [128000], "currentContextWindow": 128000, "supportsSelection": False}
    session.model_control.set_context_window("128k")
    with pytest.raises(CommandError, match="Supported values: 128k.$"):
        session.model_control.set_context_window("1m")


def test_the_selection_follows_the_model_and_survives_a_resume(tmp_path: Path) -> None:
    session = session_for(tmp_path, [WIDE, THINK], no_session=False)
    session.model_control.set_context_window("1m")
    session.set_model("fake", "think")
    assert session.model["contextWindow"] == 128000
    session.set_model("fake", "wide")
    assert session.model["contextWindow"] == 1000000
    session.store.append_message({"role": "user", "content": "hi", "timestamp": 1})  # creates the file
    path = str(session.store.path)
    session.store.close()
    resumed = session_for(tmp_path, [WIDE, THINK], no_session=False, session_file=path)
    assert key(resumed.model) == "fake/wide" and resumed.model["contextWindow"] == 1000000


def test_context_window_option_at_start_up(tmp_path: Path) -> None:
    session = session_for(tmp_path, [WIDE], context_window="1m")
    assert session.model["contextWindow"] == 1000000
    assert entries(session, "context_window_change")[-1]["contextWindow"] == 1000000
    with pytest.raises(CommandError, match="Context window 2m is not supported by fake/wide"):
        session_for(tmp_path, [WIDE], context_window="2m")


def test_settings_default_context_windows_are_read(tmp_path: Path) -> None:
    session = session_for(tmp_path, [WIDE], settings={"defaultContextWindows": {"fake/wide": "1m"}})
    assert session.model["contextWindow"] == 1000000
    ignored = session_for(tmp_path, [WIDE], settings={"defaultContextWindows": {"fake/wide": "3m"}})
    assert ignored.model["contextWindow"] == 400000


def test_context_window_without_a_model(tmp_path: Path) -> None:
    session = session_for(tmp_path, [THINK], extra_providers={})
    session.agent.model = None
    assert session.model_control.available_context_windows() == {"contextWindows": [], "supportsSelection": False}
    with pytest.raises(CommandError, match="No model is selected"):
        session.model_control.set_context_window("1m")


def test_one_million_anthropic_window_sends_the_beta_header(tmp_path: Path) -> None:
    write_json(tmp_path / "agent" / "models.json", {"providers": {"anthropic": {"headers": {
        "anthropic-beta": "fine-grained-tool-streaming-2025-05-14"}}}})
    registry = ModelRegistry(tmp_path / "agent")
    sonnet = registry.find("anthropic", "claude-sonnet-4-5")
    assert "anthropic-beta" in registry.request_headers(sonnet)
    assert "context-1m" not in registry.request_headers(sonnet)["anthropic-beta"]
    wide = {**sonnet, "contextWindow": 1_000_000}
    assert registry.request_headers(wide)["anthropic-beta"] == (
        "fine-grained-tool-streaming-2025-05-14,context-1m-2025-08-07")


# -- logout -------------------------------------------------------------------------------------------------


GROQ = {"groq": {"baseUrl": BASE_URL, "api": "openai-completions", "models": [{"id": "g1"}]}}


def with_groq_login(tmp_path: Path, **options: Any):
    auth = AuthStorage(tmp_path / "agent" / "auth.json")
    auth.set("groq", {"type": "api_key", "key": "gsk-stored"})
    auth.set("openai", {"type": "api_key", "key": "sk-other"})
    return session_for(tmp_path, [THINK], extra_providers=GROQ, **options)


def test_logout_removes_only_that_credential(tmp_path: Path) -> None:
    session = with_groq_login(tmp_path)
    assert "groq/g1" in [key(m) for m in session.model_control.available_models()]
    result = session.model_control.logout_provider("groq")
    assert result["provider"] == "groq" and result["authStatus"] == {"configured": False}
    assert "groq/g1" not in [key(m) for m in result["models"]] and "fake/think" in [key(m) for m in result["models"]]
    assert "scopedModels" not in result
    auth_path = tmp_path / "agent" / "auth.json"
    assert json.loads(auth_path.read_text()) == {"openai": {"type": "api_key", "key": "sk-other"}}
    assert stat.S_IMODE(os.stat(auth_path).st_mode) == 0o600
    assert session.model_control.logout_provider("groq")["authStatus"] == {"configured": False}  # idempotent


def test_logout_reports_an_environment_key_that_remains(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session = with_groq_login(tmp_path, scoped_models="g1,think")
    monkeypatch.setenv("GROQ_API_KEY", "gsk-env")
    result = session.model_control.logout_provider("groq")
    assert result["authStatus"] == {"configured": True, "source": "environment", "label": "GROQ_API_KEY"}
    assert [key(m) for m in result["scopedModels"]] == ["groq/g1", "fake/think"]
    monkeypatch.delenv("GROQ_API_KEY")
    assert [key(m) for m in session.model_control.logout_provider("groq")["scopedModels"]] == ["fake/think"]


def test_logout_status_for_models_json_keys_and_unknown_providers(tmp_path: Path) -> None:
    session = with_groq_login(tmp_path)
    status = session.model_control.logout_provider("fake")["authStatus"]
    assert status == {"configured": True, "source": "models.json", "label": str(tmp_path / "agent" / "models.json")}
    with pytest.raises(CommandError, match='Unknown provider "nobody"'):
        session.model_control.logout_provider("nobody")


def test_logout_refuses_to_overwrite_a_broken_auth_file(tmp_path: Path) -> None:
    session = with_groq_login(tmp_path)
    auth_path = tmp_path / "agent" / "auth.json"
    auth_path.write_text("{not json", encoding="utf-8")
    with pytest.raises(CommandError, match="Cannot log out of groq"):
        session.model_control.logout_provider("groq")
    assert auth_path.read_text() == "{not json"


# -- settings.json is never written -------------------------------------------------------------------------


def test_model_commands_never_write_settings(tmp_path: Path) -> None:
    settings = {"defaultProvider": "fake", "defaultModel": "think", "defaultThinkingLevel": "low",
                "enabledModels": ["think", "wide"]}
    session = session_for(tmp_path, [THINK, WIDE], settings=settings)
    path = tmp_path / "agent" / "settings.json"
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    control = session.model_control
    control.cycle_model()
    control.set_context_window("1m")
    control.cycle_thinking_level()
    session.set_thinking_level("high")
    session.set_model("fake", "think")
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
    assert not (tmp_path / "project" / ".agent-forge").exists()
