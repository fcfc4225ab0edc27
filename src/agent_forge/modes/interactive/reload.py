"""`/reload`: settings, context files, skills, prompt templates, plugins and keybindings.json read again, with the
loaders and the options of the start (`coding/resources/reload.py`, `plugins/startup.install_plugins`), then what
changed is reported. Plugins are shut down (`session_shutdown`) and loaded anew from their files, so an edited plugin runs
its new code; their `session_start` handlers run again."""

from __future__ import annotations

from typing import Any

from ...coding.errors import CommandError
from .render import clean
from .keymap import key_hint


class PluginArgs:
    """The command line's plugin choice: `-e` paths and whether discovery is on (`--no-plugins` off)."""

    def __init__(self, paths: list[str] | None = None, discover: bool = True):
        self.paths, self.discover = list(paths or []), discover


async def reload_everything(ui: Any, plugins: PluginArgs) -> list[str]:
    """Reload for the interactive mode `ui` (`session`); the lines to report. Raises `CommandError` while the
    agent works."""
    from ...coding.resources.reload import refresh_settings, reload_resources  # (not before the first paint)

    session = ui.session
    if session.is_streaming:
        raise CommandError("wait for the agent to finish" + key_hint("app.interrupt", " (or press {})")
                           + " before /reload")
    warnings = refresh_settings(session)
    apply_settings(session)
    ui.files.refresh()  # the `@` search's file list too
    resources, changes = reload_resources(session)
    warnings += resources.warnings
    lines = [_change_line(kind, added, removed, len(getattr_names(resources, kind)))
             for kind, (added, removed) in changes.items()]
    before = plugin_ids(session)
    warnings += await reload_plugins(session, plugins)
    after = plugin_ids(session)
    lines.append(_change_line("plugins", [p for p in after if p not in before], [p for p in before if p not in after],
                              len(after)))
    lines.append(reload_keys(ui, warnings))
    return lines + [f"warning: {clean(w)}" for w in dict.fromkeys(warnings)]


def apply_settings(session: Any) -> None:
    """Copy the settings the session keeps a value of (queue modes, the HTTP idle timeout) into it."""
    settings, agent = session.settings, session.agent
    agent.steering_mode = settings.steering_mode
    agent.follow_up_mode = settings.follow_up_mode
    agent.idle_timeout_s = settings.http_idle_timeout_s


async def reload_plugins(session: Any, plugins: PluginArgs) -> list[str]:
    """Shut the loaded plugins down, remove their tools and commands, and load them again; the warnings of the
    new load."""
    from ...coding.hooks import SessionHooks
    from ...plugins.startup import install_plugins
    from ...plugins.tools import PluginTool
    from ...plugins.ui import RpcUI

    old = session.hooks
    if hasattr(old, "plugins"):
        await old.shutdown(graceful=True)
    session.hooks = SessionHooks()  # the session's tool gate asks the hooks it has at each call
    session.agent.tools = [t for t in session.agent.tools if not isinstance(t, PluginTool)]
    seen = len(session.warnings)
    runner = await install_plugins(session, paths=plugins.paths, discover=plugins.discover,
                                   ui=lambda: RpcUI(session.emit))
    warnings = session.warnings[seen:]
    del session.warnings[seen:]  # reported now, not again
    if runner is not None:
        await runner.start()
    return warnings


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


def plugin_ids(session: Any) -> list[str]:
    return [str(getattr(p, "id", "?")) for p in getattr(session.hooks, "plugins", [])]


def getattr_names(resources: Any, kind: str) -> list[Any]:
    return {"context": resources.context_files, "skills": resources.skills, "templates": resources.templates}[kind]


def _change_line(kind: str, added: list[str], removed: list[str], count: int) -> str:
    parts = [f"+{clean(n)}" for n in added] + [f"-{clean(n)}" for n in removed]
    return f"{kind}: {count} loaded" + (f" ({', '.join(parts)})" if parts else ", unchanged")
