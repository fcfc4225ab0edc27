"""Branch summaries at SDK level: `AgentSession.navigate_tree` moves the leaf and can summarise the branch left."""

from __future__ import annotations

import asyncio

import pytest

from agent_forge.ai.providers.faux import FauxResponse, faux_requests, set_faux_responses
from agent_forge.coding.errors import AbortedError, CommandError
from agent_forge.coding.compaction.prompts import BRANCH_SUMMARY_SYSTEM_PROMPT
from agent_forge.coding.tools import create_coding_tools


async def test_summarised_move_appends_a_branch_summary_the_model_then_sees(make_session, key, tmp_path,
                                                                            read_entries):
    (tmp_path / "notes.md").write_text("notes\n")
    set_faux_responses([FauxResponse(text="one"),
                        FauxResponse(tool_calls=[("read", {"path": "notes.md"})]), FauxResponse(text="two"),
                        FauxResponse(error="503 busy", input_tokens=5),
                        FauxResponse(text="## Objective\nTried notes.", input_tokens=70, output_tokens=7),
                        FauxResponse(text="three")], key)
    session, rec = make_session(tools=create_coding_tools(str(tmp_path)))
    await session.prompt_and_wait("first")
    await session.prompt_and_wait("second")
    stored = read_entries(session)
    one_id = [e["id"] for e in stored if e["type"] == "message"][1]
    old_leaf = session.store.leaf_id

    outcome = await session.navigate_tree(one_id, summarize=True, custom_instructions="mention the file")
    entry = outcome["summaryEntry"]
    assert outcome["cancelled"] is False and entry["type"] == "branch_summary"
    assert entry["parentId"] == one_id and entry["fromId"] == old_leaf
    assert entry["summary"] == "## Objective\nTried notes.\n\n<files-read>\nnotes.md\n</files-read>"
    assert entry["details"]["readFiles"] == ["notes.md"] and entry["usage"]["input"] == 75
    request = faux_requests(key)[4]
    assert request.context["systemPrompt"] == BRANCH_SUMMARY_SYSTEM_PROMPT
    prompt = request.context["messages"][0]["content"][0]["text"]
    assert "[User]: second" in prompt and "first" not in prompt and prompt.endswith("attention to: mention the file")
    retry_events = [e for e in rec.events if e["type"].startswith("summarization_retry")]
    assert retry_events[1] == {"type": "summarization_retry_attempt_start", "source": "branchSummary"}
    assert [e["type"] for e in retry_events] == ["summarization_retry_scheduled", "summarization_retry_attempt_start",
                                                "summarization_retry_finished"]
    assert [m["role"] for m in session.messages] == ["user", "assistant", "branchSummary"]
    assert read_entries(session)[-1] == entry  # durable: a resumed session continues from it

    await session.prompt_and_wait("third")
    sent = faux_requests(key)[5].context["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "user"]
    assert "Tried notes." in sent[2]["content"][0]["text"]
    assert session.get_session_stats()["tokens"]["input"] >= 75


async def test_plain_move_and_errors(make_session, key):
    set_faux_responses([FauxResponse(text="one"), FauxResponse(text="two")], key)
    session, _ = make_session()
    await session.prompt_and_wait("first")
    await session.prompt_and_wait("second")
    first_id = session.store.branch()[-4]["id"]
    count = len(session.store.entries)
    outcome = await session.navigate_tree(first_id)
    assert outcome == {"cancelled": False, "summaryEntry": None}
    assert session.store.leaf_id == first_id and len(session.store.entries) == count
    assert [m["role"] for m in session.messages] == ["user"]
    with pytest.raises(CommandError, match="^Entry not found: nope$"):
        await session.navigate_tree("nope", summarize=True)
    assert len(faux_requests(key)) == 2


async def test_a_failed_summary_leaves_the_leaf_where_it_was(make_session, key):
    set_faux_responses([FauxResponse(text="one"), FauxResponse(text="two"), FauxResponse(error="401 denied")], key)
    session, _ = make_session()
    await session.prompt_and_wait("first")
    await session.prompt_and_wait("second")
    leaf = session.store.leaf_id
    with pytest.raises(CommandError, match="401 denied"):
        await session.navigate_tree(session.store.branch()[-3]["id"], summarize=True)
    assert session.store.leaf_id == leaf and len(session.messages) == 4


async def test_an_aborted_summary_raises_aborted_error_and_leaves_the_leaf_where_it_was(make_session, key,
                                                                                        read_entries):
    """Front ends tell an abort from a failure by its type (`AbortedError`), not by its message."""
    started = asyncio.Event()

    def hanging(context):
        started.set()
        return FauxResponse(text="## Objective\nnever", hang_after=0, release=asyncio.Event())

    set_faux_responses([FauxResponse(text="one"), FauxResponse(text="two"), hanging], key)
    session, _ = make_session()
    await session.prompt_and_wait("first")
    await session.prompt_and_wait("second")
    leaf = session.store.leaf_id
    moving = asyncio.ensure_future(session.navigate_tree(session.store.branch()[-3]["id"], summarize=True))
    await asyncio.wait_for(started.wait(), 10)
    await session.abort()
    with pytest.raises(AbortedError, match="^Branch summary aborted$"):
        await asyncio.wait_for(moving, 10)
    assert session.store.leaf_id == leaf and len(session.messages) == 4
    assert "branch_summary" not in [e["type"] for e in read_entries(session)]


async def test_a_message_queued_during_a_summarised_move_runs_once_the_move_is_over(make_session, key):
    """Like a manual compaction, a branch summary holds prompts queued meanwhile and sends them after, on the
    new branch; a move refused while the summary runs starts nothing."""
    release = asyncio.Event()
    started = asyncio.Event()

    def hanging(context):
        started.set()
        return FauxResponse(text="## Objective\nLeft behind.", hang_after=0, release=release)

    set_faux_responses([FauxResponse(text="one"), FauxResponse(text="two"), hanging,
                        FauxResponse(text="queued answer")], key)
    session, _ = make_session()
    await session.prompt_and_wait("first")
    await session.prompt_and_wait("second")
    target = session.store.branch()[-3]["id"]  # the first answer
    moving = asyncio.ensure_future(session.navigate_tree(target, summarize=True))
    await asyncio.wait_for(started.wait(), 10)
    assert session.prompt("then this", streaming_behavior="followUp") == "queued"
    with pytest.raises(CommandError):
        await session.navigate_tree(target)  # refused: the summary is going on
    assert not session.is_streaming and len(faux_requests(key)) == 3
    release.set()
    outcome = await asyncio.wait_for(moving, 10)
    await asyncio.wait_for(session.wait_for_idle(), 10)
    assert outcome["summaryEntry"] is not None and session.last_assistant_text() == "queued answer"
    sent = faux_requests(key)[3].context["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "user"]
    assert "Left behind." in sent[2]["content"][0]["text"] and sent[3]["content"][0]["text"] == "then this"
