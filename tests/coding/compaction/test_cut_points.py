"""Where a summary compaction cuts a real session branch (SessionStore in memory)."""

from __future__ import annotations

import pytest

from agent_forge.coding.errors import CompactionError
from agent_forge.coding.compaction.cut_points import ALREADY_COMPACTED, NOTHING_TO_COMPACT, is_cut_point, prepare
from agent_forge.coding.session.store import SessionStore

WORDS = "word " * 40  # 200 characters: 50 tokens at chars/4


def user(text):
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def assistant(text="", calls=()):
    content = [{"type": "text", "text": text}] if text else []
    content += [{"type": "toolCall", "id": cid, "name": name, "arguments": args} for cid, name, args in calls]
    return {"role": "assistant", "content": content, "stopReason": "toolUse" if calls else "stop", "timestamp": 2,
            "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}}


def result(cid, text):
    return {"role": "toolResult", "toolCallId": cid, "toolName": "read", "content": [{"type": "text", "text": text}],
            "isError": False, "timestamp": 3}


def store_with(*messages):
    store = SessionStore.in_memory("/tmp")
    store.append_model_change("faux", "m")
    ids = [store.append_message(m)["id"] for m in messages]
    return store, ids


def texts(messages):
    out = []
    for m in messages:
        blocks = m.get("content") or []
        out.append(m["role"] + ":" + "".join(b.get("text", "") for b in blocks if isinstance(b, dict))[:6])
    return out


def test_cut_lands_on_a_user_message_and_keeps_the_recent_budget():
    store, ids = store_with(user("q1 " + WORDS), assistant("a1 " + WORDS), user("q2 " + WORDS),
                            assistant("a2 " + WORDS))
    plan = prepare(store.branch(), keep_recent_tokens=80)
    assert plan.first_kept_entry_id == ids[2]
    assert texts(plan.history) == ["user:q1 wor", "assistant:a1 wor"]
    assert plan.request_start == [] and texts(plan.kept) == ["user:q2 wor", "assistant:a2 wor"]
    assert plan.previous_summary is None


def test_a_long_turn_is_split_at_an_assistant_message_never_at_a_tool_result():
    calls = [("c1", "read", {"path": "a.py"})]
    store, ids = store_with(user("do it"), assistant("", calls), result("c1", WORDS * 3),
                            assistant("", [("c2", "read", {"path": "b.py"})]), result("c2", WORDS * 3),
                            assistant("done " + WORDS))
    plan = prepare(store.branch(), keep_recent_tokens=200)
    # walking back: done (51) + result c2 (150) reaches 200 at the result; the next valid cut is "done"
    assert plan.first_kept_entry_id == ids[5]
    assert plan.history == [] and [m["role"] for m in plan.request_start] == [
        "user", "assistant", "toolResult", "assistant", "toolResult"]
    assert [m["role"] for m in plan.kept] == ["assistant"]


def test_only_tool_results_after_the_budget_point_keep_a_little_more():
    store, ids = store_with(user("q " + WORDS), assistant("", [("c1", "read", {"path": "x"})]),
                            result("c1", WORDS * 4))
    plan = prepare(store.branch(), keep_recent_tokens=10)
    assert plan.first_kept_entry_id == ids[1]  # the call, with its result
    assert texts(plan.request_start) == ["user:q word"]


def test_nothing_to_compact_when_everything_fits():
    store, _ = store_with(user("hi"), assistant("hello"))
    with pytest.raises(CompactionError, match=r"Nothing to compact \(session too small\)"):
        prepare(store.branch(), keep_recent_tokens=20000)
    empty = SessionStore.in_memory("/tmp")
    with pytest.raises(CompactionError, match=NOTHING_TO_COMPACT.replace("(", r"\(").replace(")", r"\)")):
        prepare(empty.branch(), keep_recent_tokens=0)


def test_repeated_compaction_starts_at_the_kept_boundary_and_never_cuts_before_the_old_entry():
    store, ids = store_with(user("q1 " + WORDS), assistant("a1 " + WORDS), user("q2 " + WORDS),
                            assistant("a2 " + WORDS))
    store.append_compaction(summary="OLD NOTE", first_kept_entry_id=ids[2], tokens_before=100,
                            details={"readFiles": ["r.txt"], "modifiedFiles": []})
    with pytest.raises(CompactionError, match=ALREADY_COMPACTED):
        prepare(store.branch(), keep_recent_tokens=10)
    new_user = store.append_message(user("q3 " + WORDS))["id"]
    store.append_message(assistant("a3"))
    plan = prepare(store.branch(), keep_recent_tokens=100000)  # everything would fit: cut right after the entry
    assert plan.first_kept_entry_id == new_user
    assert texts(plan.history) == ["user:q2 wor", "assistant:a2 wor"]  # kept last time, condensed now
    assert plan.previous_summary == "OLD NOTE" and plan.previous_details["readFiles"] == ["r.txt"]


def test_cut_point_kinds():
    def entry(kind, **fields):
        return {"type": kind, "id": "x", "parentId": None, "timestamp": "", **fields}

    assert is_cut_point(entry("message", message=user("u")))
    assert is_cut_point(entry("message", message={"role": "bashExecution", "command": "ls"}))
    assert is_cut_point(entry("branch_summary", summary="s")) and is_cut_point(entry("custom_message"))
    assert not is_cut_point(entry("message", message=result("c", "r")))
    assert not is_cut_point(entry("model_change", provider="p", modelId="m"))


# -- an oversized message (issue 10, 13) -------------------------------------------------------------------

HUGE = "x" * 40_000  # 10,000 tokens


def failed():
    return {**assistant(), "stopReason": "error", "errorMessage": "400 maximum context length"}


def test_an_oversized_message_of_an_earlier_turn_is_condensed_not_kept():
    store, ids = store_with(user("q " * 50), assistant("a"), user(HUGE), failed(), user("small"))
    plan = prepare(store.branch(), 2048)
    assert plan.first_kept_entry_id == ids[3]  # past the paste: kept, it would overflow again
    assert texts(plan.request_start) == ["user:xxxxxx"] and len(plan.history) == 2


def test_the_latest_request_stays_word_for_word_however_large():
    store, ids = store_with(user("q " * 50), assistant("a"), user(HUGE))
    assert prepare(store.branch(), 2048).first_kept_entry_id == ids[2]
    alone, _ = store_with(user(HUGE))
    with pytest.raises(CompactionError, match=r"^Nothing to compact"):
        prepare(alone.branch(), 2048)


def test_a_message_that_reaches_the_budget_without_exceeding_it_is_kept():
    store, ids = store_with(user("x" * 4000), assistant("a"), user("y" * 4000), assistant("b"), user("now"))
    assert prepare(store.branch(), 1000).first_kept_entry_id == ids[2]  # 1,000 tokens of a 1,000 budget
