"""`/reload`: settings, context files, skills, prompt templates, plugins and keybindings.json read again, with the
loaders and the options of the start (`coding/resources/reload.py`, `plugins/startup.install_plugins`), then what
changed is reported. Plugins are loaded anew from their files (so an edited plugin runs its new code), then the running
ones are shut down (`session_shutdown`) and the new ones put in their place, their `session_start` handlers run again; an
abort while a setup runs shuts down the new ones already set up and leaves the running plugins as they were."""

from __future__ import annotations

from typing import Any

from ...coding.errors import CommandError
from .render import clean
from .keymap import key_hint


class PluginArgs:
    """The command line's plugin choice: `-e` paths and whether discovery is on (`--no-plugins` off)."""

    def __init__(self, paths: list[str] | None = None, discover: bool = True):
        self.paths, self.discover = list(paths or []), discover


async def reload_everything(ui: Any, plugins: PluginArgs) -> tuple[str | None, list[str]]:
    """Reload for the interactive mode `ui` (`session`): (why the plugins were kept as they were, None when they
    were reloaded too; the lines to report). Raises `CommandError` while the agent works."""
    # (not before the first paint)
    from ...coding.resources.reload import difference, refresh_settings, reload_resources

    session = ui.session
    if ui.session_busy():  # a run, or a compaction or branch summary outside one
        raise CommandError("wait for the agent to finish" + key_hint("app.interrupt", " (or press {})")
                           + " before /reload")
    warnings = refresh_settings(session)
    apply_settings(session)
    ui.files.refresh()  # the `@` search's file list too
    resources, changes = reload_resources(session)
    warnings += resources.warnings
    lines = [_change_line(kind, change, len(getattr_names(resources, kind))) for kind, change in changes.items()]
    before = plugin_versions(session)
    kept, plugin_warnings = await reload_plugins(session, plugins)
    warnings += plugin_warnings
    after = plugin_versions(session)
    lines.append(_change_line("plugins", _by_id(difference(before, after), before | after), len(after)))
    lines.extend(kept_code_line(session))
    lines.append(reload_keys(ui, warnings))
    warnings += ui.shadowed_warnings()  # as at start: a reloaded template or plugin may take a built-in's name
    return kept, lines + [f"warning: {clean(w)}" for w in dict.fromkeys(warnings)]


def apply_settings(session: Any) -> None:
    """Copy the settings the session keeps a value of (queue modes, the HTTP idle timeout) into it."""
    settings, agent = session.settings, session.agent
    agent.steering_mode = settings.steering_mode
    agent.follow_up_mode = settings.follow_up_mode
    agent.idle_timeout_s = settings.http_idle_timeout_s


async def reload_plugins(session: Any, plugins: PluginArgs) -> tuple[str | None, list[str]]:
    """Load the plugins anew (their setups), then shut the running ones down, remove their tools and commands,
    and put the new ones in place: (None, the warnings of the new load). An `abort` while a setup runs (Escape)
    stops the load: the new plugins already set up are shut down (`session_shutdown`), the running plugins'
    modules the load imported over are put back, and the running plugins stay as they were: (why, no warnings:
    they were about a load dropped)."""
    from ...plugins.loader import plugin_id
    from ...plugins.module_import import SavedModules
    from ...plugins.startup import load_plugins

    current: list[Any] = []  # the sources loaded so far, the last one running: what a stopped load names
    loaded: list[Any] = []  # the new plugins set up so far: what a stopped load shuts down
    seen = len(session.warnings)
    saved = SavedModules()  # the running plugins' modules: a dropped load must not leave its own in their place
    # the session's `abort` stops the hook calls it holds (`HookCalls`): the load is one of them
    stopped, _ = await session.intake.change_hooks.run(load_plugins(
        session, paths=plugins.paths, discover=plugins.discover, on_source=current.append, into=loaded))
    if stopped:
        saved.restore()
        del session.warnings[seen:]
        await drop_loaded(session, loaded)
        what = f"the setup of {clean(plugin_id(current[-1]))}" if current else "the plugin load"
        return f"{what} was stopped, the plugins stay as they were", []
    await replace_plugins(session, loaded)
    warnings = session.warnings[seen:]
    del session.warnings[seen:]  # reported now, not again
    return None, warnings


