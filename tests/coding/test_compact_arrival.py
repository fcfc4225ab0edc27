"""`AgentSession.compact` takes its place at the call (docs/rpc.md, "What a command stops or holds follows arrival
order"): the run it aborts is the one going on then, and a prompt submitted after the call is never cancelled by
that abort, also when the run it aborts started after the call, from a prompt still in plugin input handlers
when `compact` was called."""

from __future__ import annotations

import asyncio

from agent_forge.coding.errors import CommandError
from agent_forge.coding.hooks import SessionHooks
from agent_forge.sdk import FauxResponse, create_agent_session, faux_model, set_faux_responses


class GatedInput(SessionHooks):
    """Plugin input handlers that hold each prompt whose text has a gate until the gate is set."""

    def __init__(self, *texts: str) -> None:
        self.gates = {text: asyncio.Event() for text in texts}

    def handles_input(self) -> bool:
        return True

    async def input(self, text, images, streaming_behavior):
        if text in self.gates:
            await self.gates[text].wait()
        return text, images


def make_session(tmp_path, hooks: SessionHooks):
    key = f"compact-arrival-{tmp_path.name}"
    set_faux_responses([FauxResponse(text="answer")] * 2, key)
    session = create_agent_session(cwd=str(tmp_path), model=faux_model(key=key), agent_dir=tmp_path / "agent",
                                   no_session=True, tools=[])
    session.hooks = hooks
    return session


async def test_a_run_started_after_the_call_is_aborted_without_cancelling_prompts_submitted_after_it(tmp_path):
    """`first` (in input handlers at the call) starts the run `compact` then aborts; `second`, submitted after the
    call and still in the input handlers then, is queued and runs once the (here failing) compaction is over."""
    hooks = GatedInput("first", "second")
    session = make_session(tmp_path, hooks)
    events: list[dict] = []
    session.subscribe(events.append)
    session.subscribe(lambda e: e["type"] == "compaction_start" and hooks.gates["second"].set())
    first = session.submit("first")
    compacting = session.compact()  # idle now: it acts once it runs, when `first` has started its run
    second = session.submit("second", streaming_behavior="followUp")
    hooks.gates["first"].set()
    assert await first == "started"
    try:
        await compacting
    except CommandError as exc:  # the session is too small to compact: the prompt after it runs all the same
        assert "Nothing to compact" in str(exc)
    assert await second == "queued"
    await session.wait_for_idle()
    texts = [(m["role"], m["content"][0]["text"] if m["content"] else "") for m in session.messages]
    assert texts[0] == ("user", "first") and texts[-2:] == [("user", "second"), ("assistant", "answer")]
    assert events[-1] == {"type": "agent_settled", "aborted": False}
