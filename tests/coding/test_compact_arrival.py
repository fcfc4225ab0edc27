"""`AgentSession.compact` takes its place at the call, among the prompts (docs/rpc.md, "What a command stops or
holds follows arrival order"): it acts once the prompts submitted before it have their outcome, on the run going
on then (also one such a prompt started), and a prompt submitted after the call is never cancelled by its abort.
It is called as RPC calls it: at once, its result awaited by a task (`asyncio.ensure_future`)."""

from __future__ import annotations

import asyncio

import pytest

from agent_forge.coding.errors import AbortedError, CommandError
from agent_forge.coding.hooks import SessionHooks
from agent_forge.sdk import FauxResponse, create_agent_session, faux_model, set_faux_responses


class GatedInput(SessionHooks):
    """Plugin input handlers that hold each prompt whose text has a gate until the gate is set; `entered[text]`
    is set once the prompt is held there."""

    def __init__(self, *texts: str) -> None:
        self.gates = {text: asyncio.Event() for text in texts}
        self.entered = {text: asyncio.Event() for text in texts}

    def handles_input(self) -> bool:
        return True

    async def input(self, text, images, streaming_behavior):
        if text in self.gates:
            self.entered[text].set()
            await self.gates[text].wait()
        return text, images


def make_session(tmp_path, hooks: SessionHooks):
    key = f"compact-arrival-{tmp_path.name}"
    set_faux_responses([FauxResponse(text="answer")] * 2, key)
    session = create_agent_session(cwd=str(tmp_path), model=faux_model(key=key), agent_dir=tmp_path / "agent",
                                   no_session=True, tools=[])
    session.hooks = hooks
    return session


def texts(session) -> list[tuple[str, str]]:
    """`[(role, first text)]` of the session's messages (`""` for an empty aborted answer)."""
    return [(m["role"], m["content"][0]["text"] if m["content"] else "") for m in session.messages]


async def test_a_run_started_after_the_call_is_aborted_without_cancelling_prompts_submitted_after_it(tmp_path):
    """`first` (held in input handlers while the compact's task runs) starts the run `compact` then aborts;
    `second`, submitted after the call and still in the input handlers then, is queued and runs once the (here
    failing) compaction is over."""
    hooks = GatedInput("first", "second")
    session = make_session(tmp_path, hooks)
    events: list[dict] = []
    session.subscribe(events.append)
    session.subscribe(lambda e: e["type"] == "compaction_start" and hooks.gates["second"].set())
    first = session.submit("first")
    compacting = asyncio.ensure_future(session.compact())
    second = session.submit("second", streaming_behavior="followUp")
    await hooks.entered["first"].wait()  # the compact's task has had its first step meanwhile
    hooks.gates["first"].set()
    assert await first == "started"
    try:
        await compacting
    except CommandError as exc:  # the session is too small to compact: the prompt after it runs all the same
        assert "Nothing to compact" in str(exc)
    assert await second == "queued"
    await session.wait_for_idle()
    assert texts(session)[0] == ("user", "first") and session.messages[1]["stopReason"] == "aborted"
    assert texts(session)[-2:] == [("user", "second"), ("assistant", "answer")]
    assert events[-1] == {"type": "agent_settled", "aborted": False}


async def test_an_abort_before_its_turn_refuses_the_prompt_and_stops_the_compact(tmp_path):
    """`first` held in input handlers, `compact` waiting for its outcome, then `abort`: both are stopped."""
    hooks = GatedInput("first")
    session = make_session(tmp_path, hooks)
    first = session.submit("first")
    compacting = asyncio.ensure_future(session.compact())
    aborted = session.begin_abort()
    with pytest.raises(CommandError, match="^Aborted while plugin input handlers were running"):
        await first
    with pytest.raises(AbortedError, match="^Compaction aborted$"):
        await compacting
    await aborted
    assert session.messages == [] and not session.is_streaming