async def drop_loaded(session: Any, loaded: list[Any]) -> None:
    """Shut down the plugins of a stopped load (`session_shutdown`); an `abort` (Escape again) stops what that
    waits for, as it stopped the load."""
    from ...plugins.startup import shut_down_loaded
    from ...plugins.ui import RpcUI

    await session.intake.change_hooks.run(shut_down_loaded(session, loaded, ui=lambda: RpcUI(session.emit)))


async def replace_plugins(session: Any, loaded: list[Any]) -> None:
    """Shut the session's plugins down (`session_shutdown`; an `abort` stops what it waits for) and install
    `loaded` in their place, their `session_start` handlers run."""
    from ...coding.hooks import SessionHooks
    from ...plugins.startup import install_loaded
    from ...plugins.tools import PluginTool
    from ...plugins.ui import RpcUI

    old = session.hooks
    if hasattr(old, "plugins"):
        await old.shutdown(graceful=True)
    session.hooks = SessionHooks()  # the session's tool gate asks the hooks it has at each call
    session.agent.tools = [t for t in session.agent.tools if not isinstance(t, PluginTool)]
    runner = install_loaded(session, loaded, ui=lambda: RpcUI(session.emit))
    if runner is not None:
        await runner.start()


def reload_keys(ui: Any, warnings: list[str]) -> str:
    """Read keybindings.json again (`InteractiveMode.load_keys`: its problems go to `warnings`, as at start)
    and bind the keys it gives; the line saying which actions' keys changed (`keys: app.exit ctrl+q (was
    ctrl+d)`)."""
    before = ui.keymap
    ui.load_keys(warnings)
    changed = [f"{action} {_keys_text(keys)} (was {_keys_text(before.get(action, []))})"
               for action, keys in ui.keymap.items() if keys != before.get(action)]
    return "keys: " + (", ".join(changed) if changed else "unchanged")


def _keys_text(keys: list[str]) -> str:
    return clean(", ".join(keys)) if keys else "(unbound)"


def plugin_versions(session: Any) -> dict[str, tuple[str, str | None]]:
    """The session's plugins: path → (id, `Plugin.source_digest`). Paths tell apart plugins of the same id
    (two `plugin.py` files); the digest tells a plugin whose source changed from one that did not."""
    return {str(getattr(p, "path", "?")): (str(getattr(p, "id", "?")), getattr(p, "source_digest", None))
            for p in getattr(session.hooks, "plugins", [])}


def kept_code_line(session: Any) -> list[str]:
    """The line naming the plugins that run the code first imported, not their current source, and why
    (`Plugin.kept_code`: `plugins/module_import.py`); none when there is none."""
    kept = [f"{clean(str(p.id))} ({clean(p.kept_code)})" for p in getattr(session.hooks, "plugins", [])
            if getattr(p, "kept_code", None)]
    return ["plugins running the code first imported (restart to run an edit): " + ", ".join(kept)] if kept else []


def _by_id(change: tuple[list[str], list[str], list[str]], versions: dict[str, tuple[str, str | None]]
           ) -> tuple[list[str], list[str], list[str]]:
    """`change` of plugin paths told by plugin ids."""
    added, removed, changed = ([versions[path][0] for path in paths] for paths in change)
    return added, removed, changed


def getattr_names(resources: Any, kind: str) -> list[Any]:
    return {"context": resources.context_files, "skills": resources.skills, "templates": resources.templates}[kind]


def _change_line(kind: str, change: tuple[list[str], list[str], list[str]], count: int) -> str:
    """`templates: 2 loaded (+/review, -/old, /greet changed)`, or `..., unchanged`."""
    added, removed, changed = change
    parts = ([f"+{clean(n)}" for n in added] + [f"-{clean(n)}" for n in removed]
             + [f"{clean(n)} changed" for n in changed])
    return f"{kind}: {count} loaded" + (f" ({', '.join(parts)})" if parts else ", unchanged")
