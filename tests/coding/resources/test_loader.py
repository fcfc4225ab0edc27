"""What a session loads, and the system prompt and commands built from it (through the SDK factory)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent_forge.coding.errors import CommandError
from agent_forge.sdk import create_agent_session, faux_model


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def skill(directory: Path, name: str, description: str = "A skill") -> Path:
    return write(directory / name / "SKILL.md", f"---\nname: {name}\ndescription: {description}\n---\nDo {name}.\n")


@pytest.fixture
def layout(tmp_path):
    """An agent dir and a project (cwd) with one resource of each kind."""
    agent, cwd = tmp_path / "agent", tmp_path / "repo"
    project = cwd / ".agent-forge" / "agent"
    write(agent / "AGENTS.md", "User-wide rule.")
    write(cwd / "AGENTS.md", "Repo rule.")
    write(agent / "prompts" / "review.md", "Review the code.\n")
    write(project / "prompts" / "greet.md", "---\ndescription: Greet people\n---\nHello $1!\n")
    skill(agent / "skills", "user-skill")
    skill(project / "skills", "proj-skill")
    return agent, cwd


def session(agent: Path, cwd: Path, **options):
    return create_agent_session(cwd=str(cwd), agent_dir=agent, model=faux_model(), no_session=True, **options)


def names(s) -> list[str]:
    return [c["name"] for c in s.get_commands()]


def test_everything_loads_and_reaches_prompt_and_commands(layout):
    agent, cwd = layout
    s = session(agent, cwd)
    prompt = s.system_prompt()
    assert prompt.index("User-wide rule.") < prompt.index("Repo rule.") < prompt.index("Current date:")
    assert "proj-skill" in prompt and "user-skill" in prompt and "You are agent-forge" in prompt
    assert names(s) == ["greet", "review", "skill:proj-skill", "skill:user-skill"]
    assert s.resources.expand("/greet Ada") == "Hello Ada!"
    assert s.warnings == []


def test_flags_switch_discovery_off_but_explicit_paths_load(layout, tmp_path):
    agent, cwd = layout
    extra = skill(tmp_path / "extra", "extra-skill").parent
    template = write(tmp_path / "one.md", "One $@")
    s = session(agent, cwd, no_context_files=True, no_skills=True, no_prompt_templates=True,
                skill_paths=[str(extra)], prompt_template_paths=[str(template)])
    assert names(s) == ["one", "skill:extra-skill"]
    commands = s.get_commands()
    assert commands[0]["location"] == "path" and commands[0]["sourceInfo"]["scope"] == "temporary"
    prompt = s.system_prompt()
    assert "Repo rule." not in prompt and "User-wide rule." not in prompt and "extra-skill" in prompt


def test_skills_are_listed_only_when_read_is_active(layout):
    agent, cwd = layout
    s = session(agent, cwd, tool_names=["bash"])
    assert [t.name for t in s.agent.tools] == ["bash"]
    assert "proj-skill" not in s.system_prompt() and "skill:proj-skill" in names(s)


def test_system_prompt_files_and_flags(layout, tmp_path):
    agent, cwd = layout
    write(agent / "SYSTEM.md", "USER SYSTEM")
    write(agent / "APPEND_SYSTEM.md", "USER APPEND")
    prompt = session(agent, cwd).system_prompt()
    assert prompt.startswith("USER SYSTEM") and "USER APPEND" in prompt and "You are agent-forge" not in prompt
    assert "Repo rule." in prompt  # context files, skills, date and cwd still follow a replaced base prompt
    write(cwd / ".agent-forge" / "agent" / "SYSTEM.md", "PROJECT SYSTEM")
    assert session(agent, cwd).system_prompt().startswith("PROJECT SYSTEM")
    flag_file = write(tmp_path / "prompt.txt", "FROM FILE")
    s = session(agent, cwd, system_prompt=str(flag_file), append_system_prompt=["first", "second"])
    prompt = s.system_prompt()
    assert prompt.startswith("FROM FILE") and "first\n\nsecond" in prompt and "USER APPEND" not in prompt
    assert session(agent, cwd, system_prompt="Inline text.").system_prompt().startswith("Inline text.")


def test_system_prompt_files_that_cannot_be_used_are_reported(layout, tmp_path):
    agent, cwd = layout
    write(agent / "SYSTEM.md", "USER SYSTEM")
    os.mkfifo(cwd / ".agent-forge" / "agent" / "SYSTEM.md")
    (cwd / ".agent-forge" / "agent" / "APPEND_SYSTEM.md").symlink_to("/dev/zero")
    write(agent / "APPEND_SYSTEM.md", "x" * (256 * 1024 + 1))
    s = session(agent, cwd)
    assert s.system_prompt().startswith("USER SYSTEM")  # the next file is used
    project = cwd / ".agent-forge" / "agent"
    assert s.warnings == [
        f"{project / 'SYSTEM.md'}: not loaded: not a regular file but a FIFO (named pipe); only regular files are "
        "read",
        f"{project / 'APPEND_SYSTEM.md'}: not loaded: not a regular file but a character device; only regular files "
        "are read",
        f"{agent / 'APPEND_SYSTEM.md'}: not loaded: larger than 256 KB (the limit for prompt files)"]


def test_no_project_resources_skips_the_project_directory(layout):
    agent, cwd = layout
    write(cwd / ".agent-forge" / "agent" / "settings.json", "{not json")
    s = session(agent, cwd, no_project_resources=True)
    assert names(s) == ["review", "skill:user-skill"]
    assert s.warnings == []  # the broken project settings file is not even read
    assert "Repo rule." in s.system_prompt()  # context files are not project resources


def test_settings_paths_skill_commands_and_invalid_files(layout, tmp_path):
    agent, cwd = layout
    skill(tmp_path / "shared-skills", "shared")
    write(agent / "settings.json", json.dumps({"skills": [str(tmp_path / "shared-skills"), "!glob"],
                                               "enableSkillCommands": False, "prompts": "not-a-list"}))
    write(cwd / ".agent-forge" / "agent" / "settings.json", "{broken")
    s = session(agent, cwd)
    assert names(s) == ["greet", "review"]  # skills still work but are not listed
    assert "shared" in s.system_prompt()
    assert s.resources.expand("/skill:shared now").startswith('<skill name="shared"')
    text = "\n".join(s.warnings)
    assert "invalid JSON" in text and "'!glob'" in text and "prompts must be a list" in text


def test_tool_flags(layout):
    agent, cwd = layout
    assert [t.name for t in session(agent, cwd, tool_names=["read", "grep", "find", "ls"]).agent.tools] == [
        "read", "grep", "find", "ls"]
    assert [t.name for t in session(agent, cwd, tool_names=["+grep", "-bash"]).agent.tools] == [
        "read", "edit", "write", "grep"]
    assert session(agent, cwd, no_tools=True).agent.tools == []
    assert session(agent, cwd, no_builtin_tools=True).agent.tools == []
    with pytest.raises(CommandError, match="not both"):
        session(agent, cwd, tool_names=["read", "+grep"])


def test_home_directory_as_cwd_does_not_load_the_agent_dir_twice(tmp_path):
    home = tmp_path / "home"
    agent = home / ".agent-forge" / "agent"
    skill(agent / "skills", "only-once")
    write(agent / "prompts" / "once.md", "Once.\n")
    s = session(agent, home)
    assert names(s) == ["once", "skill:only-once"] and s.warnings == []
    assert s.get_commands()[0]["location"] == "user"
