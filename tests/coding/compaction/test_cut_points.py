"""cut_points.prepare on hand-built branches: where the kept part starts."""

from __future__ import annotations

import pytest

from agent_forge.coding.compaction.cut_points import NOTHING_TO_COMPACT, CompactionError, prepare


def entry(index: int, role: str, text: str = "", stop: str = "stop") -> dict:
    message = {"role": role, "content": [{"type": "text", "text": text}] if text else [], "timestamp": index}
    if role == "assistant":
        message["stopReason"] = stop
    return {"type": "message", "id": f"e{index}", "parentId": f"e{index - 1}" if index else None,
            "message": message}


HUGE = "x" * 40_000  # 10,000 tokens


def test_an_oversized_message_of_an_earlier_turn_is_condensed_not_kept():
    path = [entry(0, "user", "q " * 50), entry(1, "assistant", "a"), entry(2, "user", HUGE),
            entry(3, "assistant", "", stop="error"), entry(4, "user", "small")]
    plan = prepare(path, keep_recent_tokens=2048)
    assert plan.first_kept_entry_id == "e3"  # past the paste: kept, it would overflow again
    assert [m["content"][0]["text"] for m in plan.request_start] == [HUGE]
    assert len(plan.history) == 2


def test_the_latest_request_stays_word_for_word_however_large():
    path = [entry(0, "user", "q " * 50), entry(1, "assistant", "a"), entry(2, "user", HUGE)]
    assert prepare(path, keep_recent_tokens=2048).first_kept_entry_id == "e2"
    with pytest.raises(CompactionError, match=NOTHING_TO_COMPACT.replace("(", r"\(").replace(")", r"\)")):
        prepare(path[2:], keep_recent_tokens=2048)


def test_a_message_within_the_budget_that_reaches_it_is_kept():
    path = [entry(0, "user", "x" * 4000), entry(1, "assistant", "a"), entry(2, "user", "y" * 4000),
            entry(3, "assistant", "b"), entry(4, "user", "now")]
    assert prepare(path, keep_recent_tokens=1000).first_kept_entry_id == "e2"  # 1,000 of 1,000
