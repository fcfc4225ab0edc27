"""Reading settings and resources again while a session runs: settings change in place (what holds the
`Settings` object sees the new values), resources report what was added and removed."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from support.stale_source import rewrite_in_the_same_second

from agent_forge.coding.resources.loader import ResourceOptions, load_resources
from agent_forge.coding.resources.reload import refresh_settings, reload_resources
from agent_forge.coding.resources.trust import project_policy
from agent_forge.coding.settings import load_settings


def session_in(tmp_path: Path) -> SimpleNamespace:
    agent_dir, cwd = tmp_path / "agent", tmp_path / "work"
    agent_dir.mkdir()
    cwd.mkdir()
    policy = project_policy(cwd, agent_dir)
    settings = load_settings(cwd, agent_dir, include_project=policy.enabled, project_filter=policy.filter_settings)
    resources = load_resources(ResourceOptions(cwd=str(cwd), agent_dir=agent_dir), settings, policy)
    return SimpleNamespace(cwd=str(cwd), settings=settings, resources=resources,
                           registry=SimpleNamespace(agent_dir=agent_dir))


def test_settings_are_refreshed_in_place(tmp_path):
    session = session_in(tmp_path)
    held = session.settings  # what the session's collaborators hold
    assert held.retry.enabled is True
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"retry": {"enabled": False}, "theme": "light"}))
    assert refresh_settings(session) == []
    assert session.settings is held and held.retry.enabled is False and held.get("theme") == "light"
    (tmp_path / "agent" / "settings.json").write_text("{broken")
    problems = refresh_settings(session)
    assert len(problems) == 1 and "settings.json" in problems[0] and held.retry.enabled is True


def test_resources_report_what_was_added_and_removed(tmp_path):
    session = session_in(tmp_path)
    prompts = tmp_path / "agent" / "prompts"
    prompts.mkdir()
    (prompts / "review.md").write_text("Review.\n")
    (tmp_path / "work" / "AGENTS.md").write_text("Be brief.\n")
    resources, changes = reload_resources(session)
    assert session.resources is resources and [t.name for t in resources.templates] == ["review"]
    assert changes["templates"] == (["/review"], [], []) and changes["skills"] == ([], [], [])
    assert changes["context"][0][0].endswith("AGENTS.md")
    (prompts / "review.md").unlink()
    _, changes = reload_resources(session)
    assert changes["templates"] == ([], ["/review"], []) and changes["context"] == ([], [], [])


def test_resources_report_a_changed_content_whatever_the_size_and_mtime_say(tmp_path):
    session = session_in(tmp_path)
    prompts, skill = tmp_path / "agent" / "prompts", tmp_path / "agent" / "skills" / "lint"
    prompts.mkdir()
    skill.mkdir(parents=True)
    files = {prompts / "review.md": ("Review v1.\n", "Review v2.\n"),
             tmp_path / "work" / "AGENTS.md": ("Be brief 1.\n", "Be brief 2.\n"),
             skill / "SKILL.md": ("---\nname: lint\ndescription: lints v1\n---\nLint.\n",
                                  "---\nname: lint\ndescription: lints v2\n---\nLint.\n")}
    for path, (old, _) in files.items():
        path.write_text(old)
    reload_resources(session)
    for path, (_, new) in files.items():
        rewrite_in_the_same_second(path, new)  # only the content tells
    resources, changes = reload_resources(session)
    assert changes["templates"] == ([], [], ["/review"]) and changes["skills"] == ([], [], ["lint"])
    assert changes["context"] == ([], [], [str(tmp_path / "work" / "AGENTS.md")])
    assert resources.templates[0].body == "Review v2."
    _, changes = reload_resources(session)
    assert all(change == ([], [], []) for change in changes.values())
