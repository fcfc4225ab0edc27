"""Approvals in ACP: the session's approval policy (`coding/approvals.py`) is its session mode (`ask` by
default, `full`, `read-only`; `session/set_mode`), and a question is `session/request_permission` with the
options `allow_once`, `allow_always` (named after what it remembers: the tool, or a bash command's first two
words; not offered for a command with shell operators) and `reject`. A client that answers `cancelled` or nothing
at all (until `session/cancel` aborts the call) rejects. An error answer or a malformed one (`answers.py`, or an
option id that was not offered) is no answer: the refusal tells the model nobody approved the call, naming the
editor's error or the problem."""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from ...coding.approvals import ALLOW_ALWAYS, ALLOW_ONCE, REJECT, Decision
from . import tool_calls
from .answers import BadAnswer
from .protocol import AcpError

MODES = [
    {"id": "ask", "name": "Ask", "description": "Ask before edits, commands and other tools; reading runs"},
    {"id": "full", "name": "Full access", "description": "Run every tool call without asking"},
    {"id": "read-only", "name": "Read only", "description": "Only read, grep, find and ls run; the rest is refused"},
]
DEFAULT_MODE = "ask"
ALLOW_OPTION = {"optionId": ALLOW_ONCE, "name": "Allow", "kind": "allow_once"}
REJECT_OPTION = {"optionId": REJECT, "name": "Reject", "kind": "reject_once"}


def options(always: str | None) -> list[dict[str, Any]]:
    """The permission options; `always` is what "allow always" would remember (None: not offered)."""
    remembered = [{"optionId": ALLOW_ALWAYS, "name": f"Always allow {always}", "kind": "allow_always"}]
    return [ALLOW_OPTION, *(remembered if always else []), REJECT_OPTION]


def mode_state(policy: str) -> dict[str, Any]:
    """`SessionModeState` for the `modes` of `session/new` and `session/load`."""
    return {"currentModeId": policy, "availableModes": MODES}


class PermissionAsker:
    """The `Approver` of one session (`coding/approvals.py`): `session/request_permission` to the client;
    `on_allowed(toolCallId)` is called when the user allows the call (it runs then, `updates.Updates.allowed`)."""

    def __init__(self, request: Callable[[str, dict[str, Any]], Awaitable[Any]], session_id: str, cwd: str,
                 on_allowed: Callable[[str], None] = lambda _id: None):
        self.request, self.session_id, self.cwd = request, session_id, cwd
        self.on_allowed = on_allowed

    async def __call__(self, call: Any) -> str | Decision:  # an `ApprovalRequest`
        name = str(call.get("name"))
        args = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
        tool_call = {"toolCallId": str(call.get("id")), "title": tool_calls.title_of(name, args),
                     "kind": tool_calls.kind_of(name), "status": "pending", "rawInput": args,
                     "locations": tool_calls.locations_of(name, args, self.cwd),
                     "content": tool_calls.pending_content(name, args, self.cwd)}
        try:
            answer = await self.request("session/request_permission", {
                "sessionId": self.session_id, "toolCall": tool_call, "options": options(call.get("always"))})
        except BadAnswer as exc:  # not the user's choice: the refusal says the question got no usable answer
            return Decision(REJECT, exc.message, answered=False)
        except AcpError as exc:  # the editor failed to ask: nobody chose to reject (its text is `client_text`)
            return Decision(REJECT, f"the editor answered session/request_permission with an error: "
                                    f"{exc.message}", answered=False)
        choice = _choice(answer, [option["optionId"] for option in options(call.get("always"))])
        if choice in (ALLOW_ONCE, ALLOW_ALWAYS):
            self.on_allowed(tool_call["toolCallId"])
        return choice


def _choice(answer: dict[str, Any], offered: list[str]) -> str | Decision:
    """The option the user chose (`cancelled`: a rejection); one that was not offered is a malformed answer,
    not the user's choice (`answers.py` checked the shape)."""
    outcome = answer["outcome"]
    if outcome.get("outcome") != "selected":
        return REJECT
    chosen = outcome["optionId"]
    if chosen not in offered:
        problem = f"it chose the option {chosen[:80]!r}, which was not offered ({', '.join(offered)})"
        return Decision(REJECT, BadAnswer("session/request_permission", problem).message, answered=False)
    return chosen
