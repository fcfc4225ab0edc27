"""No session entry is written that the reader would skip (`session/fit.py`): an entry whose line would pass
`MAX_LINE_BYTES` is shrunk, largest parts first (images become a note, strings keep their start and a note, then
long lists), for every entry type; the file reopens whole, its chain unbroken. The limit is lowered to 256 KiB
here (the real 64 MiB runs once, end to end, in tests/e2e/test_session_big_entries.py)."""

from __future__ import annotations

import copy
import json

import pytest

from agent_forge.coding.message_persist import persist_message
from agent_forge.coding.session import file_lines
from agent_forge.coding.session.fit import OversizedEntry, fit_event, fit_line
from agent_forge.coding.session.reading import encode_line
from agent_forge.coding.session.store import SessionStore

LIMIT = 256 << 10


@pytest.fixture(autouse=True)
def low_limit(monkeypatch):
    monkeypatch.setattr(file_lines, "MAX_LINE_BYTES", LIMIT)


def tool_result(*blocks: dict) -> dict:
    return {"role": "toolResult", "toolCallId": "c1", "toolName": "read", "content": list(blocks),
            "isError": False, "timestamp": 1}


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def image(size: int) -> dict:
    return {"type": "image", "data": "A" * size, "mimeType": "image/png"}


def file_lines_of(store: SessionStore) -> list[bytes]:
    return store.path.read_bytes().splitlines()


def reopened(store: SessionStore) -> SessionStore:
    store.close()
    again = SessionStore.open(store.path)
    assert again.load_warnings == []
    assert [len(line) for line in file_lines_of(store) if len(line) > LIMIT] == []
    return again


def test_an_entry_that_fits_is_written_as_it_is():
    entry = {"type": "message", "id": "a", "parentId": None, "message": tool_result(text("x" * 1000))}
    assert fit_line(entry) == (encode_line(entry), None)


def test_a_huge_text_keeps_its_start_and_a_note_and_the_caller_object_is_untouched():
    entry = {"type": "message", "id": "a", "parentId": None, "message": tool_result(text("x" * 300_000))}
    before = copy.deepcopy(entry)
    line, cut = fit_line(entry)
    assert entry == before
    kept = json.loads(line)["message"]["content"][0]["text"]
    assert len(line) - 1 <= LIMIT and kept.startswith("x" * 200_000)
    left_out = 300_000 - kept.index("\n")
    assert kept.endswith(f"\n[... {left_out:,} more characters left out: a session entry holds at most "
                         f"{LIMIT:,} bytes]")
    assert cut == f"{left_out:,} characters"


def test_control_characters_count_as_the_six_bytes_they_escape_to():
    entry = {"type": "custom", "id": "a", "parentId": None, "customType": "x", "data": "\x01" * 60_000}
    line, cut = fit_line(entry)
    assert len(line) - 1 <= LIMIT and json.loads(line)["data"].startswith("\x01" * 30_000)
    assert cut is not None and cut.endswith("characters")


def test_an_image_bigger_than_the_text_is_dropped_with_a_note():
    entry = {"type": "message", "id": "a", "parentId": None,
             "message": tool_result(text("small text"), image(400_000))}
    line, cut = fit_line(entry)
    content = json.loads(line)["message"]["content"]
    assert content == [text("small text"), text(
        f"[image/png image of 400,000 base64 characters left out: a session entry holds at most {LIMIT:,} bytes]")]
    assert cut == "1 image"


def test_many_small_items_keep_the_first_ones_and_a_note():
    entry = {"type": "message", "id": "a", "parentId": None,
             "message": tool_result(*[text(f"line {i}") for i in range(30_000)])}
    line, cut = fit_line(entry)
    content = json.loads(line)["message"]["content"]
    assert len(line) - 1 <= LIMIT and content[:3] == [text("line 0"), text("line 1"), text("line 2")]
    assert content[-1]["type"] == "text" and "more items left out" in content[-1]["text"]
    assert cut.endswith("list items") and content[-2] == text(f"line {len(content) - 2}")


def test_an_entry_no_cut_can_fit_is_refused_and_nothing_is_added(tmp_path):
    store = SessionStore.create(tmp_path, tmp_path / "s")
    store.append_message({"role": "user", "content": "hi", "timestamp": 1})
    with pytest.raises(OversizedEntry, match=f"a session entry holds at most {LIMIT:,} bytes"):
        store.append_custom("state", {f"k{i}": i for i in range(40_000)})
    assert [e["type"] for e in store.entries] == ["message"] and len(file_lines_of(store)) == 2


