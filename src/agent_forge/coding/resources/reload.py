"""Reading settings and resources again while a session runs (the interactive `/reload`, `/settings`): the same
loaders the start uses (`setup.py`), under the project policy the session started with (a trust decision made
since counts from the next start).

Settings are refreshed in place: every collaborator of the session holds the one `Settings` object and reads it
at each use, so they all see the new values at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...records import replace
from ..settings import Settings, load_settings
from .loader import ResourceOptions, SessionResources, load_resources


def refresh_settings(session: Any) -> list[str]:
    """Read `settings.json` (agent dir, then the project's as the policy allows) into `session.settings` in
    place; the problems found, as warnings."""
    current: Settings = session.settings
    policy = _fresh_policy(session)
    fresh = load_settings(session.cwd, session.registry.agent_dir, include_project=policy is None or policy.enabled,
                          project_filter=policy.filter_settings if policy is not None else None)
    for name in ("raw", "global_raw", "project_raw", "errors", "invalid_keys"):
        setattr(current, name, getattr(fresh, name))
    return [str(error) for error in fresh.errors]


Changes = tuple[list[str], list[str], list[str]]
"""(names added, names removed, names kept whose content changed)."""


def reload_resources(session: Any) -> tuple[SessionResources, dict[str, Changes]]:
    """Load context files, skills and prompt templates again with the options of the start and make them the
    session's (the next request's system prompt and `get_commands` use them). Returns the new resources and
    the `Changes` of each kind: a kept one changed when anything loaded from its file differs (its text, its
    frontmatter), however the file's size or mtime look."""
    old: SessionResources = session.resources
    options = old.options or ResourceOptions(cwd=session.cwd, agent_dir=Path(session.registry.agent_dir))
    policy = _fresh_policy(session)
    if policy is None:
        from .trust import project_policy

        policy = project_policy(session.cwd, options.agent_dir)
    new = load_resources(options, session.settings, policy)
    new.policy = old.policy or policy  # the decision of the start stays the session's
    session.resources = new
    before = resources_by_name(old)
    return new, {kind: difference(before[kind], now) for kind, now in resources_by_name(new).items()}


def resources_by_name(resources: SessionResources) -> dict[str, dict[str, Any]]:
    """`{"context": {path: ContextFile}, "skills": {name: Skill}, "templates": {"/name": PromptTemplate}}`."""
    return {"context": {str(getattr(f, "path", f)): f for f in resources.context_files},
            "skills": {s.name: s for s in resources.skills},
            "templates": {f"/{t.name}": t for t in resources.templates}}


def _fresh_policy(session: Any) -> Any:
    """A copy of the session's project policy with no warnings yet (filtering adds them again)."""
    policy = session.resources.policy
    return replace(policy, warnings=[]) if policy is not None else None


def difference(before: dict[str, Any], after: dict[str, Any]) -> Changes:
    """The `Changes` from `before` to `after` (name → a value compared with `==`), in the order of each."""
    return ([n for n in after if n not in before], [n for n in before if n not in after],
            [n for n, value in after.items() if n in before and before[n] != value])
