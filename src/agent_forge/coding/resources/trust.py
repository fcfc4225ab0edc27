"""Project trust: whether code that comes with the project (its plugins, and settings that run programs) may
load, and what this process takes from the project's `.agent-forge/agent/` at all.

The decision, first match wins: `--approve` / `--no-approve`; a decision recorded (`--trust-project`,
`--distrust-project`) for the working directory or its closest ancestor in `<agent dir>/trust.json`; the
agent-dir setting `defaultProjectTrust` (`"always"` trusts; `"ask"`, the default, and `"never"` do not:
headless modes cannot ask). The project's own settings cannot vouch for it. The plugin loader
(`plugins/trust.py`) decides with the same rules and file format.

Text resources (settings other than `CODE_SETTINGS`, skills, prompt templates, `SYSTEM.md`,
`APPEND_SYSTEM.md`) load without trust: like `AGENTS.md`, which the reference agent also loads untrusted,
they are instructions to the model, and trusting a folder never makes its text safe. `--no-project-resources`
(or `"projectResources": false` in the agent-dir settings) skips the whole project directory instead.
See `docs/resources.md`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..paths import path_text
from ...records import Record, factory
from ..paths import project_dir
from ..safe_read import read_json_file
from ..errors import ConfigFileError, TrustFileError

TRUST_FILE = "trust.json"
DEFAULT_TRUST_VALUES = ("always", "never", "ask")

CODE_SETTINGS = ("shellPath", "shellCommandPrefix", "approvals")
"""Project settings keys that name programs to run, or (`approvals`) let tool calls run unasked: applied only
when the project is trusted. (The project's `plugins` list is gated by the plugin loader with the same
decision.)"""

AGENT_DIR_ONLY_SETTINGS = ("defaultProjectTrust", "projectResources")
"""Keys a project cannot set for itself: they decide how much of the project is believed."""


class TrustDecision(Record, frozen=True):
    """`trusted`, and why (for messages), e.g. `--approve` or `defaultProjectTrust is "ask"`. `problem`
    describes an unreadable `trust.json` that was ignored."""

    trusted: bool
    reason: str
    problem: str | None = None


def canonical_dir(path: str | os.PathLike[str]) -> str:
    """The absolute path with symbolic links resolved: the key of a recorded decision."""
    return os.path.realpath(os.path.abspath(os.fspath(path)))


def resolve_trust(cwd: str | os.PathLike[str], agent_dir: str | os.PathLike[str], *, approve: bool | None = None,
                  default_setting: Any = None) -> TrustDecision:
    """The decision of the module docstring. `default_setting` is the agent-dir `defaultProjectTrust`
    (anything but "always"/"never"/"ask" counts as "ask"). Never raises."""
    if approve is not None:
        return TrustDecision(approve, "--approve" if approve else "--no-approve")
    problem = None
    try:
        recorded = recorded_decision(cwd, agent_dir)
    except TrustFileError as exc:
        recorded, problem = None, f"{exc}; recorded decisions ignored"
    if recorded is not None:
        directory, trusted = recorded
        verdict = "trusted" if trusted else "distrusted"
        return TrustDecision(trusted, f"{verdict} for {path_text(directory)} in "
                                      f"{path_text(Path(agent_dir) / TRUST_FILE)}")
    setting = default_setting if default_setting in DEFAULT_TRUST_VALUES else "ask"
    suffix = " (this mode cannot ask)" if setting == "ask" else ""
    return TrustDecision(setting == "always", f'defaultProjectTrust is "{setting}"{suffix}', problem)


def recorded_decision(cwd: str | os.PathLike[str], agent_dir: str | os.PathLike[str]) -> tuple[str, bool] | None:
    """`(directory, trusted)` for `cwd` or its closest recorded ancestor, or None. Raises `TrustFileError`."""
    decisions = load_decisions(agent_dir)
    directory = canonical_dir(cwd)
    while directory not in decisions:
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent
    return directory, decisions[directory]


def load_decisions(agent_dir: str | os.PathLike[str]) -> dict[str, bool]:
    """`{canonical dir: trusted}` from `<agent dir>/trust.json`, whose format is
    `{"version": 1, "projects": {"<dir>": {"trusted": bool, "decidedAt": "<ISO 8601>"}}}` ({} when the file
    does not exist). Raises `TrustFileError` for an unreadable or malformed file."""
    projects = _read_projects(Path(agent_dir) / TRUST_FILE)
    return {d: v["trusted"] for d, v in projects.items() if isinstance(v, dict) and isinstance(v.get("trusted"), bool)}


def record_trust(cwd: str | os.PathLike[str], agent_dir: str | os.PathLike[str], trusted: bool) -> Path:
    """Record a decision for `cwd` and return the trust file's path; the file is replaced atomically. Raises
    `TrustFileError` when the existing file is malformed (it is left alone) or cannot be written."""
    path = Path(agent_dir) / TRUST_FILE
    projects = _read_projects(path)
    import datetime as _dt  # not at the top: see `session.entries.iso_timestamp`

    stamp = _dt.datetime.now(_dt.timezone.utc).isoformat()
    projects[canonical_dir(cwd)] = {"trusted": trusted, "decidedAt": stamp}
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(json.dumps({"version": 1, "projects": projects}, indent=2, ensure_ascii=False) + "\n",
                             encoding="utf-8")
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise TrustFileError(f"{path_text(path)}: cannot be written: {exc.strerror or exc}") from None
    return path


def _read_projects(path: Path) -> dict[str, Any]:
    try:
        data = read_json_file(path)
    except FileNotFoundError:
        return {}
    except ConfigFileError as exc:
        raise TrustFileError(f"{path_text(path)}: cannot be used: {exc}") from None
    projects = data.get("projects") if isinstance(data, dict) else None
    if not isinstance(projects, dict):
        raise TrustFileError(f'{path_text(path)}: expected {{"version": 1, "projects": {{...}}}}')
    return projects


class ProjectPolicy(Record):
    """What this process takes from `<cwd>/.agent-forge/agent/`: nothing when `enabled` is False; text
    resources when it is True; code (plugins, `CODE_SETTINGS`) only when `code_allowed`. `warnings` says
    what was skipped and why."""

    project_dir: Path
    enabled: bool
    trust: TrustDecision
    warnings: list[str] = factory(list)

    @property
    def code_allowed(self) -> bool:
        """Whether project plugins (and code-running project settings) may load."""
        return self.enabled and self.trust.trusted

    def filter_settings(self, project_raw: dict[str, Any]) -> dict[str, Any]:
        """The project settings this process applies (see the class docstring); skipped keys are reported."""
        if not self.enabled:
            return {}
        kept = dict(project_raw)
        for key in AGENT_DIR_ONLY_SETTINGS:
            if kept.pop(key, None) is not None:
                self.warnings.append(f"{path_text(self.project_dir / 'settings.json')}: {key} is only read from "
                                     "the agent dir's settings.json; ignored here")
        skipped = [key for key in CODE_SETTINGS if key in kept and not self.trust.trusted]
        for key in skipped:
            del kept[key]
        if skipped:
            self.warnings.append(self.skipped_message(f"project settings {', '.join(skipped)}"))
        return kept

    def skipped_message(self, what: str) -> str:
        """`"<what> skipped: the project is not trusted (<reason>); ..."` for warnings about skipped code."""
        return (f"{what} skipped: the project {path_text(self.project_dir.parent.parent)} is not trusted "
                f"({self.trust.reason}); run with --approve, or `agent-forge --trust-project` in it")


def project_policy(cwd: str | Path, agent_dir: str | Path, *, approve: bool | None = None,
                   no_project_resources: bool = False) -> ProjectPolicy:
    """Decide trust and whether the project directory is used, reading the two agent-dir settings
    (`defaultProjectTrust`, `projectResources`) from `<agent dir>/settings.json` (problems with that file are
    reported by `load_settings`, not here)."""
    global_raw = _read_object(Path(agent_dir) / "settings.json")
    enabled = not no_project_resources and global_raw.get("projectResources") is not False
    trust = resolve_trust(cwd, agent_dir, approve=approve, default_setting=global_raw.get("defaultProjectTrust"))
    policy = ProjectPolicy(project_dir(cwd), enabled, trust)
    if trust.problem:
        policy.warnings.append(trust.problem)
    return policy


def _read_object(path: Path) -> dict[str, Any]:
    try:
        data = read_json_file(path)
    except (OSError, ConfigFileError):  # reported by `load_settings`, which reads the same file
        return {}
    return data if isinstance(data, dict) else {}
