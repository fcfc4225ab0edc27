"""SessionRun (coding/run.py): the named phase of a session-level run, and the one abortable-step helper."""

from __future__ import annotations

import asyncio

import pytest

from agent_forge.agent.loop import abortable_step
from agent_forge.coding.run import Phase
from agent_forge.coding.hooks import SessionHooks
from agent_forge.sdk import FauxResponse, create_agent_session, faux_model, set_faux_responses


class SlowBeforeRun(SessionHooks):
    """A plugin `before_run` that holds the run in STARTING until `go` is set (or it is cancelled)."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.go = asyncio.Event()

    async def before_run(self, prompts, system_prompt):
        self.entered.set()
        await self.go.wait()
        return system_prompt


def make_session(tmp_path, key):
    set_faux_responses([FauxResponse(text="one"), FauxResponse(text="two")], key)
    session = create_agent_session(cwd=str(tmp_path), model=faux_model(key=key), agent_dir=tmp_path / "agent",
                                   no_session=True, tools=[])
    events: list[dict] = []
    session.subscribe(events.append)
    return session, events


async def test_a_run_goes_starting_running_idle(tmp_path):
    session, events = make_session(tmp_path, f"run-{tmp_path.name}")
    session.hooks = hooks = SlowBeforeRun()
    assert session.run.phase is Phase.IDLE
    assert session.prompt("hi") == "started"
    await hooks.entered.wait()
    assert session.run.phase is Phase.STARTING and session.is_streaming
    hooks.go.set()
    await session.wait_for_idle()
    assert session.run.phase is Phase.IDLE and not session.is_streaming
    assert [e for e in events if e["type"] == "agent_settled"] == [{"type": "agent_settled", "aborted": False}]


async def test_abort_while_starting_keeps_the_prompt_and_settles_aborted_without_a_model_call(tmp_path):
    session, events = make_session(tmp_path, f"abort-{tmp_path.name}")
    session.hooks = hooks = SlowBeforeRun()
    session.prompt("hi")
    await hooks.entered.wait()
    await session.abort()
    assert session.run.phase is Phase.IDLE
    kinds = [e["type"] for e in events if e["type"] in ("agent_start", "agent_end", "agent_settled")]
    assert kinds == ["agent_start", "agent_end", "agent_settled"] and events[-1]["aborted"] is True
    assert [m["role"] for m in session.messages] == ["user", "assistant"]
    assert session.messages[-1]["stopReason"] == "aborted"
    hooks.go.set()
    assert session.prompt("again") == "started"  # the faux model's first answer was never asked for
    await session.wait_for_idle()
    assert session.messages[-1]["content"][0]["text"] == "one"


async def test_abortable_step_returns_the_unstarted_result_when_aborted():
    started = asyncio.Event()

    async def step():
        started.set()
        await asyncio.sleep(3600)

    tracked: list[object] = []
    waiting = asyncio.ensure_future(abortable_step(step(), unstarted=lambda: "aborted", track=tracked.append))
    await started.wait()
    tracked[0].cancel()
    assert await waiting == "aborted" and tracked[-1] is None


async def test_abortable_step_propagates_a_cancellation_that_is_no_abort():
    async def step():
        await asyncio.sleep(3600)

    tracked: list[asyncio.Task] = []
    waiting = asyncio.ensure_future(abortable_step(step(), aborted=lambda: False, track=tracked.append))
    await asyncio.sleep(0)
    tracked[0].cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting


async def test_abortable_step_cancels_the_step_with_its_caller():
    ended = asyncio.Event()

    async def step():
        try:
            await asyncio.sleep(3600)
        finally:
            ended.set()

    waiting = asyncio.ensure_future(abortable_step(step()))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert ended.is_set()


async def test_a_retry_wait_is_a_phase_and_abort_ends_it(tmp_path):
    key = f"wait-{tmp_path.name}"
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "settings.json").write_text('{"retry": {"baseDelayMs": 60000}}')
    session, events = make_session(tmp_path, key)
    set_faux_responses([FauxResponse(error="503 busy"), FauxResponse(text="never")], key)
    session.prompt("hi")
    for _ in range(1000):  # a bounded number of loop turns, no sleeping
        if session.run.phase is Phase.RETRY_WAIT:
            break
        await asyncio.sleep(0)
    assert session.run.phase is Phase.RETRY_WAIT and session.retry.waiting
    await session.abort()
    assert session.run.phase is Phase.IDLE
    assert [e["type"] for e in events][-2:] == ["auto_retry_end", "agent_settled"] and events[-1]["aborted"] is True
