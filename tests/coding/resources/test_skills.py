"""Skills: discovery under roots, validation (reported, not fatal), the prompt listing and `/skill:` text."""

from __future__ import annotations

from pathlib import Path

from agent_forge.coding.resources.skills import discover_skills, expand_skill, format_skills_section
from agent_forge.coding.resources.sources import ResourceRoot


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
