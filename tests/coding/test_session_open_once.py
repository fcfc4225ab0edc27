"""Opening a session file reads it in one pass: each message is checked for the context once (the check that
warns about unusable entries is the one the first context uses), and the file's numbers are screened for
integers past 64 bits once, reading them as integers on both JSON backends."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_forge.coding.session import context, sharing
from agent_forge.coding.session import store as store_module
from agent_forge.coding.session.store import SessionStore

pytestmark = pytest.mark.usefixtures("json_backend")


def write_session(tmp_path: Path) -> tuple[Path, list[str]]:
    store = SessionStore.create(tmp_path / "project", tmp_path / "sessions")
    ids = [store.append_message({"role": "user", "content": f"q{i}", "timestamp": i})["id"] for i in range(3)]
    store.append_message({"role": "user", "content": 42, "timestamp": 3})  # unusable shape: warned, left out
    store.append_message({"role": "user", "content": "big", "timestamp": 2**70})
    store.close()
    assert store.path is not None
    return store.path, ids


def count_checks(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The messages checked for the context from now on, one item a check: by `context_message`, or by the walk
    made while parsing (`sharing.shared_and_checked`) and the field check of the first context
    (`shapes.repaired`, given the messages the walk left unrepaired)."""
    calls: list[object] = []
    for module, name in ((context, "context_message"), (sharing, "context_message")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda message, real=real: calls.append(message) or real(message))

    def repaired(messages: list[object], unrepaired: list[object]) -> list[object]:
        calls.extend(unrepaired)
        return real_repaired(messages, unrepaired)

    real_repaired = store_module.repaired
    monkeypatch.setattr(store_module, "repaired", repaired)
    return calls


def test_each_message_is_checked_once_on_open(tmp_path, monkeypatch):
    path, _ = write_session(tmp_path)
    calls = count_checks(monkeypatch)
    store = SessionStore.open(path)
    messages = store.build_context().messages
    assert len(calls) == 5
    assert [m["content"] for m in messages] == ["q0", "q1", "q2", "big"]
    assert any("unusable shape" in warning.message for warning in store.load_warnings)
    assert store.build_context().messages == messages  # cached for the same leaf


def test_a_context_edit_after_open_is_checked_anew(tmp_path):
    path, ids = write_session(tmp_path)
    store = SessionStore.open(path)
    store.append_context_edit(ids[1], "q1 edited")  # the context holds a copy of the entry, with this content
    contents = [m["content"] for m in store.build_context().messages]
    assert contents == ["q0", "q1 edited", "q2", "big"]


def test_integers_past_64_bits_read_as_integers(tmp_path):
    path, _ = write_session(tmp_path)
    assert '"timestamp":1180591620717411303424' in path.read_text()
    store = SessionStore.open(path)
    last = store.entries[-1]["message"]["timestamp"]
    assert last == 2**70 and isinstance(last, int)
    assert json.loads(path.read_text().splitlines()[-1])["message"]["timestamp"] == last


def _branch_by_walk(store: SessionStore) -> list[str]:
    """The active branch's ids found by following parentId from the leaf (the store's general walk)."""
    return [entry["id"] for entry in store.branch(store.leaf_id)] if store.leaf_id else []


def test_a_file_in_one_chain_opens_with_its_branch_and_keeps_it_right_after_moves(tmp_path):
    path, ids = write_session(tmp_path)
    store = SessionStore.open(path)
    assert [entry["id"] for entry in store.branch()] == _branch_by_walk(store) == [e["id"] for e in store.entries]
    store.set_leaf(ids[1])  # a branch from the middle: the chain is no longer the branch
    reply = store.append_message({"role": "user", "content": "other way", "timestamp": 9})
    assert [entry["id"] for entry in store.branch()] == [*ids[:2], reply["id"]] == _branch_by_walk(store)
    store.close()
    reopened = SessionStore.open(path)  # not one chain in file order now: the parents are walked
    assert [entry["id"] for entry in reopened.branch()] == [*ids[:2], reply["id"]] == _branch_by_walk(reopened)
    assert [m["content"] for m in reopened.build_context().messages] == ["q0", "q1", "other way"]


SETTINGS_AND_MESSAGES = [
    {"type": "model_change", "provider": "p", "modelId": "m1"},
    {"type": "message", "message": {"role": "user", "content": "a", "timestamp": 1}},
    {"type": "thinking_level_change", "thinkingLevel": 7},  # wrong type: ignored
    {"type": "custom_message", "customType": "note", "content": "c", "display": True, "timestamp": 2},
    {"type": "model_change", "provider": "p", "modelId": 5},  # unusable: the earlier model stays
    {"type": "context_window_change", "provider": "p", "modelId": "m1", "contextWindow": 1000},
    {"type": "branch_summary", "fromId": "x", "summary": "went elsewhere", "timestamp": 3},
    {"type": "thinking_level_change", "thinkingLevel": "high"},
    {"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": "b"}],
                                    "provider": "q", "model": "answering", "timestamp": 4}},
]


@pytest.mark.parametrize("last", [None, {"type": "context_edit", "targetId": "e1", "replacement": "A"},
                                  {"type": "compaction", "summary": "s", "firstKeptEntryId": "e1",
                                   "tokensBefore": 10}])
