"""Verbatim-line compaction (`compaction.strategy: "verbatim-lines"`) driving a real AgentSession (faux model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_forge.ai.providers.faux import FauxResponse, faux_requests, set_faux_responses
from agent_forge.coding.errors import CommandError
from agent_forge.coding.compaction.prompts import VERBATIM_PROMPT_VERSION, VERBATIM_SYSTEM_PROMPT

VERBATIM = {"compaction": {"strategy": "verbatim-lines"}}


async def three_exchanges(session):
    for question in ("first", "second", "third"):
        await session.prompt_and_wait(question)


def answers(*extra):
    return [FauxResponse(text="one"), FauxResponse(text="two"), FauxResponse(text="three"), *extra]


@pytest.mark.parametrize("answer, rung, text", [
    ("1,2", "planned", "(filtered 2 lines)\n[User]: second\n[Assistant]: two"),
    ("```\n2,1\n```", "repaired", "(filtered 2 lines)\n[User]: second\n[Assistant]: two"),
    ("Lines 2 to 2\nand line 4", "repaired", "[User]: first\n(filtered 1 lines)\n[User]: second\n(filtered 1 lines)"),
    ("I would not delete anything.", "mechanical",
     "[User]: first\n(filtered 1 lines)\n[User]: second\n(filtered 1 lines)"),
    ("1,4", "mechanical", "[User]: first\n(filtered 1 lines)\n[User]: second\n(filtered 1 lines)"),
])
async def test_manual_verbatim_compaction_rungs(make_session, key, read_entries, answer, rung, text):
    set_faux_responses(answers(FauxResponse(text=answer, input_tokens=40, output_tokens=4),
                               FauxResponse(text="four")), key)
    session, rec = make_session(VERBATIM)
    await three_exchanges(session)
    file_before = Path(session.store.path).read_bytes()
    third_id = [e["id"] for e in read_entries(session) if e["type"] == "message"][4]
    result = await session.compact()

    assert set(result) == {"compactedText", "firstKeptEntryId", "tokensBefore", "promptVersion", "parameters",
                           "rung", "stats", "backupPath", "usage"}
    assert result["compactedText"] == text and result["rung"] == rung
    assert result["firstKeptEntryId"] == third_id and result["promptVersion"] == VERBATIM_PROMPT_VERSION
    assert result["parameters"] == {"compression_ratio": 0.5, "preserve_recent": 2, "query": "third"}
    stats = result["stats"]
    assert (stats["linesBefore"], stats["linesDeleted"] + stats["linesKept"]) == (4, 4)
    assert stats["linesDeleted"] == 2 and stats["rangeCount"] == text.count("(filtered")
    assert stats["tokensBefore"] == result["tokensBefore"] and stats["tokensAfter"] > 0
    assert 0 <= stats["percentReduction"] <= 100
    assert Path(result["backupPath"]).read_bytes() == file_before
    assert rec.of("compaction_end")[-1]["result"] == result

    request = faux_requests(key)[3]
    assert request.context["systemPrompt"] == VERBATIM_SYSTEM_PROMPT
    prompt = request.context["messages"][0]["content"][0]["text"]
    assert "1| [User]: first\n2| [Assistant]: one\n3| [User]: second\n4| [Assistant]: two\n</transcript>" in prompt
    assert "third" not in prompt.split("<transcript>")[1]  # the preserved tail is not numbered
    entry = read_entries(session)[-1]
    assert entry["type"] == "compaction" and entry["summary"] == text and entry["firstKeptEntryId"] == third_id
    assert entry["details"]["strategy"] == "verbatim-lines" and entry["details"]["rung"] == rung
    assert entry["details"]["backupPath"] == result["backupPath"]

    await session.prompt_and_wait("fourth")
    sent = faux_requests(key)[4].context["messages"]
    assert text in sent[0]["content"][0]["text"]
    assert [m["content"][0]["text"] for m in sent[1:]] == ["third", "three", "fourth"]


async def test_preserve_recent_zero_sends_everything_and_keeps_no_entry(make_session, key, read_entries):
    settings = {"compaction": {"strategy": "verbatim-lines", "preserveRecent": 0, "compressionRatio": 0.25}}
    set_faux_responses(answers(FauxResponse(text="2,2"), FauxResponse(text="four")), key)
    session, _ = make_session(settings)
    await three_exchanges(session)
    result = await session.compact("keep the numbers")
    assert result["firstKeptEntryId"] is None and read_entries(session)[-1]["firstKeptEntryId"] is None
    assert result["parameters"] == {"compression_ratio": 0.25, "preserve_recent": 0, "query": "keep the numbers"}
    assert "about 25% of the lines" in faux_requests(key)[3].context["messages"][0]["content"][0]["text"]
    assert [m["role"] for m in session.messages] == ["compactionSummary"]
    await session.prompt_and_wait("fourth")
    assert [m["role"] for m in faux_requests(key)[4].context["messages"]] == ["user", "user"]


async def test_repeated_verbatim_compaction_renumbers_the_compacted_text(make_session, key):
    set_faux_responses(answers(FauxResponse(text="1,2"), FauxResponse(text="four"), FauxResponse(text="1,1")), key)
    session, _ = make_session(VERBATIM)
    await three_exchanges(session)
    await session.compact()
    with pytest.raises(CommandError, match="^Already compacted$"):
        await session.compact()
    await session.prompt_and_wait("fourth")
    result = await session.compact()
    prompt = faux_requests(key)[5].context["messages"][0]["content"][0]["text"]
    assert "1| (filtered 2 lines)\n2| [User]: second\n3| [Assistant]: two\n4| [User]: third\n5| [Assistant]: three" \
           in prompt
    assert result["compactedText"].startswith("(filtered 1 lines)\n[User]: second")


async def test_a_transcript_too_large_for_the_window_falls_back_without_a_request(make_session, key):
    big = "x" * 40000
    set_faux_responses([FauxResponse(text=big), FauxResponse(text="two"), FauxResponse(text="three")], key)
    session, rec = make_session({"compaction": {"strategy": "verbatim-lines", "enabled": False}},
                                context_window=8000)
    await three_exchanges(session)
    assert not rec.of("compaction_start")
    result = await session.compact()
    assert result["rung"] == "mechanical" and len(faux_requests(key)) == 3
    assert result["usage"]["totalTokens"] == 0 and big not in result["compactedText"]
    assert json.dumps(result)  # the result is plain JSON
