"""Running a command's action chosen in a dialog (`/resume`'s session, `/tree`'s entry): errors as lines."""

from __future__ import annotations

from typing import Any

from ...coding.errors import CommandError
from .wording import error_text


async def guarded(ui: Any, work: Any) -> None:
    """Await `work`, a command's action chosen in a dialog: its `CommandError` is shown as an error line; the
    footer is drawn again either way (the action may have changed the session, model or name)."""
    try:
        with ui.dialogs.expecting():  # a next dialog (/login's key after its provider) gets what is typed first
            await work
    except CommandError as exc:
        ui.say(error_text(exc), "error")
    ui.footer_changed()
