"""`get_commands` items: plugin sources first, then templates and skills, with `sourceInfo`, `location`, `path`."""

from __future__ import annotations

from typing import Any

from agent_forge.coding.resources.commands import collect_commands
from agent_forge.coding.resources.skills import discover_skills
from agent_forge.coding.resources.sources import ResourceRoot
from agent_forge.coding.resources.templates import discover_templates


def fixtures(tmp_path):
    prompts, skills = tmp_path / "prompts", tmp_path / "skills" / "hello"
    prompts.mkdir()
    skills.mkdir(parents=True)
    (prompts / "fix-tests.md").write_text("---\ndescription: Fix failing tests\n---\nFix them.\n")
    (skills / "SKILL.md").write_text("---\nname: hello\ndescription: Greets\n---\nSay hi.\n")
    templates = discover_templates([ResourceRoot(prompts, "project", "project")], [])
    found = discover_skills([ResourceRoot(tmp_path / "skills", "user", "user")], [])
    return templates, found


def test_order_and_shapes(tmp_path):
    templates, skills = fixtures(tmp_path)
    plugin_item = {"name": "session-name", "source": "capability",
                   "sourceInfo": {"path": "<plugin:p:session-name>", "source": "p", "scope": "temporary",
                                  "origin": "top-level"}}
    items = collect_commands([lambda: [plugin_item]], templates, skills)
    assert [i["name"] for i in items] == ["session-name", "fix-tests", "skill:hello"]
    assert items[0]["path"] == "<plugin:p:session-name>" and "location" not in items[0]
    assert items[1] == {"name": "fix-tests", "description": "Fix failing tests", "source": "prompt",
                        "sourceInfo": {"path": str(tmp_path / "prompts" / "fix-tests.md"), "source": "local",
                                       "scope": "project", "origin": "top-level",
                                       "baseDir": str(tmp_path / "prompts")},
                        "location": "project", "path": str(tmp_path / "prompts" / "fix-tests.md")}
    assert items[2]["source"] == "skill" and items[2]["location"] == "user"
    assert items[2]["sourceInfo"]["baseDir"] == str(tmp_path / "skills")


def test_failing_source_is_reported_and_skipped(tmp_path):
    templates, skills = fixtures(tmp_path)
    failures = []

    def broken():
        raise RuntimeError("plugin bug")

    items = collect_commands([broken], templates, skills, list_skills=False,
                             on_error=lambda source, exc: failures.append(str(exc)))
    assert [i["name"] for i in items] == ["fix-tests"] and failures == ["plugin bug"]


def test_plugin_command_shadows_a_template_of_the_same_name(tmp_path):
    templates, skills = fixtures(tmp_path)
    plugin_item = {"name": "fix-tests", "source": "capability",
                   "sourceInfo": {"path": "<plugin:p:fix-tests>", "source": "p", "scope": "user",
                                  "origin": "top-level"}}
    items = collect_commands([lambda: [plugin_item]], templates, skills)
    assert [(i["name"], i["source"]) for i in items] == [("fix-tests", "capability"), ("skill:hello", "skill")]


def test_a_template_argument_hint_is_listed_as_argument_hint(tmp_path):
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "review.md").write_text('---\nargument-hint: "<file>   [focus]"\n---\nReview $1.\n')
    (prompts / "plain.md").write_text("Plain.\n")
    templates = discover_templates([ResourceRoot(prompts, "user", "user")], [])
    items = {i["name"]: i for i in collect_commands([], templates, [])}
    assert items["review"]["argumentHint"] == "<file> [focus]" and "argumentHint" not in items["plain"]


def test_a_plugin_command_argument_hint_is_listed():
    from agent_forge.plugins.api import CommandSpec
    from agent_forge.plugins.values import command_item

    class FakePlugin:
        id, scope, origin, path = "p", "temporary", "top-level", "/p.py"

    plugin: Any = FakePlugin()
    hinted = command_item(CommandSpec("deploy", lambda a, c: None, "ships", plugin, "<env>"))
    plain = command_item(CommandSpec("plain", lambda a, c: None, None, plugin))
    assert hinted["argumentHint"] == "<env>" and "argumentHint" not in plain
