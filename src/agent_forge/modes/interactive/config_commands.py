"""Built-in commands about configuration: `/scoped-models [patterns]` (the models Ctrl+P cycles through, for
this session) and `/trust` (record whether this project's code — plugins, settings that run programs — may
load, as `--trust-project` / `--distrust-project` do; it takes effect at the next start)."""

from __future__ import annotations

import os
from typing import Any

CONFIG_COMMANDS = {
    "scoped-models": "show or set the models ctrl+p cycles through: /scoped-models <pattern>,<pattern>",
    "trust": "record whether this project's plugins may load (next start)",
}


class ConfigCommands:
    """Runs the commands above for the interactive mode `ui` (`session`, `dialogs`, `say`)."""

    def __init__(self, ui: Any):
        self.ui = ui

    async def run(self, name: str, argument: str) -> None:
        await (self.scoped_models if name == "scoped-models" else self.trust)(argument)

    async def scoped_models(self, argument: str) -> None:
        control, warnings = self.ui.session.model_control, self.ui.session.warnings
        if argument:
            seen = len(warnings)
            control.configure_scope(argument)
            for warning in warnings[seen:]:
                self.ui.say(warning, "warning")
        scope = [f"{s.model['provider']}/{s.model['id']}" + (f":{s.thinking_level}" if s.thinking_level else "")
                 for s in control.scope]
        self.ui.say("scoped models: " + (", ".join(scope) if scope else "(none: ctrl+p cycles every model with a "
                                         "key)"))

    async def trust(self, argument: str) -> None:
        def reply(fields: dict[str, Any]) -> None:
            if "confirmed" in fields:
                self._record(bool(fields["confirmed"]))

        self.ui.dialogs.open({"method": "confirm", "title": "Trust this project?",
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
        self.ui.say(f"this project is {verdict} from the next start (recorded in {path})", "success")

