"""Built-in commands about configuration: `/settings` (the common settings: pick one, pick its value; saved to
`<agent dir>/settings.json`, read back into the session at once and applied where it can be), `/reload`
(`reload.py`), `/scoped-models [patterns]` (the models Ctrl+P cycles through, for this session) and `/trust`
(record whether this project's code — plugins, settings that run programs — may load, as `--trust-project` /
`--distrust-project` do; it takes effect at the next start)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable

from ...ai.options import THINKING_LEVELS
from ...coding.errors import ConfigFileError
from ...coding.paths import path_text
from ...coding.settings import QUEUE_MODES
from ...coding.safe_read import read_json_file
from .keymap import key_hint, with_keys

CONFIG_COMMANDS = {
    "settings": "change a common setting (saved to settings.json)",
    "scoped-models": "show or set the models {app.model.cycle} cycles through",
    "trust": "record whether this project's plugins may load (next start)",
    "reload": "read settings, context files, skills, templates and plugins again",
}


class ConfigCommands:
    """Runs the commands above for the interactive mode `ui` (`session`, `dialogs`, `say`)."""

    def __init__(self, ui: Any):
        self.ui = ui

    async def run(self, name: str, argument: str) -> None:
        handler = {"settings": self.settings, "scoped-models": self.scoped_models, "trust": self.trust,
                   "reload": self.reload}[name]
        await handler(argument)

    async def settings(self, argument: str) -> None:
        session = self.ui.session
        labels = {f"{key} (now: {_shown(session.settings.get(key, default))})": key
                  for key, (_, default, _) in SETTINGS.items()}

        def chosen(fields: dict[str, Any]) -> None:
            if isinstance(fields.get("value"), str):
                self._pick_value(labels[fields["value"]])

        self.ui.dialogs.open({"method": "select", "title": "Change which setting?", "options": list(labels)},
                             chosen)

    def _pick_value(self, key: str) -> None:
        from ...coding.paths import agent_dir
        from .theme_files import available_themes

        values = available_themes(agent_dir()) if key == "theme" else SETTINGS[key][0]

        def chosen(fields: dict[str, Any]) -> None:
            if isinstance(fields.get("value"), str):
                self._save(key, fields["value"])

        current = _shown(self.ui.session.settings.get(key, SETTINGS[key][1]))
        self.ui.dialogs.open({"method": "select", "title": f"{key}:", "options": values, "selected": current},
                             chosen)

    def _save(self, key: str, text: str) -> None:
        """Write `key` into the agent dir's settings.json, read the settings again into the session (in place:
        everything reading them sees the new value now), then apply it where the UI keeps a copy."""
        from ...coding.paths import agent_dir
        from ...coding.resources.reload import refresh_settings

        value: Any = {"true": True, "false": False}.get(text, text)
        path = agent_dir() / "settings.json"
        try:
            write_setting(path, key, value)
        except (OSError, ValueError) as exc:
            self.ui.say(f"cannot save {key} in {path_text(path)}: {exc}", "error")
            return
        refresh_settings(self.ui.session)
        effective = self.ui.session.settings.get(key, SETTINGS[key][1])
        if effective != value:
            note = f"the project's settings.json sets {_shown(effective)}, which wins here"
        else:
            apply = SETTINGS[key][2]
            note = apply(self.ui, value) if apply else "from the next start"
        self.ui.say(f"{key} = {_shown(value)} saved in {path_text(path)} ({note})", "success")
        self.ui.footer_changed()

    async def reload(self, argument: str) -> None:
        from .reload import reload_everything

        self.ui.say("reloading…")
        # Plugins' setups and session_shutdown / session_start handlers may wait: Escape or Ctrl+C stops a
        # setup (the plugins then stay as they were) or what a shutdown or start still runs
        reloading = reload_everything(self.ui, self.ui.plugin_args)
        (kept, lines), interrupted = await self.ui.interruptible("reloading…", reloading)
        if kept is not None:
            self.ui.say(f"reloaded all but the plugins: {kept}\n" + "\n".join(lines), "warning")
        else:
            stopped = " (plugin code still running was stopped)" if interrupted else ""
            self.ui.say(f"reloaded{stopped}\n" + "\n".join(lines), "success")
        self.ui.apply_theme(self.ui.session.settings.get("theme"))  # its file may have changed too

    async def scoped_models(self, argument: str) -> None:
        control, warnings = self.ui.session.model_control, self.ui.session.warnings
        if argument:
            seen = len(warnings)
            control.configure_scope(argument)
            for warning in warnings[seen:]:
                self.ui.say(warning, "warning")
        scope = [f"{s.model['provider']}/{s.model['id']}" + (f":{s.thinking_level}" if s.thinking_level else "")
                 for s in control.scope]
        self.ui.say("scoped models: " + (", ".join(scope) if scope else with_keys(
            "(none: {app.model.cycle} cycles every model with a key)")))

    async def trust(self, argument: str) -> None:
        def reply(fields: dict[str, Any]) -> None:
            if "confirmed" in fields:
                self._record(bool(fields["confirmed"]))

        self.ui.dialogs.open({"method": "confirm", "title": "Trust this project?", "default": True,  # asked for
                              "message": "Its plugins and settings that run programs load from the next start."},
                             reply)

    def _record(self, trusted: bool) -> None:
        from ...coding.paths import agent_dir
        from ...coding.resources.trust import TrustFileError, record_trust

        try:
            path = record_trust(os.getcwd(), agent_dir(), trusted)
        except TrustFileError as exc:
            self.ui.say(str(exc), "error")
            return
        verdict = "trusted: its plugins load" if trusted else "not trusted: its plugins do not load"
        self.ui.say(f"this project is {verdict} from the next start (recorded in {path_text(path)})", "success")


def _apply_queue(queue: str) -> Callable[[Any, Any], str]:
    def apply(ui: Any, value: Any) -> str:
        ui.session.set_queue_mode(queue, value)
        return "applied now"
    return apply


def _apply_flag(attribute: str) -> Callable[[Any, Any], str]:
    def apply(ui: Any, value: Any) -> str:
        getattr(ui.session, attribute).enabled = value
        return "applied now"
    return apply


def _apply_theme(ui: Any, value: Any) -> str:
    ui.apply_theme(value)
    return "applied to what is shown from now on"


def _apply_hide_thinking(ui: Any, value: Any) -> str:
    ui.live.show_thinking = not value
    return "applied now" + key_hint("app.thinking.toggle", "; {} toggles")


SETTINGS: dict[str, tuple[list[str], Any, Callable[[Any, Any], str] | None]] = {
    "theme": ([], "dark", _apply_theme),
    "defaultThinkingLevel": (list(THINKING_LEVELS), None, None),
    "hideThinkingBlock": (["true", "false"], True, _apply_hide_thinking),
    "steeringMode": (list(QUEUE_MODES), "one-at-a-time", _apply_queue("steering")),
    "followUpMode": (list(QUEUE_MODES), "one-at-a-time", _apply_queue("followUp")),
    "retry.enabled": (["true", "false"], True, _apply_flag("retry")),
    "compaction.enabled": (["true", "false"], True, _apply_flag("compaction")),
    "quietStartup": (["true", "false"], False, None),
    "enableSkillCommands": (["true", "false"], True, lambda ui, value: "from the next /reload or start"),
}
"""Setting → (values offered (themes: those found), the default shown, how to apply it to the running UI and
session, or None: from the next start)."""


def write_setting(path: Path, dotted: str, value: Any) -> None:
    """Set `dotted` (`retry.enabled`: nested objects) in the JSON object of `path`, keeping every other key;
    written to a temporary file renamed over it (a key written twice keeps its last value, the one in use).
    Raises ValueError when the file cannot be read as a JSON object (`safe_read.read_json_file`)."""
    try:
        data = read_json_file(path, if_blank={})
    except FileNotFoundError:
        data = {}
    except ConfigFileError as exc:
        raise ValueError(str(exc)) from None
    if not isinstance(data, dict):
        raise ValueError("settings.json does not hold a JSON object")
    *parents, last = dotted.split(".")
    target = data
    for part in parents:
        if not isinstance(target.get(part), dict):
            target[part] = {}
        target = target[part]
    target[last] = value
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".settings-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(data, indent=2) + "\n")
    os.replace(temporary, path)


def _shown(value: Any) -> str:
    return "(unset)" if value is None else json.dumps(value) if isinstance(value, bool) else str(value)
