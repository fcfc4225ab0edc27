"""`HookCalls`: the veto calls a session change waits on, run as abortable steps (`agent.loop.abortable_step`)."""

from __future__ import annotations

import asyncio

import pytest

from agent_forge.coding.hooks import HookCalls


async def test_cancelling_the_waiting_change_lets_the_hook_clean_up_before_it_goes_on() -> None:
    calls = HookCalls()
    started, ended = asyncio.Event(), []

    async def hook() -> bool:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            await asyncio.sleep(0)  # a cleanup that takes a loop turn
            ended.append("cleaned up")
        return False

    waiting = asyncio.ensure_future(calls.run(hook()))
    await started.wait()
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert ended == ["cleaned up"]


async def test_a_stopped_call_is_stopped_whatever_it_then_returns_or_raises() -> None:
    calls = HookCalls()
    started = asyncio.Event()

    async def stubborn(outcome: object) -> bool:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            if isinstance(outcome, Exception):
                raise outcome from None
        return bool(outcome)

    for outcome in (True, RuntimeError("late failure")):
        started.clear()
        waiting = asyncio.ensure_future(calls.run(stubborn(outcome)))
        await started.wait()
        assert len(calls.stop()) == 1
        assert await waiting == (True, None)
    assert calls.stop() == []  # nothing left running


async def test_a_call_not_stopped_gives_its_result_and_its_failure() -> None:
    calls = HookCalls()

    async def veto() -> bool:
        return True

    async def failing() -> bool:
        raise RuntimeError("hook bug")

    assert await calls.run(veto()) == (False, True)
    with pytest.raises(RuntimeError, match="hook bug"):
        await calls.run(failing())
    assert calls.stop() == []
