"""Escape / Ctrl+C (`InputActions.interrupt`) with a real AgentSession on the faux model: the key press stops
what works at that moment, not what starts a loop turn later.

Not an end-to-end test: in tmux the key cannot be made to land deterministically in the loop turn a step ends
in, so the key press is made from the session's own `agent_settled` listener, the last moment the run still
works, with the next run's start already scheduled (as a prompt held for the run's end would be)."""

from __future__ import annotations

import asyncio
from typing import Any

from agent_forge.modes.interactive.editor import PromptEditor
from agent_forge.modes.interactive.input_actions import InputActions
from agent_forge.modes.interactive.live import LiveState
from agent_forge.sdk import FauxResponse, create_agent_session, faux_model, faux_requests, set_faux_responses


class Keys(InputActions):
    """The key actions on their own: the editor and live state of the UI, no screen."""

    def __init__(self, session: Any) -> None:
        self.session, self.editor, self.live = session, PromptEditor(None), LiveState()
        self.tasks: list[asyncio.Task] = []

    def _spawn(self, coro: Any) -> asyncio.Task:
        self.tasks.append(asyncio.ensure_future(coro))
        return self.tasks[-1]


def user_runs(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(first user text, last assistant stopReason) of each run, from the session's `agent_end` events."""
    runs = []
    for event in events:
        if event["type"] == "agent_end":
            users = [m for m in event["messages"] if m["role"] == "user"]
            runs.append((users[0]["content"][0]["text"] if users else "", event["messages"][-1]["stopReason"]))
    return runs


async def test_escape_as_a_run_ends_does_not_abort_the_run_that_starts_next(tmp_path, request):
    key = request.node.name
    set_faux_responses([FauxResponse(text="Answer one."), FauxResponse(text="Answer two.")], key=key)
    session = create_agent_session(cwd=str(tmp_path), model=faux_model(key=key), agent_dir=tmp_path / "agent",
                                   session_dir=str(tmp_path / "sessions"))
    keys, events, second = Keys(session), [], asyncio.get_running_loop().create_future()

    def listener(event: dict[str, Any]) -> None:
        events.append(event)
        if event["type"] == "agent_settled" and not second.done():
            assert session.is_streaming  # the key press comes while the first run still works
            asyncio.get_running_loop().call_soon(lambda: second.set_result(session.submit("question two")))
            keys.interrupt()

    session.subscribe(listener)
    await session.submit("question one")
    assert await (await asyncio.wait_for(second, 10)) == "started"
    await asyncio.wait_for(asyncio.gather(*keys.tasks), 10)
    await asyncio.wait_for(session.wait_for_idle(), 10)
    assert user_runs(events) == [("question one", "stop"), ("question two", "stop")]
    assert [e["aborted"] for e in events if e["type"] == "agent_settled"] == [False, False]
    assert session.last_assistant_text() == "Answer two." and len(faux_requests(key)) == 2
    await session.close()

