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


def reload_resources(session: Any) -> tuple[SessionResources, dict[str, tuple[list[str], list[str]]]]:
    """Load context files, skills and prompt templates again with the options of the start and make them the
    session's (the next request's system prompt and `get_commands` use them). Returns the new resources and,
    for each kind, (names added, names removed)."""
    old: SessionResources = session.resources
    options = old.options or ResourceOptions(cwd=session.cwd, agent_dir=Path(session.registry.agent_dir))
    policy = _fresh_policy(session)
    if policy is None:
        from .trust import project_policy

        policy = project_policy(session.cwd, options.agent_dir)
    new = load_resources(options, session.settings, policy)
    new.policy = old.policy or policy  # the decision of the start stays the session's
    session.resources = new
    return new, {kind: _difference(resource_names(old)[kind], names)
                 for kind, names in resource_names(new).items()}


def resource_names(resources: SessionResources) -> dict[str, list[str]]:
    """`{"context": [paths], "skills": [names], "templates": ["/name"]}`."""
    return {"context": [str(getattr(f, "path", f)) for f in resources.context_files],
            "skills": [s.name for s in resources.skills],
            "templates": [f"/{t.name}" for t in resources.templates]}


def _fresh_policy(session: Any) -> Any:
    """A copy of the session's project policy with no warnings yet (filtering adds them again)."""
    policy = session.resources.policy
    return replace(policy, warnings=[]) if policy is not None else None


def _difference(before: list[str], after: list[str]) -> tuple[list[str], list[str]]:
    return [n for n in after if n not in before], [n for n in before if n not in after]
