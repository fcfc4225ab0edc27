"""Loading a session's resources (context files, skills, prompt templates, system-prompt files) and the
`SessionResources` object the session consults for its system prompt, input expansion and `get_commands`."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, TYPE_CHECKING

from ..paths import path_text
from ..safe_read import MAX_CONFIG_BYTES, describe_kind, read_text_file
from .commands import CommandSource, collect_commands
from .context_files import ContextFile, format_context_section, load_context_files
from .expansion import expand_input
from .skills import Skill, discover_skills, format_skills_section
from .sources import ResourceRoot
from .templates import PromptTemplate, discover_templates
from .trust import ProjectPolicy, TrustDecision
from ..safe_read import TEXT_ABSENT, examine

if TYPE_CHECKING:
    from ..settings import Settings

SYSTEM_FILE = "SYSTEM.md"
APPEND_SYSTEM_FILE = "APPEND_SYSTEM.md"


@dataclass(kw_only=True)
class ResourceOptions:
    """The command-line side of resource loading. `skill_paths` / `prompt_template_paths` (`--skill`,
    `--prompt-template`) load even with `skills` / `prompt_templates` False (`--no-skills`,
    `--no-prompt-templates`). `system_prompt` and each `append_system_prompt` item are text, or the path of
    a file holding it; relative paths resolve from `cwd`."""

    cwd: str
    agent_dir: Path
    context_files: bool = True
    skills: bool = True
    prompt_templates: bool = True
    skill_paths: Sequence[str] = ()
    prompt_template_paths: Sequence[str] = ()
    system_prompt: str | None = None
    append_system_prompt: str | Sequence[str] | None = None


@dataclass
class SessionResources:
    """What a session loaded. `custom_prompt` replaces the default base prompt (`--system-prompt`, else the
    project's then the agent dir's SYSTEM.md); `append_prompt` is added after it (`--append-system-prompt`,
    else APPEND_SYSTEM.md). `policy` is the project policy (trust) the resources were loaded under: plugin
    loading consults `policy.code_allowed`."""

    context_files: list[ContextFile] = field(default_factory=list)
    skills: list[Skill] = field(default_factory=list)
    templates: list[PromptTemplate] = field(default_factory=list)
    custom_prompt: str | None = None
    append_prompt: str | None = None
    skill_commands: bool = True
    policy: ProjectPolicy | None = None
    warnings: list[str] = field(default_factory=list)
    options: ResourceOptions | None = None
    """What they were loaded with: a reload (`reload.py`) loads again with the same."""

    def __post_init__(self) -> None:
        self._skills_by_name = {s.name: s for s in self.skills}
        self._templates_by_name = {t.name: t for t in self.templates}

    def expand(self, text: str) -> str:
        """`text` with a leading `/skill:<name>` or `/<template>` command expanded (see `expansion.py`)."""
        return expand_input(text, self._skills_by_name, self._templates_by_name)

    def prompt_sections(self, tool_names: Iterable[str]) -> list[str]:
        """System-prompt sections after the base prompt: context files, then the skills (listed only when the
        `read` tool is active, since the model reads a skill's file to use it)."""
        sections = [format_context_section(self.context_files)]
        if "read" in set(tool_names):
            sections.append(format_skills_section(self.skills))
        return [s for s in sections if s]

    def commands(self, sources: Iterable[CommandSource] = (),
                 on_error: Callable[[CommandSource, Exception], None] | None = None) -> list[dict[str, object]]:
        """The `get_commands` items: those of `sources` (plugins), then templates, then skills."""
        return collect_commands(sources, self.templates, self.skills, list_skills=self.skill_commands,
                                on_error=on_error)

    @property
    def trust(self) -> TrustDecision | None:
        return self.policy.trust if self.policy else None


def load_resources(options: ResourceOptions, settings: Settings, policy: ProjectPolicy) -> SessionResources:
    """Discover everything for a session. `settings` is the merged `Settings` (its `global_raw` /
    `project_raw` give the `skills` and `prompts` path lists and `enableSkillCommands`). Never raises:
    problems go to `SessionResources.warnings`, together with the policy's."""
    warnings: list[str] = []
    cwd, agent_dir = Path(options.cwd), Path(options.agent_dir)
    project = policy.project_dir if policy.enabled and not _same_dir(policy.project_dir, agent_dir) else None
    skill_roots = _roots("skills", options.skills, options.skill_paths, cwd, agent_dir, project, settings, warnings)
    template_roots = _roots("prompts", options.prompt_templates, options.prompt_template_paths, cwd, agent_dir,
                            project, settings, warnings)
    resources = SessionResources(
        context_files=load_context_files(cwd, agent_dir, warnings) if options.context_files else [],
        skills=discover_skills(skill_roots, warnings),
        templates=discover_templates(template_roots, warnings),
        custom_prompt=_custom_prompt(options, agent_dir, project, warnings),
        append_prompt=_append_prompt(options, agent_dir, project, warnings),
        skill_commands=settings.get("enableSkillCommands", True) is not False,
        policy=policy,
        options=options,
    )
    resources.warnings = policy.warnings + warnings
    return resources


def _roots(kind: str, discover: bool, cli_paths: Sequence[str], cwd: Path, agent_dir: Path,
           project: Path | None, settings: Settings, warnings: list[str]) -> list[ResourceRoot]:
    """Roots in precedence order (the first resource of a name wins): command-line paths, the project
    directory and its settings' paths, then the agent dir and its settings' paths."""
    roots = [ResourceRoot(_resolve(p, cwd), "temporary", "path") for p in cli_paths]
    if not discover:
        return roots
    if project is not None:
        roots.append(ResourceRoot(project / kind, "project", "project"))
        roots += _setting_roots(kind, getattr(settings, "project_raw", {}), project, "project", warnings)
    roots.append(ResourceRoot(agent_dir / kind, "user", "user"))
    roots += _setting_roots(kind, getattr(settings, "global_raw", {}), agent_dir, "user", warnings)
    return roots


def _setting_roots(kind: str, raw: dict[str, Any], base: Path, scope: Any, warnings: list[str]) -> list[ResourceRoot]:
    value = raw.get(kind)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        # `load_settings` reported and dropped a wrong value of a settings file: only a caller's own dict gets here
        warnings.append(f"{path_text(base / 'settings.json')}: {kind} must be a list of paths; ignored")
        return []
    roots = []
    for entry in value:
        if entry[0] in "!+-":
            warnings.append(f"{path_text(base / 'settings.json')}: {kind} entry {entry!r}: include/exclude "
                            "patterns are not supported; list plain paths")
            continue
        roots.append(ResourceRoot(_resolve(entry, base), scope, "path"))
    return roots


def _same_dir(a: Path, b: Path) -> bool:
    """True when the cwd is the home directory and its project dir is the agent dir itself."""
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symbolic link loop (Python 3.11's resolve)
        return False


def _resolve(path: str, base: Path) -> Path:
    return (base / Path(path).expanduser()).absolute()


def _custom_prompt(options: ResourceOptions, agent_dir: Path, project: Path | None,
                   warnings: list[str]) -> str | None:
    if options.system_prompt is not None:
        return _text_or_file(options.system_prompt, Path(options.cwd), warnings)
    return _first_file([project / SYSTEM_FILE if project else None, agent_dir / SYSTEM_FILE], warnings)


def _append_prompt(options: ResourceOptions, agent_dir: Path, project: Path | None,
                   warnings: list[str]) -> str | None:
    values = options.append_system_prompt
    if values:
        items = [values] if isinstance(values, str) else list(values)
        return "\n\n".join(_text_or_file(v, Path(options.cwd), warnings) for v in items)
    return _first_file([project / APPEND_SYSTEM_FILE if project else None, agent_dir / APPEND_SYSTEM_FILE],
                       warnings)


def _text_or_file(value: str, cwd: Path, warnings: list[str]) -> str:
    """The contents of `value` when it names an existing regular file (of at most 1 MB: the user named it, so
    the limit is the configuration files' one), else `value` itself; a warning when it names something that is
    no regular file (a directory, `/dev/zero`), cannot be examined (a link loop) or cannot be read (the command
    line refuses all of those before it starts)."""
    if "\n" in value or not value.strip():  # "" is empty text, not the cwd
        return value
    path = cwd / Path(value).expanduser()
    info = examine(path, absent=TEXT_ABSENT)
    if isinstance(info, OSError):
        warnings.append(f"{path_text(value)}: cannot be examined: {info.strerror or info}; taken as the text itself")
        return value
    if info is not None and not stat.S_ISREG(info.st_mode):
        warnings.append(f"{path_text(value)}: it is {describe_kind(info.st_mode)}, not a regular file; taken as "
                        "the text itself")
    if info is None or not stat.S_ISREG(info.st_mode):
        return value
    try:
        return read_text_file(path, MAX_CONFIG_BYTES, what="files named on the command line")
    except OSError as exc:  # no permission, grown over the limit, replaced by a FIFO since
        warnings.append(f"{path_text(value)}: cannot read: {getattr(exc, 'strerror', None) or exc}")
        return value


def _first_file(paths: list[Path | None], warnings: list[str]) -> str | None:
    """The text of the first of `paths` that exists; one that exists but cannot be used (unreadable, not a
    regular file, too large) is reported and the next is tried."""
    for path in paths:
        if path is None or not os.path.lexists(path):
            continue
        try:
            return read_text_file(path)
        except FileNotFoundError:
            continue  # a dangling link
        except OSError as exc:
            warnings.append(f"{path_text(path)}: not loaded: {exc.strerror or exc}")
    return None
