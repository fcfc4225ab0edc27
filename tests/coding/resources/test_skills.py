"""Skills: discovery under roots, validation (reported, not fatal), the prompt listing and `/skill:` text."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_forge.coding.resources import skills as skills_module
from agent_forge.coding.resources.skills import discover_skills, expand_skill, format_skills_section
from agent_forge.coding.resources.sources import MAX_WALK_DEPTH, ResourceRoot


def write_skill(directory: Path, name: str, description: str | None = "Does things. Use when asked.",
                body: str = "Run scripts/go.sh.", extra: str = "") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    header = f"name: {name}\n" + (f"description: {description}\n" if description is not None else "") + extra
    path = directory / "SKILL.md"
    path.write_text(f"---\n{header}---\n{body}\n")
    return path


def user_root(path: Path) -> ResourceRoot:
    return ResourceRoot(path, "user", "user")


def test_recursive_discovery_stops_at_a_skill_directory(tmp_path):
    root = tmp_path / "skills"
    write_skill(root / "pdf-tools", "pdf-tools")
    write_skill(root / "group" / "web-search", "web-search")
    write_skill(root / "pdf-tools" / "nested", "nested-one")  # inside a skill: not a separate skill
    (root / "README.md").write_text("# my skills\n")  # plain Markdown next to skills is not a skill
    warnings: list[str] = []
    skills = discover_skills([user_root(root)], warnings)
    assert [s.name for s in skills] == ["web-search", "pdf-tools"] and warnings == []  # sorted walk: group/ first
    pdf = next(s for s in skills if s.name == "pdf-tools")
    assert pdf.source_info == {"path": str(root / "pdf-tools" / "SKILL.md"), "source": "local", "scope": "user",
                               "origin": "top-level", "baseDir": str(root)}
    assert pdf.base_dir == root / "pdf-tools" and pdf.body.strip() == "Run scripts/go.sh."


def test_problems_are_reported_and_the_rest_loads(tmp_path):
    root = tmp_path / "skills"
    write_skill(root / "no-desc", "no-desc", description=None)
    write_skill(root / "Bad_Name", "Bad_Name")
    (root / "broken").mkdir()
    (root / "broken" / "SKILL.md").write_text("---\nname: broken\n")
    warnings: list[str] = []
    skills = discover_skills([user_root(root)], warnings)
    assert [s.name for s in skills] == ["Bad_Name"]  # an off-spec name is a warning, not a refusal
    text = "\n".join(warnings)
    assert "no-desc" in text and "description" in text
    assert "Bad_Name" in text and "lowercase" in text
    assert "never closed" in text


def test_missing_name_defaults_to_the_directory_and_first_name_wins(tmp_path):
    project, user = tmp_path / "project", tmp_path / "user"
    (project / "review").mkdir(parents=True)
    (project / "review" / "SKILL.md").write_text("---\ndescription: Project review\n---\nP\n")
    write_skill(user / "review", "review", description="User review")
    warnings: list[str] = []
    skills = discover_skills([ResourceRoot(project, "project", "project"), user_root(user)], warnings)
    assert [(s.name, s.description, s.location) for s in skills] == [("review", "Project review", "project")]
    assert len(warnings) == 1 and "already used" in warnings[0]


def test_single_file_root_and_missing_explicit_path(tmp_path):
    path = write_skill(tmp_path / "one", "one-skill")
    warnings: list[str] = []
    skills = discover_skills([ResourceRoot(path, "temporary", "path"),
                              ResourceRoot(tmp_path / "nope", "temporary", "path"),
                              ResourceRoot(tmp_path / "absent-default", "user", "user")], warnings)
    assert [s.name for s in skills] == ["one-skill"] and skills[0].source_info["scope"] == "temporary"
    assert warnings == [f"{tmp_path / 'nope'}: skill path does not exist"]


def test_prompt_listing_and_expansion(tmp_path):
    write_skill(tmp_path / "a" / "alpha", "alpha", description="Alpha <stuff> & more")
    write_skill(tmp_path / "a" / "hidden", "hidden", extra="disable-model-invocation: true\n")
    skills = discover_skills([user_root(tmp_path / "a")], [])
    section = format_skills_section(skills)
    assert "Alpha &lt;stuff&gt; &amp; more" in section and str(tmp_path / "a" / "alpha" / "SKILL.md") in section
    assert "hidden" not in section  # only explicit /skill:hidden uses it
    text = expand_skill(skills[0], "  extract report.pdf ")
    assert text.startswith('<skill name="alpha"') and "Run scripts/go.sh." in text
    assert f"relative to {tmp_path / 'a' / 'alpha'}" in text
    assert text.endswith("</skill>\n\nextract report.pdf")
    assert expand_skill(skills[0], "").endswith("</skill>")
    assert format_skills_section([s for s in skills if s.name == "hidden"]) is None


# -- trees from an unvetted checkout ------------------------------------------------------------------------

def test_symlink_loop_is_searched_once_and_reported(tmp_path):
    root = tmp_path / "skills"
    write_skill(root / "b-skill", "b-skill")
    (root / "a").mkdir()
    (root / "a" / "up").symlink_to("..")
    (root / "self").symlink_to("self")  # cannot even be examined: skipped, with the OS's reason
    warnings: list[str] = []
    skills = discover_skills([user_root(root)], warnings)
    assert [s.name for s in skills] == ["b-skill"]
    assert warnings == [f"{root / 'a' / 'up'}: not searched again: it leads back to a directory already searched "
                        "(a symbolic link loop?)",
                        f"{root / 'self'}: cannot be examined: Too many levels of symbolic links; skipped"]


@pytest.mark.skipif(not Path("/usr").is_dir(), reason="needs a large system tree")
def test_link_to_usr_is_bounded_and_reported(tmp_path):
    root = tmp_path / "skills"
    write_skill(root / "a-skill", "a-skill")
    (root / "usr").symlink_to("/usr")
    warnings: list[str] = []
    skills = discover_skills([user_root(root)], warnings)
    assert "a-skill" in [s.name for s in skills]
    assert any("stopped after 5000 entries" in w or "not searched" in w for w in warnings)


def test_entry_budget_stops_the_search_with_one_warning(tmp_path, monkeypatch):
    monkeypatch.setattr(skills_module, "MAX_WALK_ENTRIES", 20)
    root = tmp_path / "skills"
    write_skill(root / "a-first", "a-first")
    for index in range(40):
        (root / "many" / f"d{index:02}").mkdir(parents=True)
    write_skill(root / "z-last", "z-last")
    warnings: list[str] = []
    skills = discover_skills([user_root(root)], warnings)
    assert [s.name for s in skills] == ["a-first"]
    assert len(warnings) == 1 and "skill search under" in warnings[0] and "stopped after 20 entries" in warnings[0]


def test_depth_is_bounded(tmp_path):
    root = tmp_path / "skills"
    deep = root.joinpath(*[f"l{i}" for i in range(MAX_WALK_DEPTH + 2)])
    write_skill(deep, "too-deep")
    write_skill(root.joinpath(*[f"m{i}" for i in range(MAX_WALK_DEPTH - 1)]), "deep-enough")
    warnings: list[str] = []
    assert [s.name for s in discover_skills([user_root(root)], warnings)] == ["deep-enough"]
    assert len(warnings) == 1 and f"at most {MAX_WALK_DEPTH} directories below" in warnings[0]


def test_skill_files_that_are_not_regular_files_are_reported(tmp_path):
    root = tmp_path / "skills"
    (root / "zero").mkdir(parents=True)
    (root / "zero" / "SKILL.md").symlink_to("/dev/zero")
    os.mkfifo(root / "pipe.md")
    (root / "loop.md").symlink_to("loop.md")
    write_skill(root / "fine", "fine")
    big = write_skill(root / "big", "big", body="x" * (256 * 1024))
    warnings: list[str] = []
    assert [s.name for s in discover_skills([user_root(root)], warnings)] == ["fine"]
    text = "\n".join(warnings)
    assert f"{root / 'zero' / 'SKILL.md'}: skill not loaded: not a regular file but a character device" in text
    assert f"{root / 'pipe.md'}: skill not loaded: not a regular file but a FIFO" in text
    assert f"{root / 'loop.md'}: skill not loaded: Too many levels of symbolic links" in text
    assert f"{big}: skill not loaded: larger than 256 KB (the limit for prompt files)" in text
