"""The approval questions of RPC and the terminal UI (`modes/approvals.py`), without a process."""

from __future__ import annotations

import asyncio

from agent_forge.coding.approvals import ALLOW_ALWAYS, ALLOW_ONCE, REJECT, ApprovalRequest
from agent_forge.modes.approvals import DialogApprover, withdraw_on_end
from agent_forge.modes.interactive.dialogs import Dialogs

REQUEST = ApprovalRequest(id="call-1", name="bash", arguments={"command": "git status"}, title="bash: git status",
                          kind="execute", always='bash commands starting with "git status"')


async def ask(approver, events, value):
    """Ask `REQUEST` and answer its select with `value`."""
    seen = len(events)
    task = asyncio.ensure_future(approver(REQUEST))
    while len(events) == seen:
        await asyncio.sleep(0)
    assert approver.ui.resolve({"id": events[-1]["id"], "value": value})
    return await task


async def test_each_option_maps_to_its_decision():
    events = []
    approver = DialogApprover(events.append)
    assert (await ask(approver, events, "Allow once")).choice == ALLOW_ONCE
    assert (await ask(approver, events, 'Always allow bash commands starting with "git status" (this session)')
            ).choice == ALLOW_ALWAYS
    assert (await ask(approver, events, "Reject")).choice == REJECT
    assert events[0]["title"] == "Allow bash: git status?" and events[0]["message"] == "git status"
    assert events[0]["toolCallId"] == "call-1" and events[0]["kind"] == "execute"


async def test_a_timeout_or_a_closed_input_is_no_answer():
    events = []
    decision = await DialogApprover(events.append, timeout=0.01)(REQUEST)
    assert decision.choice == REJECT and decision.answered is False and events[0]["timeout"] == 10
    closed = DialogApprover(events.append)
    closed.close()
    assert (await closed(REQUEST)).answered is False


async def test_an_unknown_value_rejects_and_a_reason_comes_from_the_input():
    events = []
    approver = DialogApprover(events.append)
    task = asyncio.ensure_future(approver(REQUEST))
    await asyncio.sleep(0)
    approver.ui.resolve({"id": events[-1]["id"], "value": "Allow everything forever"})
    assert (await task).answered is False
    task = asyncio.ensure_future(approver(REQUEST))
    await asyncio.sleep(0)
    approver.ui.resolve({"id": events[-1]["id"], "value": "Reject, and tell the model why"})
    await asyncio.sleep(0)
    assert events[-1]["method"] == "input" and events[-1]["toolCallId"] == "call-1"
    approver.ui.resolve({"id": events[-1]["id"], "value": "not now"})
    decision = await task
    assert decision.choice == REJECT and decision.reason == "not now" and decision.answered


async def test_the_terminal_ui_closes_a_question_when_its_call_ends():
    class Editor:
        def set_text(self, text): ...
        def clear(self): ...
        def snapshot(self): return "", {}
        def restore(self, draft): return True

    listeners = []

    class Session:
        def subscribe(self, listener):
            listeners.append(listener)
            return lambda: listeners.remove(listener)

    answers = []
    dialogs = Dialogs(answers.append, Editor(), lambda: None)
    withdraw_on_end(Session(), dialogs.withdraw)
    request = {"type": "extension_ui_request", "id": "q1", "method": "select", "title": "Allow?",
               "options": ["Allow once"], "toolCallId": "call-1"}
    dialogs.open(request)
    listeners[0](request)
    listeners[0]({"type": "tool_execution_end", "toolCallId": "other"})
    assert dialogs.current is not None
    listeners[0]({"type": "tool_execution_end", "toolCallId": "call-1"})
    assert dialogs.current is None and answers == []  # closed without an answer
