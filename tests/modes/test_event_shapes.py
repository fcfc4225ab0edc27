"""Every event a session really emits matches the TypedDict its `type` names (agent/events.py, coding/events.py):
a run with tools, queued messages, a retry, a compaction whose summary is retried, a failing plugin and plugin
dialogs, all recorded and checked with `support.event_shapes`."""

from __future__ import annotations

import asyncio
import json

import pytest

from agent_forge.agent.types import FunctionTool, text_result
from agent_forge.plugins import install_plugins
from agent_forge.plugins.ui import RpcUI
from agent_forge.sdk import FauxResponse, create_agent_session, faux_model, set_faux_responses
from support.event_shapes import shape_problems

OVERLOADED = '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
WORDS = "lorem ipsum dolor sit amet " * 20


async def _counting(args, on_update):
    on_update(text_result("counting 1"))  # a tool_execution_update with a partial result
    return text_result("counted", details={"n": 1})


COUNT = FunctionTool(name="count", description="Count.", parameters={"type": "object", "properties": {}},
                     fn=_counting)


def _failing_observer(plugin):
    plugin.on("turn_end", lambda event, ctx: 1 / 0)  # an extension_error per run


@pytest.fixture
async def recorded(tmp_path, request):
    key = request.node.name
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    (agent_dir / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 0},
                                                         "compaction": {"keepRecentTokens": 60}}))
    session = create_agent_session(cwd=str(tmp_path), model=faux_model(key=key), agent_dir=agent_dir,
                                   session_dir=str(tmp_path / "sessions"), tools=[COUNT])
    events: list[dict] = []
    session.subscribe(events.append)
    runner = await install_plugins(session, plugins=[_failing_observer], discover=False)
    yield key, session, runner, events
    session.store.close()


async def test_every_event_of_a_busy_session_matches_its_declared_shape(recorded):
    key, session, runner, events = recorded
    release = asyncio.Event()
    set_faux_responses([
        FauxResponse(tool_calls=[("count", {})]), FauxResponse(text="first " + WORDS, hang_after=2, release=release),
        FauxResponse(text="followed up " + WORDS), FauxResponse(error=OVERLOADED), FauxResponse(text="retried " + WORDS),
        FauxResponse(error="503 busy"), FauxResponse(text="## Objective\nSummary."),
    ], key)
    streaming = asyncio.Event()
    session.subscribe(lambda event: "first" in str(event.get("assistantMessageEvent")) and streaming.set())
    session.prompt("use the tool")
    await asyncio.wait_for(streaming.wait(), 10)  # the second response streams, then hangs until released
    assert session.prompt("and then this", streaming_behavior="followUp") == "queued"
    release.set()
    await session.wait_for_idle()
    await session.prompt_and_wait("again")  # overloaded once, then retried
    await session.compact()  # the summary request fails once and is retried
    await runner.wait_for_tasks()

    problems = [problem for event in events for problem in shape_problems(event)]
    assert problems == []
    seen = {event["type"] for event in events}
    assert seen >= {
        "agent_start", "agent_end", "agent_settled", "turn_start", "turn_end", "message_start", "message_update",
        "message_end", "tool_execution_start", "tool_execution_update", "tool_execution_end", "queue_update",
        "auto_retry_start", "auto_retry_end", "compaction_start", "compaction_end", "summarization_retry_scheduled",
        "summarization_retry_attempt_start", "summarization_retry_finished", "extension_error"}


async def test_plugin_dialogs_and_display_requests_match_their_declared_shape():
    requests: list[dict] = []
    ui = RpcUI(requests.append)
    ui.notify("hello", "warning")
    ui.set_status("k", "busy")
    ui.set_widget("w", ["a", "b"], placement="belowEditor")
    ui.set_title("title")
    ui.set_editor_text("draft")
    dialogs = [ui.select("pick", ["a", "b"], timeout=0.001), ui.confirm("sure?", "really", timeout=0.001),
               ui.input("name", "placeholder", timeout=0.001), ui.editor("edit", "prefill", timeout=0.001)]
    assert await asyncio.gather(*dialogs) == [None, False, None, None]  # each timed out to its default
    assert len(requests) == 9
    assert [problem for request in requests for problem in shape_problems(request)] == []


@pytest.mark.parametrize("event, problem", [
    ({"type": "agent_settled"}, "agent_settled: missing aborted"),
    ({"type": "agent_settled", "aborted": False, "extra": 1}, "agent_settled: undeclared field extra"),
    ({"type": "auto_retry_end", "success": True, "attempt": True}, "auto_retry_end.attempt: True is not"),
    ({"type": "compaction_start", "reason": "bored"}, "compaction_start.reason: 'bored' is not"),
    ({"type": "no_such_event"}, "undeclared event type 'no_such_event'"),
])
def test_the_shape_check_itself_finds_each_kind_of_mismatch(event, problem):
    problems = shape_problems(event)
    assert len(problems) == 1 and problems[0].startswith(problem)
