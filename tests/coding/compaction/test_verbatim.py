"""Verbatim-line compaction: reading and repairing the model's deletion ranges, rebuilding, splitting, backups."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_forge.coding.errors import CompactionError
from agent_forge.coding.compaction.line_ranges import Line, mechanical_ranges, parse_ranges, rebuild, usable
from agent_forge.coding.compaction.verbatim import (
    Split,
    VerbatimParams,
    VerbatimPlan,
    numbered,
    split_context,
    transcript_lines,
)
from agent_forge.coding.session.store import SessionStore
from agent_forge.coding.settings import Settings


def lines(n, protected=()):
    return [Line(f"line {i}", protected=i in protected) for i in range(1, n + 1)]


def test_clean_records_are_planned():
    parsed = parse_ranges("2,3\n 6 , 7 \n\n9,9\n", 10)
    assert parsed.ranges == [(2, 3), (6, 7), (9, 9)] and parsed.repaired is False


@pytest.mark.parametrize("answer, expected", [
    ("```\n2,3\n```", [(2, 3)]),  # code fences
    ("Delete these:\n2,3\n6,7", [(2, 3), (6, 7)]),  # prose
    ("3,2\n7,6", [(2, 3), (6, 7)]),  # reversed
    ("6,7\n2,3", [(2, 3), (6, 7)]),  # out of order
    ("0,3\n8,99", [(1, 3), (8, 10)]),  # out of range, clamped
    ("2,5\n4,6", [(2, 6)]),  # overlapping
    ("2-3\nlines 6 to 7", [(2, 3), (6, 7)]),  # other separators
    ("- 4", [(4, 4)]),  # a single line number
    ("2,3\n50,60", [(2, 3)]),  # a range wholly past the end is dropped
])
def test_malformed_records_are_repaired(answer, expected):
    parsed = parse_ranges(answer, 10)
    assert parsed.ranges == expected and parsed.repaired is True
    assert usable(parsed, 10)


def test_adjacent_ranges_merge_without_counting_as_a_repair():
    parsed = parse_ranges("2,3\n4,5", 10)
    assert parsed.ranges == [(2, 5)] and parsed.repaired is False


@pytest.mark.parametrize("answer", ["", "No lines should be deleted.", "```\n```", "1,10", "1,4\n5,10", "20,30"])
def test_unusable_answers(answer):
    assert not usable(parse_ranges(answer, 10), 10)


@given(st.text(max_size=200), st.integers(min_value=1, max_value=50))
def test_any_answer_parses_to_sorted_disjoint_ranges_in_bounds(answer, count):
    ranges = parse_ranges(answer, count).ranges
    assert all(1 <= a <= b <= count for a, b in ranges)
    assert all(prev[1] + 1 < nxt[0] for prev, nxt in zip(ranges, ranges[1:]))


def test_rebuild_replaces_each_deleted_run_by_a_marker():
    text = rebuild(lines(6), [(2, 3), (5, 5)])
    assert text.split("\n") == ["line 1", "(filtered 2 lines)", "line 4", "(filtered 1 lines)", "line 6"]
    assert rebuild(lines(3), [(1, 3)]) == "(filtered 3 lines)"


def test_mechanical_deletes_the_oldest_unprotected_lines_and_keeps_one():
    assert mechanical_ranges(lines(10, protected={1, 4}), 0.5) == [(2, 3), (5, 7)]
    assert mechanical_ranges(lines(1), 0.5) == []  # deleting the only line would leave nothing
    assert mechanical_ranges(lines(2), 0.9) == [(1, 1)]


def test_numbered_rows():
    assert numbered([Line("a"), Line("b")]) == "1| a\n2| b"


def _store(*texts):
    store = SessionStore.in_memory("/tmp")
    ids = []
    for i, text in enumerate(texts):
        role = "user" if i % 2 == 0 else "assistant"
        message = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": i}
        if role == "assistant":
            message["stopReason"] = "stop"
        ids.append(store.append_message(message)["id"])
    return store, ids


def test_split_keeps_exactly_the_newest_messages_and_zero_keeps_none():
    store, ids = _store("q1", "a1\nmore", "q2", "a2")
    split = split_context(store.branch(), 2)
    assert [m["content"][0]["text"] for m in split.tail] == ["q2", "a2"] and split.first_kept_entry_id == ids[2]
    assert [line.text for line in transcript_lines(split.head)] == ["[User]: q1", "[Assistant]: a1", "more"]
    assert transcript_lines(split.head)[0].protected is True
    everything = split_context(store.branch(), 0)
    assert everything.tail == [] and everything.first_kept_entry_id is None and len(everything.head) == 4


def test_after_a_compaction_only_newer_messages_can_be_preserved():
    store, ids = _store("q1", "a1", "q2", "a2")
    store.append_compaction(summary="[User]: q1\n(filtered 1 lines)", first_kept_entry_id=ids[2],
                            tokens_before=5)
    with pytest.raises(CompactionError, match="Already compacted"):
        split_context(store.branch(), 2)
    new = store.append_message({"role": "user", "content": [{"type": "text", "text": "q3"}], "timestamp": 9})
    split = split_context(store.branch(), 2)
    assert split.first_kept_entry_id == new["id"] and len(split.tail) == 1
    assert [line.text for line in transcript_lines(split.head)] == [
        "[User]: q1", "(filtered 1 lines)", "[User]: q2", "[Assistant]: a2"]


def test_params_from_settings_fall_back_on_bad_values():
    good = Settings(raw={"compaction": {"compressionRatio": 0.25, "preserveRecent": 0}})
    assert VerbatimParams.from_settings(good) == VerbatimParams(compression_ratio=0.25, preserve_recent=0)
    bad = Settings(raw={"compaction": {"compressionRatio": 2, "preserveRecent": -1}})
    assert VerbatimParams.from_settings(bad) == VerbatimParams()


def test_backup_copies_the_file_before_the_entry_is_written(tmp_path):
    session_file = tmp_path / "s.jsonl"
    session_file.write_text('{"type":"session"}\n')
    plan = VerbatimPlan(split=Split(head=[], tail=[], first_kept_entry_id=None), compacted_text="",
                        parameters={}, rung="planned", ranges=[], stats={}, usage={}, tokens_before=0)
    plan.before_write(session_file)
    assert re.fullmatch(r"s\.jsonl\.\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z\.compact\.bak",
                        plan.backup_path.rsplit("/", 1)[1])
    assert open(plan.backup_path).read() == '{"type":"session"}\n'
    plan.before_write(None)  # an in-memory session: nothing to copy, nothing fails
    long_name = tmp_path / ("s" * 230 + ".jsonl")  # its backup name is longer than a file name may be
    long_name.write_text("x")
    with pytest.raises(CompactionError, match="Could not write the session backup"):
        plan.before_write(long_name)


def test_request_lines_of_an_earlier_compacted_text_stay_protected():
    summary = {"role": "compactionSummary", "summary": "(filtered 3 lines)\n[User]: fix\n[Assistant]: ok"}
    rows = transcript_lines([summary])
    assert [(line.text, line.protected) for line in rows] == [
        ("(filtered 3 lines)", False), ("[User]: fix", True), ("[Assistant]: ok", False)]
    assert mechanical_ranges(rows, 0.9) == [(1, 1), (3, 3)]  # the request line stays
