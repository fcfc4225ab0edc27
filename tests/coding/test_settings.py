"""Settings: merging the agent-dir and project files, defaults, and reporting bad files without raising."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent_forge.coding.settings import CompactionSettings, RetrySettings, load_settings


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    agent = tmp_path / "agent"
    project = tmp_path / "project"
    agent.mkdir()
    project.mkdir()
    return agent, project


def write_global(agent: Path, data: object) -> Path:
    path = agent / "settings.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def write_project(project: Path, data: object) -> Path:
    path = project / ".agent-forge" / "agent" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_defaults_without_files(dirs: tuple[Path, Path]) -> None:
    agent, project = dirs
    settings = load_settings(project, agent)
    assert settings.errors == []
    assert settings.default_provider is None and settings.default_model is None
    assert settings.default_thinking_level is None
    assert settings.steering_mode == "one-at-a-time" and settings.follow_up_mode == "one-at-a-time"
    assert settings.retry == RetrySettings(enabled=True, max_retries=3, base_delay_ms=2000, max_delay_ms=60000)
    assert settings.compaction == CompactionSettings(enabled=True, reserve_tokens=16384,
                                                     keep_recent_tokens=20000, strategy="summary")


def test_project_wins_and_nested_objects_merge_key_by_key(dirs: tuple[Path, Path]) -> None:
    agent, project = dirs
    write_global(agent, {"defaultProvider": "anthropic", "defaultModel": "claude-opus-4-5",
                         "retry": {"maxRetries": 5, "baseDelayMs": 100}, "skills": ["a", "b"],
                         "theme": "dark"})
    write_project(project, {"defaultModel": "claude-haiku-4-5", "retry": {"maxRetries": 1},
                            "skills": ["c"], "steeringMode": "all"})
    settings = load_settings(project, agent)
    assert settings.errors == []
    assert settings.default_provider == "anthropic"
    assert settings.default_model == "claude-haiku-4-5"
    assert settings.retry.max_retries == 1 and settings.retry.base_delay_ms == 100
    assert settings.steering_mode == "all"
    assert settings.raw["skills"] == ["c"]  # lists are replaced, not concatenated
    assert settings.raw["theme"] == "dark"
    assert settings.global_raw["skills"] == ["a", "b"] and settings.project_raw["skills"] == ["c"]


def test_invalid_project_json_is_reported_and_global_still_applies(dirs: tuple[Path, Path]) -> None:
    agent, project = dirs
    write_global(agent, {"followUpMode": "all"})
    bad = write_project(project, '{"defaultModel": "x",\n  oops}')
    settings = load_settings(project, agent)
    assert settings.follow_up_mode == "all"
    assert settings.default_model is None
    [error] = settings.errors
    assert error.path == bad
    assert "invalid JSON at line 2" in error.message
    assert str(bad) in str(error)


@pytest.mark.parametrize("content, kind", [("[1, 2]", "an array"), ('"text"', "a string"), ("null", "null")])
def test_non_object_file_is_reported(dirs: tuple[Path, Path], content: str, kind: str) -> None:
    agent, project = dirs
    path = write_global(agent, content)
    settings = load_settings(project, agent)
    assert [str(e) for e in settings.errors] == [f"{path}: expected a JSON object, got {kind}; file ignored"]
    assert settings.raw == {}


def test_unreadable_bytes_are_reported(dirs: tuple[Path, Path]) -> None:
    agent, project = dirs
    path = agent / "settings.json"
    path.write_bytes(b'{"theme": "\xff\xfe"}')
    settings = load_settings(project, agent)
    assert len(settings.errors) == 1 and settings.errors[0].path == path
    assert "cannot read" in settings.errors[0].message


def test_empty_file_is_an_empty_object(dirs: tuple[Path, Path]) -> None:
    agent, project = dirs
    write_global(agent, "  \n")
    assert load_settings(project, agent).errors == []


def test_wrong_types_fall_back_to_defaults_and_name_the_file(dirs: tuple[Path, Path]) -> None:
    agent, project = dirs
    write_global(agent, {"retry": {"maxRetries": 7}})
    project_file = write_project(project, {"steeringMode": "sometimes", "retry": {"maxRetries": "many"},
                                           "compaction": True, "defaultThinkingLevel": "huge"})
    settings = load_settings(project, agent)
    assert settings.steering_mode == "one-at-a-time"
    assert settings.retry.max_retries == 3
    assert settings.compaction.enabled is True
    assert settings.default_thinking_level is None
    messages = {e.message.split(" must ")[0]: e for e in settings.errors}
    assert set(messages) == {"steeringMode", "retry.maxRetries", "compaction", "defaultThinkingLevel"}
    assert all(e.path == project_file for e in settings.errors)


def test_agent_dir_defaults_to_the_environment_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = tmp_path / "custom-agent"
    agent.mkdir()
    write_global(agent, {"defaultProvider": "openai"})
    monkeypatch.setenv("AGENT_FORGE_DIR", str(agent))
    assert load_settings(tmp_path / "elsewhere").default_provider == "openai"


def test_project_dir_that_is_the_agent_dir_is_read_once(tmp_path: Path) -> None:
    agent = tmp_path / ".agent-forge" / "agent"
    agent.mkdir(parents=True)
    write_global(agent, "{broken")
    settings = load_settings(tmp_path, agent)
    assert len(settings.errors) == 1


def test_compaction_model_overrides_and_strategy(dirs: tuple[Path, Path]) -> None:
    agent, project = dirs
    write_global(agent, {"compaction": {"reserveTokens": 1000, "strategy": "verbatim-lines",
                                        "modelOverrides": {"openai/gpt-5": {"keepRecentTokens": 5}}}})
    settings = load_settings(project, agent)
    assert settings.compaction.reserve_tokens == 1000
    assert settings.compaction.strategy == "verbatim-lines"
    tuned = settings.compaction_for("openai", "gpt-5")
    assert (tuned.reserve_tokens, tuned.keep_recent_tokens) == (1000, 5)
    assert settings.compaction_for("openai", "gpt-4o").keep_recent_tokens == 20000


def test_compaction_budgets_are_capped_at_a_quarter_of_the_window_unless_overridden(dirs: tuple[Path, Path]) -> None:
    agent, project = dirs
    write_global(agent, {"compaction": {"modelOverrides": {"local/big-keep": {"keepRecentTokens": 6000}}}})
    settings = load_settings(project, agent)
    small = settings.compaction_for("local", "m", 8192)
    assert (small.reserve_tokens, small.keep_recent_tokens) == (2048, 2048)  # defaults 16384 / 20000
    large = settings.compaction_for("anthropic", "opus", 200_000)
    assert (large.reserve_tokens, large.keep_recent_tokens) == (16384, 20000)  # below the cap: unchanged
    chosen = settings.compaction_for("local", "big-keep", 8192)
    assert (chosen.reserve_tokens, chosen.keep_recent_tokens) == (2048, 6000)  # a model override is taken as is
    assert settings.compaction_for("local", "m", 0).keep_recent_tokens == 20000  # no known window: no cap


def test_model_thinking_levels(dirs: tuple[Path, Path]) -> None:
    agent, project = dirs
    write_project(project, {"modelThinkingLevels": {"anthropic/claude-opus-4-5": "high", "x/y": "loud"},
                            "defaultThinkingLevel": "low"})
    settings = load_settings(project, agent)
    assert settings.model_thinking_level("anthropic", "claude-opus-4-5") == "high"
    assert settings.model_thinking_level("x", "y") is None
    assert settings.default_thinking_level == "low"


def test_shell_settings(dirs: tuple[Path, Path]) -> None:
    agent, project = dirs
    assert (load_settings(project, agent).shell_path, load_settings(project, agent).shell_command_prefix) == \
        (None, None)
    write_global(agent, {"shellPath": "~/bin/zsh", "shellCommandPrefix": "shopt -s expand_aliases"})
    settings = load_settings(project, agent)
    assert (settings.shell_path, settings.shell_command_prefix) == ("~/bin/zsh", "shopt -s expand_aliases")
    path = write_global(agent, {"shellPath": 7, "shellCommandPrefix": ""})
    settings = load_settings(project, agent)
    assert (settings.shell_path, settings.shell_command_prefix) == (None, None)
    assert [str(e) for e in settings.errors] == [
        f"{path}:1: shellPath must be a non-empty string (the path of a shell), got 7; using the default"]


def test_loading_never_writes(dirs: tuple[Path, Path]) -> None:
    agent, project = dirs
    path = write_global(agent, {"steeringMode": "all"})
    before = (path.read_bytes(), os.stat(path).st_mtime_ns, sorted(os.listdir(agent)))
    load_settings(project, agent)
    assert (path.read_bytes(), os.stat(path).st_mtime_ns, sorted(os.listdir(agent))) == before
    assert not (project / ".agent-forge").exists()


# -- files from an unvetted checkout (safe_read.py) ---------------------------------------------------------

def project_link(project: Path, target: str | Path) -> Path:
    path = project / ".agent-forge" / "agent" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)
    return path


def test_project_settings_linked_to_dev_zero_are_refused_without_reading(dirs: tuple[Path, Path]) -> None:
    agent, project = dirs
    write_global(agent, {"steeringMode": "all"})
    path = project_link(project, "/dev/zero")
    settings = load_settings(project, agent)
    assert settings.steering_mode == "all"
    [error] = settings.errors
    assert error.path == path and "not a regular file but a character device" in error.message
    assert error.message.endswith("file ignored")


def test_project_settings_linked_to_a_pipe_leave_the_pipe_alone(dirs: tuple[Path, Path]) -> None:
    agent, project = dirs
    read_end, write_end = os.pipe()  # what /dev/stdin is in RPC mode
    try:
        os.write(write_end, b"client command\n")
        project_link(project, f"/proc/self/fd/{read_end}")
        [error] = load_settings(project, agent).errors
        assert "FIFO" in error.message
        assert os.read(read_end, 100) == b"client command\n"
    finally:
        os.close(read_end)
        os.close(write_end)


def test_agent_dir_settings_fifo_is_refused(dirs: tuple[Path, Path]) -> None:
    agent, project = dirs
    os.mkfifo(agent / "settings.json")
    settings = load_settings(project, agent)
    assert [e.message for e in settings.errors] == [
        "not a regular file but a FIFO (named pipe); only regular files are read; file ignored"]


def test_settings_over_one_megabyte_are_refused(dirs: tuple[Path, Path]) -> None:
    agent, project = dirs
    write_project(project, json.dumps({"theme": "x" * (1024 * 1024)}))
    [error] = load_settings(project, agent).errors
    assert "larger than 1 MB (the limit for configuration files)" in error.message


@pytest.mark.parametrize("scope", ["global", "project"])
def test_deeply_nested_settings_are_an_error_not_a_crash(dirs: tuple[Path, Path], scope: str) -> None:
    agent, project = dirs
    text = "[" * 100_000 + "]" * 100_000
    path = write_global(agent, text) if scope == "global" else write_project(project, text)
    [error] = load_settings(project, agent).errors
    assert error.path == path and "nested more than" in error.message


def test_project_settings_link_loop_is_reported(dirs: tuple[Path, Path]) -> None:
    agent, project = dirs
    path = project / ".agent-forge" / "agent" / "settings.json"
    path.parent.mkdir(parents=True)
    path.symlink_to(path)
    [error] = load_settings(project, agent).errors
    assert error.path == path and "Too many levels of symbolic links" in error.message


@pytest.mark.parametrize("value, seconds, problem", [
    (None, 120.0, False), (2500, 2.5, False), (0, None, False), ("disabled", None, False),
    ("soon", 120.0, True), (-1, 120.0, True), (1.5, 120.0, True),
])
def test_http_idle_timeout(dirs: tuple[Path, Path], value: object, seconds: float | None, problem: bool) -> None:
    agent, project = dirs
    write_global(agent, {} if value is None else {"httpIdleTimeoutMs": value})
    settings = load_settings(project, agent)
    assert settings.http_idle_timeout_s == seconds
    assert [("httpIdleTimeoutMs" in str(e)) for e in settings.errors] == ([True] if problem else [])


def test_a_key_written_twice_is_reported_in_either_file_and_the_last_value_counts(dirs: tuple[Path, Path]) -> None:
    agent, project = dirs
    agent_file = write_global(agent, '{"retry": {"maxRetries": 1,\n "maxRetries": 5}}')
    project_file = write_project(project, '{"steeringMode": "all",\n\n "steeringMode": "one-at-a-time"}')
    settings = load_settings(project, agent)
    assert settings.retry.max_retries == 5 and settings.steering_mode == "one-at-a-time"
    assert [str(error) for error in settings.errors] == [
        f'{agent_file}:2: retry: duplicate key "maxRetries" (lines 1 and 2); only the last one (line 2) is used, '
        "the earlier one ignored",
        f'{project_file}:3: duplicate key "steeringMode" (lines 1 and 3); only the last one (line 3) is used, '
        "the earlier one ignored"]
