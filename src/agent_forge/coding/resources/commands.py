"""The `get_commands` listing: plugin commands (from command sources), prompt templates and skills."""

from __future__ import annotations

from typing import Callable, Iterable, TypedDict

from ..paths import path_text
from .skills import Skill
from .sources import SourceInfo
from .templates import PromptTemplate


class CommandInfo(TypedDict, total=False):
    """One `get_commands` item. Seed 000: `name`, `description`, `source` (`capability` | `prompt` |
    `skill`), `sourceInfo`. SPEC-NOTES adds the seed-003 fields: `location` (`user` | `project` | `path`;
    absent for plugin commands) and `path` (the file, or the plugin's synthetic `<plugin:...>` label). Ours:
    `argumentHint` (`"<file> [focus]"`), only when the template or plugin command gives one."""

    name: str
    description: str
    source: str
    sourceInfo: SourceInfo
    location: str
    path: str
    argumentHint: str


CommandSource = Callable[[], Iterable[CommandInfo]]
"""A provider of command items, called on every `get_commands` (plugins append one to
`AgentSession.command_sources`). Items need `name`, `source` and `sourceInfo`; `path` is filled in from
`sourceInfo.path` when missing."""


def template_command(template: PromptTemplate) -> CommandInfo:
    item = CommandInfo(name=template.name, description=template.description, source="prompt",
                       sourceInfo=template.source_info, location=template.location, path=str(template.file_path))
    if template.argument_hint and template.argument_hint.strip():
        item["argumentHint"] = " ".join(template.argument_hint.split())  # frontmatter `argument-hint`
    return item


def skill_command(skill: Skill) -> CommandInfo:
    return CommandInfo(name=f"skill:{skill.name}", description=skill.description, source="skill",
                       sourceInfo=skill.source_info, location=skill.location, path=str(skill.file_path))


def collect_commands(sources: Iterable[CommandSource], templates: Iterable[PromptTemplate],
                     skills: Iterable[Skill], *, list_skills: bool = True,
                     on_error: Callable[[CommandSource, Exception], None] | None = None) -> list[dict[str, object]]:
    """Plugin commands first (in source order), then templates, then skills (unless `list_skills` is False:
    the `enableSkillCommands` setting). A template or skill shadowed by a plugin command of the same name is
    left out (`prompt` runs the plugin command). A source that raises is skipped (and passed to `on_error`)
    so the listing still answers."""
    items: list[dict[str, object]] = []
    for source in sources:
        try:
            items.extend(_with_path(dict(item)) for item in source())
        except Exception as exc:  # a plugin's broken listing must not break get_commands for everything else
            if on_error is not None:
                on_error(source, exc)
    taken = {item.get("name") for item in items}  # a plugin command wins over a resource of the same name
    items.extend(dict(template_command(t)) for t in templates if t.name not in taken)
    if list_skills:
        items.extend(dict(skill_command(s)) for s in skills if f"skill:{s.name}" not in taken)
    return items


_KINDS = {"prompt": "prompt template", "skill": "skill", "capability": "plugin command"}


def shadowed(items: Iterable[dict[str, object]], builtins: Iterable[str]) -> list[dict[str, object]]:
    """The `get_commands` items named like one of a front end's `builtins` (the terminal UI's `/model`, ACP's
    `/compact`, ...): that front end runs its built-in for the name, so it neither lists nor runs them."""
    return partition_shadowed(items, builtins)[1]


def unshadowed(items: Iterable[dict[str, object]], builtins: Iterable[str]) -> list[dict[str, object]]:
    """The `get_commands` items a front end with `builtins` lists and runs: the others than `shadowed`."""
    return partition_shadowed(items, builtins)[0]


def partition_shadowed(items: Iterable[dict[str, object]], builtins: Iterable[str]
                       ) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """(`unshadowed`, `shadowed`) items, each in `items`' order: the one rule of every front end."""
    names = set(builtins)
    kept: list[dict[str, object]] = []
    hidden: list[dict[str, object]] = []
    for item in items:
        (hidden if item.get("name") in names else kept).append(item)
    return kept, hidden


def shadowed_warning(item: dict[str, object], front_end: str) -> str:
    """`<file>: prompt template /model is shadowed in <front_end> by its built-in /model; ...`: one start-up
    warning for a `shadowed` item (print mode and RPC have no built-ins, so they still run it)."""
    name, kind = str(item.get("name")), _KINDS.get(str(item.get("source")), "command")
    where = item.get("path") if isinstance(item.get("path"), str) else kind
    return (f"{path_text(str(where))}: {kind} /{path_text(name)} is shadowed in {front_end} by its built-in "
            f"/{path_text(name)} (print mode and RPC still run the {kind}); rename it to use it here")


def _with_path(item: dict[str, object]) -> dict[str, object]:
    info = item.get("sourceInfo")
    if "path" not in item and isinstance(info, dict) and isinstance(info.get("path"), str):
        item["path"] = info["path"]
    return item
