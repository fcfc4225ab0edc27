"""Finding plugins: the sources `loader.load_plugin` imports, in load order (`loader.py` lists them). Kept apart
from the loading so that a start-up with no plugin to load never imports the loader (`importlib.util`, the
setup timeouts and isolation).
"""

from __future__ import annotations

import errno
import os
import stat
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence, Union

from ..coding.paths import project_dir
from ..records import Record, factory
from ..coding.safe_read import examine, exists

if TYPE_CHECKING:
    from ..ai.types import JsonValue
    from ..coding.resources.trust import ProjectPolicy
    from .api import Plugin
    from .entry_points import EntryPoint

if TYPE_CHECKING:
    Setup = Callable[[Plugin], object]
    """A plugin's `setup(plugin)`, sync or async (an awaitable result is awaited)."""
else:  # `Plugin` is not imported at run time, and typing would compile a "Plugin" text (`ai.hosts.Host`)
    Setup = Callable[..., object]
PluginObject = Union[types.ModuleType, Setup]
"""A plugin given as an object (SDK): a module with `setup`, or the setup function itself."""

ENTRY_POINT_GROUP = "agent_forge.plugins"
PLUGINS_DIR = "plugins"


class PluginSource(Record, frozen=True):
    """One plugin to load. `kind` is "path" (`target` an absolute path), "module" (`target` `pkg.mod` or
    `pkg.mod:attr`), "entry_point" (`value` an `EntryPoint`) or "object" (`value` a setup function or module,
    from the SDK)."""

    target: str
    kind: str
    scope: str
    origin: str = "top-level"
    value: Union[PluginObject, EntryPoint, None] = None


class Discovery(Record):
    """What `discover` found: `sources` to load, and the project plugins `skipped` (untrusted project)."""

    sources: list[PluginSource] = factory(list)
    skipped: list[str] = factory(list)


def plugin_sources(cwd: str, agent_dir: str | os.PathLike[str], settings: Any, policy: ProjectPolicy | None,
                   paths: list[str], enabled: bool) -> Discovery:
    """The plugins a session in `cwd` loads: `-e` `paths`, and when `enabled` those discovery finds under the
    project `policy` (also what RPC mode's early `get_state` checks, `modes/rpc/early.py`: without importing
    `plugins.startup`)."""
    return discover(cwd, agent_dir, cli_plugins=paths, no_plugins=not enabled,
                    user_settings=getattr(settings, "global_raw", {}) or {},
                    project_settings=getattr(settings, "project_raw", {}) or {},
                    project_enabled=policy is None or policy.enabled,
                    project_trusted=policy is not None and policy.code_allowed)


def discover(cwd: str, agent_dir: str | os.PathLike[str], *, cli_plugins: Sequence[str] = (),
             no_plugins: bool = False, user_settings: dict[str, JsonValue] | None = None,
             project_settings: dict[str, JsonValue] | None = None, project_enabled: bool = True,
             project_trusted: bool = False) -> Discovery:
    """The plugin sources for a session in `cwd` (see the module docstring)."""
    found = Discovery()
    found.sources.extend(cli_source(spec, cwd) for spec in cli_plugins)
    if no_plugins:
        return _dedupe(found)
    agent = Path(agent_dir)
    found.sources.extend(_dir_sources(agent / PLUGINS_DIR, "user"))
    found.sources.extend(_settings_sources(user_settings, agent, "user"))
    found.sources.extend(_entry_point_sources())
    if project_enabled:
        project = [*_dir_sources(project_dir(cwd) / PLUGINS_DIR, "project"),
                   *_settings_sources(project_settings, project_dir(cwd), "project")]
        if project_trusted:
            found.sources.extend(project)
        else:
            found.skipped.extend(source.target for source in project)
    return _dedupe(found)


def cli_source(spec: str, cwd: str, scope: str = "temporary") -> PluginSource:
    """`-e` value: a path when it names an existing file or directory, ends in `.py` or contains a path
    separator; otherwise a module name."""
    path = Path(spec).expanduser()
    if not path.is_absolute():
        path = Path(cwd) / path
    if exists(path) or spec.endswith(".py") or os.sep in spec or (os.altsep and os.altsep in spec):
        return PluginSource(str(path), "path", scope)
    return PluginSource(spec, "module", scope)


def plugin_files(directory: Path) -> list[Path]:
    """The plugins of a plugins directory: `*.py` files and package directories, sorted by name, together with
    the entries that are broken (a `*.py` that is no regular file, a FIFO or device of any name, an entry the
    OS refuses to examine: a link loop), and the directory itself when it exists but cannot be listed: the
    loader reports each as not loaded, with what it is or the OS's reason, and loads the rest."""
    try:
        entries = sorted(directory.iterdir())
    except FileNotFoundError:
        return []
    except OSError:
        return [directory]
    return [e for e in entries if not e.name.startswith(("_", ".")) and _plugin_entry(e)]


def _plugin_entry(entry: Path) -> bool:
    """Whether a plugins-directory entry is a plugin or a broken one (see `plugin_files`); a README, a data
    directory without `__init__.py` or a dangling link is neither."""
    info = examine(entry, absent=frozenset({errno.ENOENT}))
    if info is None or isinstance(info, OSError):
        return info is not None
    if stat.S_ISDIR(info.st_mode):  # a package, or one whose __init__.py the OS will not say anything about
        return examine(entry / "__init__.py", absent=frozenset({errno.ENOENT})) is not None
    return entry.suffix == ".py" or not stat.S_ISREG(info.st_mode)


def _dir_sources(directory: Path, scope: str) -> list[PluginSource]:
    return [PluginSource(str(path), "path", scope) for path in plugin_files(directory)]


def _settings_sources(settings: dict[str, JsonValue] | None, base: Path, scope: str) -> list[PluginSource]:
    """`plugins` of a settings file: a list of paths (relative to `base`) or module names; others ignored."""
    entries = (settings or {}).get("plugins")
    if not isinstance(entries, list):
        return []
    return [cli_source(entry, str(base), scope) for entry in entries if isinstance(entry, str) and entry.strip()]


def _entry_point_sources() -> list[PluginSource]:
    from .entry_points import entry_points

    return [PluginSource(f"{ep.name} = {ep.value} ({ep.dist})", "entry_point", "user", "package", ep)
            for ep in entry_points(ENTRY_POINT_GROUP)]


def _dedupe(found: Discovery) -> Discovery:
    """A plugin reachable twice (an `-e` path that is also in a plugins directory) loads once, first place."""
    seen: set[str] = set()
    unique = []
    for source in found.sources:
        key = os.path.realpath(source.target) if source.kind == "path" else f"{source.kind}:{source.target}"
        if key not in seen:
            seen.add(key)
            unique.append(source)
    found.sources = unique
    return found