BIG = "y" * 400_000
APPENDS = {
    "message": lambda s: s.append_message({"role": "user", "content": [text(BIG), image(300_000)], "timestamp": 1}),
    "custom": lambda s: s.append_custom("plugin-state", {"blob": BIG}),
    "custom_message": lambda s: s.append_custom_message("note", BIG, True, {"raw": BIG}),
    "compaction": lambda s: s.append_compaction(BIG, None, 10),
    "branch_summary": lambda s: s.append_branch_summary(None, BIG),
    "session_info": lambda s: s.append_session_info(BIG),
    "label": lambda s: s.append_label(s.leaf_id, BIG),
}


@pytest.mark.parametrize("kind", APPENDS)
def test_every_entry_type_is_shrunk_and_the_chain_after_it_is_whole(tmp_path, kind, capsys):
    store = SessionStore.create(tmp_path, tmp_path / "s")
    store.append_message({"role": "user", "content": "before", "timestamp": 1})
    big = APPENDS[kind](store)
    assert store.last_cut is not None and f"a {kind} entry was too large" in capsys.readouterr().err
    after = store.append_message({"role": "assistant", "content": [text("after")], "timestamp": 2})
    assert store.last_cut is None
    again = reopened(store)
    assert again.entries == store.entries and again.get_entry(big["id"]) == big
    assert [e["id"] for e in again.branch()][-2:] == [big["id"], after["id"]]


def test_a_copied_session_is_fitted_too(tmp_path):
    entries = [{"type": "message", "id": "a", "parentId": None, "timestamp": "t",
                "message": {"role": "user", "content": BIG, "timestamp": 1}}]
    store = SessionStore.create(tmp_path, tmp_path / "s", entries=entries)
    assert reopened(store).entries == store.entries and len(store.entries[0]["message"]["content"]) < LIMIT


@pytest.mark.parametrize("message", [
    tool_result(text(BIG)),
    {"role": "custom", "customType": "note", "content": BIG, "display": True, "details": {"n": 1}, "timestamp": 1},
], ids=["toolResult", "custom"])
def test_the_agents_message_takes_the_shrunk_content_so_memory_equals_the_file(tmp_path, message):
    store = SessionStore.create(tmp_path, tmp_path / "s")
    store.append_message({"role": "user", "content": "hi", "timestamp": 1})
    persist_message(store, message)
    assert len(message["content"] if isinstance(message["content"], str) else message["content"][0]["text"]) < LIMIT
    resumed = reopened(store).build_context().messages[-1]
    assert resumed == message  # a custom message takes its entry's time, the one a resume reads
    saved = copy.deepcopy(store.entries[-1])
    if isinstance(message["content"], list):
        message["content"][0]["text"] = "changed"
    else:
        message["details"]["n"] = 2
    assert store.entries[-1] == saved  # the agent's copy is its own


def update_event(partial: object) -> dict:
    return {"type": "tool_execution_update", "toolCallId": "c1", "toolName": "t", "args": {"n": 1},
            "partialResult": partial}


def test_an_event_that_fits_is_sent_as_it_is_and_a_bigger_one_as_a_shrunk_copy():
    small = update_event({"content": [text("x" * 1000)], "details": {"tags": {"a"}}})  # a set: the mode's encoder
    assert fit_event(small) is small
    big = update_event({"content": [text("p" * (2 * LIMIT)), image(2000)], "details": {"tags": {"a"}}})
    fitted = fit_event(big)
    assert len(big["partialResult"]["content"][0]["text"]) == 2 * LIMIT  # the tool's own value is not changed
    assert len(json.dumps(fitted, separators=(",", ":"))) <= LIMIT
    [kept, picture] = fitted["partialResult"]["content"]
    assert kept["text"].startswith("p" * (LIMIT // 2)) and kept["text"].endswith(
        f"more characters left out: an event line holds at most {file_lines.line_limit()}]")
    assert picture == image(2000)  # cut just enough: the largest part only
    assert {key: fitted[key] for key in ("type", "toolCallId", "toolName", "args")} == {
        key: big[key] for key in ("type", "toolCallId", "toolName", "args")}
    assert fitted["partialResult"]["details"] == {"tags": "{'a'}"}  # what JSON cannot hold, as its text


def test_an_event_json_cannot_encode_is_left_to_the_modes_encoder():
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    event = update_event({"content": [], "details": deep})
    assert fit_event(event) is event
