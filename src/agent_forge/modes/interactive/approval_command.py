"""`/approvals [full|ask|read-only]`: show the session's approval policy (and what "always" remembered), or
change it for this session; without an argument a dialog offers the policies. The setting `approvals` and
`--approvals` choose the start policy (`modes/approvals.py`)."""

from __future__ import annotations

from typing import Any

from ...coding.approvals import POLICIES
from ...coding.errors import CommandError

DESCRIPTION = "show or set which tool calls run unasked, for this session (full, ask, read-only)"
HINT = "[full|ask|read-only]"
MEANING = {"full": "every tool call runs", "ask": "ask before calls that may change something",
           "read-only": "only tools that read run"}


async def approvals_command(ui: Any, argument: str) -> None:
    """Run `/approvals` for the interactive mode `ui` (`session`, `say`, `dialogs`)."""
    if argument:
        _set(ui, argument)
        return
    approvals = ui.session.approvals
    remembered = approvals.remembered()
    always = f"; always allowed: {', '.join(remembered)}" if remembered else ""
    ui.say(f"approvals: {approvals.policy} ({MEANING[approvals.policy]}){always}")
    labels = {f"{policy}: {MEANING[policy]}": policy for policy in POLICIES}

    def chosen(fields: dict[str, Any]) -> None:
        if fields.get("value") in labels:
            _set(ui, labels[fields["value"]])

    current = next((label for label, policy in labels.items() if policy == approvals.policy), None)
    ui.dialogs.open({"method": "select", "title": "Approvals for this session:", "options": list(labels),
                     "selected": current}, chosen)


def _set(ui: Any, policy: str) -> None:
    try:
        ui.session.approvals.set_policy(policy)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    ui.say(f"approvals: {policy} ({MEANING[policy]}) for this session", "success")
