"""Start-up wiring for the factory: project policy and settings, then resources and the tool selection, all
from `SessionOptions` (the factory stays a list of steps)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# The loader is imported when a session is built, not with the command line's flags (`add_arguments`): ACP mode
# answers `initialize` before any session exists (start-up budget, docs/acp.md).
if TYPE_CHECKING:
    from pathlib import Path

    from .loader import SessionResources
    from .trust import ProjectPolicy


def load_project_settings(options: Any, agent_dir: Path) -> tuple[Any, ProjectPolicy]:
    """`(settings, policy)`: the trust decision and project switch first, so that the project's settings file
    is read only when the project directory is used, and code-running keys only when it is trusted."""
    from ..settings import load_settings
    from .trust import project_policy

    policy = project_policy(options.cwd, agent_dir, approve=options.approve,
                            no_project_resources=options.no_project_resources)
    settings = load_settings(options.cwd, agent_dir, include_project=policy.enabled,
                             project_filter=policy.filter_settings)
    return settings, policy


def load_session_resources(options: Any, agent_dir: Path, settings: Any,
                           policy: ProjectPolicy) -> tuple[SessionResources, Any]:
    """`(resources, tool selection)`. Raises `CommandError` for a `--tools` list that cannot be used; every
    other problem is a warning in `resources.warnings`."""
    from ..errors import CommandError
    from ..tools.selection import ToolSelectionError, resolve_tool_selection
    from .loader import ResourceOptions, load_resources

    resources = load_resources(ResourceOptions(
        cwd=options.cwd, agent_dir=agent_dir, context_files=not options.no_context_files,
        skills=not options.no_skills, prompt_templates=not options.no_prompt_templates,
        skill_paths=tuple(options.skill_paths), prompt_template_paths=tuple(options.prompt_template_paths),
        system_prompt=options.system_prompt, append_system_prompt=options.append_system_prompt), settings, policy)
    try:
        selection = resolve_tool_selection(
            global_setting=settings.global_raw.get("defaultTools"),
            project_setting=settings.project_raw.get("defaultTools"), cli_entries=options.tool_names,
            no_builtin_tools=options.no_builtin_tools, no_tools=options.no_tools, exclude=options.exclude_tools,
            warnings=resources.warnings)
    except ToolSelectionError as exc:
        raise CommandError(str(exc)) from None
    return resources, selection


def add_arguments(parser: Any) -> None:
    """The resource and tool flags of the command line (`docs/resources.md`)."""
    group = parser.add_argument_group("resources and tools")
    group.add_argument("-nc", "--no-context-files", action="store_true",
                       help="do not load AGENTS.md / CLAUDE.md from the agent dir and the directories above")
    group.add_argument("--skill", action="append", default=[], metavar="PATH",
                       help="load a skill directory or file (repeatable; loads even with --no-skills)")
    group.add_argument("-ns", "--no-skills", action="store_true", help="do not discover skills (agent dir, project, settings)")
    group.add_argument("--prompt-template", action="append", default=[], metavar="PATH",
                       help="load a prompt template file or directory (repeatable; loads even with "
                            "--no-prompt-templates)")
    group.add_argument("-np", "--no-prompt-templates", action="store_true", help="do not discover prompt templates")
    group.add_argument("-t", "--tools", metavar="LIST",
                       help="comma-separated tools: plain names or * patterns replace the defaults (read,bash,edit,"
                            "write); +name/-name entries change them. Built-in: read,bash,edit,write,grep,find,ls")
    group.add_argument("-nt", "--no-tools", action="store_true", help="start with no tools at all (plugin tools included)")
    group.add_argument("-nbt", "--no-builtin-tools", action="store_true", help="no built-in tools; plugin tools stay")
    group.add_argument("-xt", "--exclude-tools", metavar="LIST",
                       help="comma-separated tool names or * patterns to disable after every other selection "
                            "(plugin tools included)")
    group.add_argument("--no-project-resources", action="store_true",
                       help="ignore ./.agent-forge/agent/ (settings, skills, prompts, SYSTEM.md, plugins)")


def options_from_args(args: Any) -> dict[str, Any]:
    """`SessionOptions` keyword arguments for the flags of `add_arguments` (and `--approve` of the plugin
    flags, when present)."""
    return {
        "no_context_files": args.no_context_files, "no_skills": args.no_skills,
        "no_prompt_templates": args.no_prompt_templates, "skill_paths": list(args.skill),
        "prompt_template_paths": list(args.prompt_template),
        "tool_names": [e for e in args.tools.split(",")] if args.tools is not None else None,
        "exclude_tools": [e.strip() for e in args.exclude_tools.split(",") if e.strip()]
        if args.exclude_tools is not None else (),
        "no_tools": args.no_tools, "no_builtin_tools": args.no_builtin_tools,
        "approve": getattr(args, "approve", None), "no_project_resources": args.no_project_resources,
    }
