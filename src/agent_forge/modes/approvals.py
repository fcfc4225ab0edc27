"""Approvals in the CLI modes (`coding/approvals.py` has the policy): the start policy and who answers.

The start policy is `--approvals`, else the `approvals` setting (the user's settings.json, or a trusted
project's), else `full`. RPC mode and the terminal UI ask with an interaction-protocol `select`
(`extension_ui_request`, as a plugin's `select`, with the call's `toolCallId`, `toolName`, `kind` and `args`
added): allow once, always allow (what is remembered is in the option's text), reject, or reject saying why (an
`input` follows; its text goes to the model). A cancelled or timed-out question (setting `approvalTimeoutMs`;
default: no limit) and stdin EOF reject; an abort withdraws it with its tool call. Print and JSON mode have no
one to ask: under `ask` those calls are refused, as under `read-only`, saying so to the model (its tool result)
and to the user (one `Warning:` line on stderr per refused call, naming the call, why, and `--approvals full`,
which would run it; the exit code stays that of the run: README, "How -p and --mode json end").
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Callable

from ..coding.approvals import ALLOW_ALWAYS, ALLOW_ONCE, POLICIES, REJECT, ApprovalRequest, Decision
from ..coding.settings import approval_policy
from ..coding.tools.sanitize import print_warning

if TYPE_CHECKING:
    import argparse  # (a type only: the terminal UI imports this module before its first paint)

    from ..coding.agent_session import AgentSession
    from ..plugins.ui import PluginUI

ALLOW, REJECT_TEXT, REJECT_WHY = "Allow once", "Reject", "Reject, and tell the model why"
MAX_MESSAGE = 20_000
"""A question's `message` longer than this keeps its first and last halves around a mark (`args` has it all)."""
NOBODY = {"print": "print mode has no one to ask (run with --approvals full, or use the terminal UI or RPC)",
          "json": "JSON mode has no one to ask (run with --approvals full, or use the terminal UI or RPC)"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--approvals", choices=POLICIES, default=None,
                        help="which tool calls run unasked: full (all; the default), ask (ask before writes, edits, "
                             "commands and other tools that may change things), read-only (refuse those)")


def configure(session: AgentSession, policy: str | None, mode: str) -> None:
    """Set `session`'s start policy (`policy`, the `--approvals` value, else the setting, else full) and its
    approver for `mode` ("rpc", "interactive", "print" or "json")."""
    approvals = session.approvals
    approvals.set_policy(policy or approval_policy(session.settings, "full"))
    if mode in ("rpc", "interactive"):
        approvals.approver = DialogApprover(session.emit, _timeout(session))
    else:
        approvals.no_approver = NOBODY.get(mode, approvals.no_approver)
        approvals.on_refused = lambda request, why: print_warning(refusal_notice(request, approvals.policy, mode))


def refusal_notice(request: ApprovalRequest, policy: str, mode: str) -> str:
    """The user's line for a call the policy refused with no one to ask (print and JSON mode): the call, why,
    and the `--approvals` value that runs it (`full`: under `ask` there is still no one to say yes)."""
    why = (f"it needs approval (approvals: ask) and {'JSON' if mode == 'json' else mode} mode has no one to ask"
           if policy == "ask" else "the session is read-only (approvals: read-only)")
    return f"not run: {request['title']}: {why}; --approvals full would run it (the model was told it was refused)"


class DialogApprover:
    """An `Approver` asking over the interaction protocol (`RpcUI` events, which the terminal UI shows as its
    own dialogs). Its `ui` is made at the first question; answers come through `answer_dialog`."""

    def __init__(self, emit: Callable[[Any], None], timeout: float | None = None):
        self._emit, self.timeout = emit, timeout
        self.ui: PluginUI | None = None
        self._closed = False

    async def __call__(self, request: ApprovalRequest) -> Decision:
        ui = self._ui()
        always = f"Always allow {request['always']} (this session)" if request["always"] else None
        options = [ALLOW, *([always] if always else []), REJECT_TEXT, REJECT_WHY]
        fields = {**_call_fields(request), "title": f"Allow {request['title']}?", "options": options,
                  "message": _message(request)}
        value = await ui.agent_dialog("select", fields, timeout=self.timeout)
        if value is None or value not in options:
            return Decision(REJECT, "it was cancelled, timed out, or the client cannot answer", answered=False)
        if value == REJECT_WHY:
            reason = await ui.agent_dialog("input", {**_call_fields(request), "title": "Why? (the model sees this)"},
                                           timeout=self.timeout)
            return Decision(REJECT, reason)
        return Decision({ALLOW: ALLOW_ONCE, REJECT_TEXT: REJECT}.get(value, ALLOW_ALWAYS))

    def _ui(self) -> PluginUI:
        if self.ui is None:
            from ..plugins.ui import RpcUI

            self.ui = RpcUI(self._emit)
            if self._closed:
                self.ui.close()
        return self.ui

    def close(self) -> None:
        """No answer can come any more (stdin EOF): pending and later questions reject at once."""
        self._closed = True
        if self.ui is not None:
            self.ui.close()


def answer_dialog(session: AgentSession, answer: dict[str, Any]) -> None:
    """Deliver an `extension_ui_response`: to the pending approval question it answers, else to the plugins."""
    approver = session.approvals.approver
    if isinstance(approver, DialogApprover) and approver.ui is not None and approver.ui.resolve(answer):
        return
    session.hooks.ui_response(answer)


def input_closed(session: AgentSession) -> None:
    """The client can no longer answer (RPC stdin EOF): questions reject from now on."""
    approver = session.approvals.approver
    if isinstance(approver, DialogApprover):
        approver.close()


def withdraw_on_end(session: AgentSession, withdraw: Callable[[Any], None]) -> Callable[[], None]:
    """Call `withdraw(request id)` for each question still shown when its tool call ends (an abort, or a
    timeout); the terminal UI closes its dialog. Returns the unsubscribe function."""
    open_questions: dict[str, list[Any]] = {}

    def listen(event: dict[str, Any]) -> None:
        if event.get("type") == "extension_ui_request" and isinstance(event.get("toolCallId"), str):
            open_questions.setdefault(event["toolCallId"], []).append(event.get("id"))
        elif event.get("type") == "tool_execution_end":
            for request_id in open_questions.pop(str(event.get("toolCallId")), []):
                withdraw(request_id)

    return session.subscribe(listen)


def _call_fields(request: ApprovalRequest) -> dict[str, Any]:
    return {"toolCallId": request["id"], "toolName": request["name"], "kind": request["kind"],
            "args": request["arguments"]}


def _message(request: ApprovalRequest) -> str:
    return call_message(request["name"], request["arguments"])


def call_message(name: object, args: dict[str, Any], limit: int = MAX_MESSAGE) -> str:
    """The call as the user should see it: the whole command of a bash call, else the arguments as JSON; over
    `limit` characters, its first and last halves around `[… 12,345 characters not shown …]`."""
    if name == "bash" and isinstance(args.get("command"), str):
        text = args["command"]
    else:
        text = json.dumps(args, ensure_ascii=False, indent=1, default=str)
    if len(text) <= limit:
        return text
    # The end of a command is as much what it does as its start (`echo <4000 a's>; rm -rf ~`): keep both.
    half = limit // 2
    return f"{text[:half]}\n[… {len(text) - 2 * half:,} characters not shown …]\n{text[-half:]}"


def _timeout(session: AgentSession) -> float | None:
    value = session.settings.get("approvalTimeoutMs")
    return value / 1000 if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None