def test_the_one_pass_context_equals_the_rules_for_the_same_path(last):
    """Without compactions and context edits `build_context` takes one pass; with one it applies the rules:
    both give what the rules give (settings of the whole path, messages in order)."""
    kinds = [*SETTINGS_AND_MESSAGES, *([last] if last else [])]
    path = [{"id": f"e{i}", "parentId": f"e{i - 1}" if i else None, "timestamp": "t", **entry}
            for i, entry in enumerate(kinds)]
    built = context.build_context(path)  # type: ignore[arg-type]
    rules = context._built_by_rules(path, None)  # type: ignore[arg-type]
    assert built == rules
    assert (built.model, built.thinking_level, built.context_window) == (("p", "m1"), "high", 1000)
    if last is None:
        assert len(built.messages) == 4


@pytest.mark.parametrize("block", [{"type": "toolCall", "name": "n", "arguments": {}},
                                   {"type": "toolCall", "id": "c", "name": 3, "arguments": {}},
                                   {"type": "toolCall", "id": "c", "name": "n", "arguments": []}])
def test_a_tool_call_block_missing_a_field_makes_its_message_unusable(block):
    sound = {"type": "toolCall", "id": "c", "name": "n", "arguments": {}}
    assert context.context_message({"role": "assistant", "content": [sound], "timestamp": 1}) is not None
    assert context.context_message({"role": "assistant", "content": [sound, block], "timestamp": 1}) is None


@pytest.mark.parametrize("last", [None, {"type": "context_edit", "targetId": "e1", "replacement": "A"},
                                  {"type": "compaction", "summary": "s", "firstKeptEntryId": "e1",
                                   "tokensBefore": 10}])
def test_opening_checks_and_builds_in_one_pass_as_the_two_passes_do(last):
    """`open_context` (a file in one chain) gives the context `build_context` gives and the unusable entries
    `unusable_entries` finds; with a compaction or a context edit it gives the checks for `build_context`."""
    kinds = [*SETTINGS_AND_MESSAGES, {"type": "message", "message": {"role": "user", "content": 42}},
             {"type": "branch_summary", "fromId": "x", "summary": 7}, *([last] if last else []),
             {"type": "message", "message": {"role": "user", "content": "after", "timestamp": "5"}}]
    path = [{"id": f"e{i}", "parentId": f"e{i - 1}" if i else None, "timestamp": "t", **entry}
            for i, entry in enumerate(kinds)]
    lines = list(range(2, len(path) + 2))
    built, unusable, checked = context.open_context(path, lines)  # type: ignore[arg-type]
    assert unusable == context.unusable_entries(path, lines, {})  # type: ignore[arg-type]
    assert [line for line, _ in unusable] == [4, 6, 11, 12]  # level 7, modelId 5, content 42, summary 7
    expected = context.build_context(path)  # type: ignore[arg-type]
    if last is None:
        assert built == expected and checked is None
        assert built.messages[-1] == {"role": "user", "content": "after", "timestamp": 0}  # repaired copy
    else:
        assert built is None and checked is not None
        assert context.build_context(path, checked) == expected  # type: ignore[arg-type]


def test_a_compacted_file_in_one_chain_checks_each_message_once(tmp_path, monkeypatch):
    store = SessionStore.create(tmp_path / "project", tmp_path / "sessions")
    ids = [store.append_message({"role": "user", "content": f"q{i}", "timestamp": i})["id"] for i in range(3)]
    store.append_message({"role": "user", "content": 42, "timestamp": 3})
    store.append_compaction("summary", ids[1], 100)
    store.append_message({"role": "user", "content": "q4", "timestamp": 4})
    store.close()
    calls = count_checks(monkeypatch)
    opened = SessionStore.open(store.path)
    contents = [m.get("content", m.get("summary")) for m in opened.build_context().messages]
    assert contents == ["summary", "q1", "q2", "q4"]
    assert len(calls) == 5
    assert [warning.lines for warning in opened.load_warnings] == [(5,)]


ODD_ENTRIES = [*SETTINGS_AND_MESSAGES, {"type": "message", "message": {"role": "user", "content": 42}},
               {"type": "branch_summary", "fromId": "x", "summary": 7},
               {"type": "context_edit", "targetId": "e1", "replacement": "A"},
               {"type": "compaction", "summary": "s", "firstKeptEntryId": "e1", "tokensBefore": 10},
               {"type": "message", "message": {"role": "user", "content": "after", "timestamp": "5"}},
               {"type": "message", "message": {"role": "toolResult", "content": [], "timestamp": 1}}]


@settings(max_examples=200, deadline=None)
@given(picks=st.lists(st.integers(0, len(ODD_ENTRIES) - 1), max_size=14))
def test_opening_with_the_checks_made_while_parsing_equals_opening_without(picks):
    """`open_context` given each entry's `shared_and_checked` (taken a run of messages at a time) finds the
    unusable entries and, once the store's first context is made from what it returns, the context it finds
    when it checks each message itself."""
    path = [{"id": f"e{i}", "parentId": f"e{i - 1}" if i else None, "timestamp": "t", **copy.deepcopy(ODD_ENTRIES[k])}
            for i, k in enumerate(picks)]
    lines = list(range(2, len(path) + 2))

    def first_context(checks: list[object] | None, unrepaired: list[object]) -> tuple[object, object]:
        built, unusable, checked = context.open_context(path, lines, checks)  # type: ignore[arg-type]
        built = built or context.build_context(path, checked)  # type: ignore[arg-type]
        return store_module.repaired(built.messages, unrepaired), unusable, built.model, built.thinking_level

    unrepaired: list[object] = []
    checks = [sharing.shared_and_checked(entry, {}, unrepaired) for entry in path]
    assert first_context(checks, unrepaired) == first_context(None, [])
