"""Plugins at start-up: their command-line flags, recording project trust, and installing plugins into a session
(for the CLI modes and for SDK users)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Callable, Iterable, Union

from ..coding.paths import path_text
from ..coding.config_values import is_number
from ..coding.paths import working_directory

if TYPE_CHECKING:  # discovery is imported with the first session, not with the flags (ACP start-up budget)
    import argparse

    from ..coding.agent_session import AgentSession
    from .api import Plugin
    from .discovery import Discovery, PluginObject, PluginSource
    from .runner import PluginRunner
    from .ui import PluginUI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    import argparse  # only when the full parser is built (`cli_fast`)

    """The plugin and project-trust flags (`docs/plugins.md`)."""
    group = parser.add_argument_group("plugins and project trust")
    group.add_argument("-e", "--plugin", "--extension", action="append", default=[], metavar="PATH|MODULE",
                       help="load a plugin: a .py file, a package directory or a module name (repeatable)")
    group.add_argument("-ne", "--no-plugins", "--no-extensions", action="store_true",
                       help="load no discovered plugins (agent dir, project, settings, entry points); -e still loads")
    group.add_argument("-a", "--approve", action=argparse.BooleanOptionalAction, default=None,
                       help="trust this project for this run: its plugins and code-running settings load "
                            "(--no-approve: they do not)")
    group.add_argument("-na", dest="approve", action="store_false", default=None, help="same as --no-approve")
    group.add_argument("--trust-project", action="store_true",
                       help="record in the agent dir that this directory (and those below it) is trusted, then exit")
    group.add_argument("--distrust-project", action="store_true",
                       help="record that this directory (and those below it) is not trusted, then exit")


def trust_command(args: argparse.Namespace, agent_dir: str | os.PathLike[str],
                  out: Callable[[str], object] = print) -> int | None:
    """Handle `--trust-project` / `--distrust-project` (an exit code), or None when neither was given; the
    verdict line goes to `out` (the CLI's guarded stdout)."""
    if not (args.trust_project or args.distrust_project):
        return None
    from ..coding.resources.trust import TrustFileError, canonical_dir, record_trust

    if args.trust_project and args.distrust_project:
        print("agent-forge: --trust-project and --distrust-project exclude each other", file=sys.stderr)
        return 2
    try:
        path = record_trust(working_directory(), agent_dir, args.trust_project)
    except TrustFileError as exc:
        print(f"agent-forge: {exc}", file=sys.stderr)
        return 1
    verdict = "trusted: its plugins will load" if args.trust_project else "not trusted: its plugins will not load"
    out(f"{path_text(canonical_dir(working_directory()))} is {verdict} (recorded in {path_text(path)})")
    return 0


async def install_from_args(session: AgentSession, args: argparse.Namespace, mode: str) -> PluginRunner | None:
    """Load the plugins the command line and discovery name into `session` for `mode` ("rpc", "json" or
    "print", "interactive"). RPC and interactive mode answer dialogs (`RpcUI` events) and run `session_start`
    handlers once they listen; the other modes run them here."""
    def make_ui() -> PluginUI:
        from .ui import PluginUI, RpcUI

        return RpcUI(session.emit) if mode in ("rpc", "interactive") else PluginUI()

    runner = await install_plugins(session, paths=args.plugin, discover=not args.no_plugins, ui=make_ui)
    if runner is not None and mode not in ("rpc", "interactive"):
        await runner.start()
    return runner


async def install_plugins(session: AgentSession, *, plugins: Iterable[PluginObject] = (), paths: Iterable[str] = (),
                          discover: bool = True, ui: Union[PluginUI, Callable[[], PluginUI], None] = None,
                          setup_timeout: float | None = None) -> PluginRunner | None:
    """Load plugins into `session` and make them its hooks; None when there is none to load.

    `plugins`: setup functions or plugin modules given directly (SDK); `paths`: `-e` values; `discover`: also
    the agent dir, settings, entry points and project plugins (when the session's project policy trusts the
    project: `SessionOptions.approve`, recorded decisions, `defaultProjectTrust`); `ui`: the interaction API
    (default headless), or a function building it, called only when a plugin loads; `setup_timeout`: seconds an
    async `setup` may take (default: settings `pluginSetupTimeoutMs`, else `SETUP_TIMEOUT_S`, 10 s).
    Plugins that fail to load (a setup past its timeout included), name clashes and skipped project plugins are
    added to `session.warnings`.
    Call `await runner.start()` once events are listened to (`session_start`)."""
    loaded = await load_plugins(session, plugins=plugins, paths=paths, discover=discover,
                                setup_timeout=setup_timeout)
    return install_loaded(session, loaded, ui)


async def load_plugins(session: AgentSession, *, plugins: Iterable[PluginObject] = (), paths: Iterable[str] = (),
                       discover: bool = True, setup_timeout: float | None = None,
                       on_source: Callable[[PluginSource], None] | None = None,
                       into: list[Plugin] | None = None) -> list[Plugin]:
    """`install_plugins`' first half: import the plugins and run their setups (`on_source(source)` before
    each), without touching the session but for `session.warnings` (the ones that failed, skipped project
    plugins). Returns the plugins set up, added to `into` (default a new list) as each setup ends: cancelling
    the load stops the setup running (`loader.load_plugin`), loads nothing more, and leaves in `into` the ones
    set up before (to shut down: `shut_down_loaded`)."""
    from .discovery import PluginSource

    found = _discover(session, list(paths), discover)
    direct = [PluginSource(_object_name(p, i), "object", "temporary", value=p) for i, p in enumerate(plugins)]
    sources = [*direct, *found.sources]
    if not sources:
        return [] if into is None else into
    from .loader import PluginLoadError, load_plugin  # only with something to load: start-up stays lean

    timeout = setup_timeout if setup_timeout is not None else _setup_timeout(session)
    loaded = [] if into is None else into
    fresh: set[str] = set()  # module plugins' packages imported anew in this pass: two plugins of one share it
    for source in sources:
        if on_source is not None:
            on_source(source)
        try:
            loaded.append(await load_plugin(source, setup_timeout=timeout, fresh=fresh))
        except PluginLoadError as exc:
            session.warnings.append(f"Plugin not loaded: {exc}")
    return loaded


def install_loaded(session: AgentSession, loaded: list[Plugin],
                   ui: Union[PluginUI, Callable[[], PluginUI], None] = None) -> PluginRunner | None:
    """`install_plugins`' second half: a runner for the `loaded` plugins (`load_plugins`), installed as the
    session's hooks (name clashes added to `session.warnings`); None when `loaded` is empty."""
    if not loaded:
        return None
    runner = _runner(session, loaded, ui)
    runner.install()
    session.warnings.extend(runner.warnings)
    return runner


async def shut_down_loaded(session: AgentSession, loaded: list[Plugin],
                           ui: Union[PluginUI, Callable[[], PluginUI], None] = None) -> None:
    """Run the `session_shutdown` handlers of `loaded` plugins (`load_plugins`) that are not installed and never
    will be (a stopped `/reload` drops them), each bounded as at any shutdown: what their setups started ends."""
    if loaded:
        await _runner(session, loaded, ui).shutdown(graceful=True)


def _runner(session: AgentSession, loaded: list[Plugin],
            ui: Union[PluginUI, Callable[[], PluginUI], None]) -> PluginRunner:
    from .runner import HANDLER_TIMEOUT_S, PluginRunner
    from .ui import PluginUI

    return PluginRunner(session, loaded, ui if isinstance(ui, PluginUI) or ui is None else ui(),
                        handler_timeout=_seconds_setting(session, "pluginHandlerTimeoutMs", HANDLER_TIMEOUT_S))


def _object_name(plugin: object, index: int) -> str:
    """The name a plugin object is reported by: its `__name__` when that is a string, else `plugin<index>` (an
    object's `__name__` may be anything, or a property that raises)."""
    try:
        name = getattr(plugin, "__name__", None)
    except Exception:
        name = None
    return name if isinstance(name, str) else f"plugin{index}"


def _setup_timeout(session: AgentSession) -> float:
    from .loader import SETUP_TIMEOUT_S

    return _seconds_setting(session, "pluginSetupTimeoutMs", SETUP_TIMEOUT_S)


def _seconds_setting(session: AgentSession, name: str, default: float) -> float:
    """Setting `name` (a positive number of milliseconds) of the agent dir's settings in seconds, else
    `default`. A project's settings do not count: its plugins may be the ones being timed."""
    value = (getattr(session.settings, "global_raw", None) or {}).get(name)
    if value is None:
        return default
    if not is_number(value) or value <= 0:  # already reported with its line (coding/settings.py)
        return default
    return value / 1000


def _discover(session: AgentSession, paths: list[str], enabled: bool) -> Discovery:
    """Discovery under the session's project policy (trust decided by the factory: `resources/trust.py`)."""
    from .discovery import plugin_sources

    policy = session.resources.policy
    found = plugin_sources(session.cwd, session.registry.agent_dir, session.settings, policy, paths, enabled)
    if found.skipped:
        what = f"project plugins ({', '.join(found.skipped)})"
        session.warnings.append(policy.skipped_message(what) if policy is not None else
                                f"{what} skipped: the project's trust is unknown")
    return found
