"""Project trust decisions and the project policy applied to settings."""

from __future__ import annotations

import json

import pytest

from agent_forge.coding.errors import TrustFileError
from agent_forge.coding.resources.trust import load_decisions, project_policy, record_trust, resolve_trust


def test_flag_beats_recorded_decision_beats_setting(tmp_path):
    agent, project = tmp_path / "agent", tmp_path / "work" / "repo"
    project.mkdir(parents=True)
    assert resolve_trust(project, agent).trusted is False  # default "ask": headless modes cannot ask
    assert "cannot ask" in resolve_trust(project, agent).reason
    assert resolve_trust(project, agent, default_setting="always").trusted is True
    assert resolve_trust(project, agent, default_setting="bogus").trusted is False
    record_trust(tmp_path / "work", agent, True)  # an ancestor's decision covers the project
    decision = resolve_trust(project, agent, default_setting="never")
    assert decision.trusted is True and "trusted for" in decision.reason
    record_trust(project, agent, False)  # the closest recorded directory wins
    assert resolve_trust(project, agent, default_setting="always").trusted is False
    assert resolve_trust(project, agent, approve=True).trusted is True
    assert resolve_trust(project, agent, approve=True).reason == "--approve"


def test_trust_file_format_and_malformed_file(tmp_path):
    agent = tmp_path / "agent"
    path = record_trust(tmp_path, agent, True)
    data = json.loads(path.read_text())
    assert data["version"] == 1 and data["projects"][str(tmp_path.resolve())]["trusted"] is True
    assert "decidedAt" in data["projects"][str(tmp_path.resolve())]
    path.write_text("[1, 2]")
    with pytest.raises(TrustFileError, match="expected"):
        load_decisions(agent)
    decision = resolve_trust(tmp_path, agent, default_setting="always")
    assert decision.trusted is True and "ignored" in decision.problem
    with pytest.raises(TrustFileError):
        record_trust(tmp_path, agent, False)  # a malformed file is left alone
    assert path.read_text() == "[1, 2]"


def write_settings(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_policy_filters_code_settings_unless_trusted(tmp_path):
    agent = tmp_path / "agent"
    raw = {"steeringMode": "all", "shellCommandPrefix": "source evil.sh", "defaultProjectTrust": "always"}
    untrusted = project_policy(tmp_path, agent)
    assert untrusted.enabled and not untrusted.code_allowed
    assert untrusted.filter_settings(dict(raw)) == {"steeringMode": "all"}
    text = "\n".join(untrusted.warnings)
    assert "shellCommandPrefix skipped" in text and "--approve" in text
    assert "defaultProjectTrust is only read from the agent dir" in text
    trusted = project_policy(tmp_path, agent, approve=True)
    assert trusted.filter_settings(dict(raw)) == {"steeringMode": "all", "shellCommandPrefix": "source evil.sh"}


def test_project_resources_switch(tmp_path):
    agent = tmp_path / "agent"
    assert project_policy(tmp_path, agent, no_project_resources=True).filter_settings({"a": 1}) == {}
    write_settings(agent / "settings.json", {"projectResources": False, "defaultProjectTrust": "always"})
    policy = project_policy(tmp_path, agent)
    assert policy.enabled is False and policy.trust.trusted is True and policy.code_allowed is False


@pytest.mark.parametrize("make, expected", [
    (lambda p: p.symlink_to("/dev/zero"), "not a regular file but a character device"),
    (lambda p: p.write_text("[" * 100_000 + "]" * 100_000), "nested more than"),
])
def test_unusable_trust_file_is_a_problem_not_a_crash(tmp_path, make, expected):
    agent, project = tmp_path / "agent", tmp_path / "repo"
    agent.mkdir()
    project.mkdir()
    make(agent / "trust.json")
    with pytest.raises(TrustFileError, match=expected):
        load_decisions(agent)
    decision = resolve_trust(project, agent)
    assert decision.trusted is False and expected in decision.problem
    assert "recorded decisions ignored" in decision.problem


def test_policy_ignores_an_unusable_agent_dir_settings_file(tmp_path):
    agent, project = tmp_path / "agent", tmp_path / "repo"
    agent.mkdir()
    project.mkdir()
    (agent / "settings.json").symlink_to("/dev/zero")  # load_settings reports it; the policy uses defaults
    policy = project_policy(project, agent)
    assert policy.enabled and not policy.code_allowed and policy.warnings == []
