"""Session store: file naming, lazy creation, entry shapes, round trips, branches and context."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import get_type_hints

import pytest

from agent_forge.coding.session.entries import ENTRY_SHAPES, iso_timestamp, parse_timestamp, timestamp_ms
from agent_forge.coding.session.store import SessionContext, SessionStore, encode_cwd, session_cwd_dir

pytestmark = pytest.mark.usefixtures("json_backend")  # the JSON codec rules hold on both backends


ENTRY_ID = re.compile(r"^[0-9a-f]{8}$")
ENTRY_TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
FILE_NAME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_[0-9a-f-]{36}\.jsonl$")


def user(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1_700_000_000_000}


def assistant(text: str) -> dict:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "faux",
        "provider": "faux",
        "model": "m",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": "stop",
        "timestamp": 1_700_000_000_001,
    }


def read_lines(path: Path) -> list[dict]:
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    return [json.loads(line) for line in raw.split(b"\n")[:-1]]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    cwd = tmp_path / "work" / "proj"
    cwd.mkdir(parents=True)
    return cwd


def test_encode_cwd_follows_reference_naming() -> None:
    assert encode_cwd("/home/u/my proj") == "--home-u-my proj--"
    assert encode_cwd("C:\\Users\\me") == "--C--Users-me--"
    assert encode_cwd("/") == "----"


def test_the_clocks_timestamp_is_utc_to_the_millisecond_as_from_a_datetime() -> None:
    """`iso_timestamp()` reads the clock without `datetime` (start-up does not import it): the same text as one
    made from the datetime of that instant, which `parse_timestamp` reads back."""
    from datetime import datetime, timedelta, timezone

    before = datetime.now(timezone.utc).replace(microsecond=0)
    stamp = iso_timestamp()
    after = datetime.now(timezone.utc)
    assert ENTRY_TS.match(stamp) and before <= parse_timestamp(stamp) <= after
    assert iso_timestamp(parse_timestamp(stamp)) == stamp
    local = datetime(2026, 3, 1, 0, 30, 15, 123_999, tzinfo=timezone(timedelta(hours=2)))
    assert iso_timestamp(local) == "2026-02-28T22:30:15.123Z"
    assert timestamp_ms("2026-02-28T22:30:15.123Z") == int(local.timestamp() * 1000)


def test_path_naming(project: Path, tmp_path: Path) -> None:
    store = SessionStore.create(project, tmp_path / "sessions")
    assert store.path is not None
    assert store.path.parent == tmp_path / "sessions" / encode_cwd(str(project))
    assert FILE_NAME.match(store.path.name), store.path.name
    stamp = store.header["timestamp"].replace(":", "-").replace(".", "-")
    assert store.path.name == f"{stamp}_{store.session_id}.jsonl"
    assert ENTRY_TS.match(store.header["timestamp"])


def test_session_dir_defaults_to_env(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_FORGE_SESSION_DIR", str(tmp_path / "env-sessions"))
    store = SessionStore.create(project)
    assert store.path is not None and store.path.parent == session_cwd_dir(project)
    assert store.path.is_relative_to(tmp_path / "env-sessions")


def test_relative_cwd_is_made_absolute(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project.parent)
    store = SessionStore.create("proj", tmp_path / "s")
    assert store.cwd == str(project)


def test_lazy_creation_writes_nothing_before_first_message(project: Path, tmp_path: Path) -> None:
    store = SessionStore.create(project, tmp_path / "s")
    model = store.append_model_change("faux", "m1")
    level = store.append_thinking_level_change("high")
    assert store.path is not None and not store.path.exists()
    assert not (tmp_path / "s").exists()
    assert not store.on_disk
    message = store.append_message(user("hi"))
    lines = read_lines(store.path)
    assert lines == [store.header, model, level, message]
    assert lines[0] == {"type": "session", "version": 3, "id": store.session_id,
                        "timestamp": store.header["timestamp"], "cwd": str(project)}
    later = store.append_message(assistant("hello"))
    assert read_lines(store.path)[-1] == later
    store.close()


def test_session_with_only_configuration_leaves_no_file(project: Path, tmp_path: Path) -> None:
    store = SessionStore.create(project, tmp_path / "s")
    store.append_thinking_level_change("high")
    store.close()
    assert not (tmp_path / "s").exists()


def test_a_name_alone_starts_the_file(project: Path, tmp_path: Path) -> None:
    store = SessionStore.create(project, tmp_path / "s")
    store.append_session_info(name="x")
    store.close()
    assert [line["type"] for line in read_lines(store.path)] == ["session", "session_info"]


def test_parent_session_in_header(project: Path, tmp_path: Path) -> None:
    store = SessionStore.create(project, tmp_path / "s", parent_session=tmp_path / "old.jsonl")
    store.append_message(user("x"))
    assert read_lines(store.path)[0]["parentSession"] == str(tmp_path / "old.jsonl")
    store.close()


def test_entry_shapes_and_chain(project: Path, tmp_path: Path) -> None:
    store = SessionStore.create(project, tmp_path / "s")
    first = store.append_model_change("anthropic", "claude")
    second = store.append_message(user("hi"))
    third = store.append_custom(custom_type="plugin", data={"n": 1})
    assert first == {"type": "model_change", "id": first["id"], "parentId": None,
                     "timestamp": first["timestamp"], "provider": "anthropic", "modelId": "claude"}
    assert list(first)[:4] == ["type", "id", "parentId", "timestamp"]
    assert second["parentId"] == first["id"] and third["parentId"] == second["id"]
    assert store.leaf_id == third["id"]
    for entry in (first, second, third):
        assert ENTRY_ID.match(entry["id"]) and ENTRY_TS.match(entry["timestamp"])
    assert store.get_entry(second["id"]) == second and store.get_entry("nope") is None
    store.close()


def test_disk_format_is_compact_utf8_lf(project: Path, tmp_path: Path) -> None:
    store = SessionStore.create(project, tmp_path / "s")
    store.append_message(user("héllo 世界"))
    raw = store.path.read_bytes()
    assert b", " not in raw and b'": ' not in raw
    assert "héllo 世界".encode() in raw and b"\r" not in raw
    assert raw.count(b"\n") == 2
    store.close()


def test_round_trip_reopen_identical(project: Path, tmp_path: Path) -> None:
    store = SessionStore.create(project, tmp_path / "s")
    store.append_model_change("faux", "m1")
    store.append_thinking_level_change("low")
    store.append_message(user("one"))
    store.append_message(assistant("two"))
    store.append_session_info(name="my work")
    store.append_custom_message(custom_type="note", content="remember", display=False)
    store.close()
    again = SessionStore.open(store.path)
    assert again.header == store.header
    assert again.entries == store.entries
    assert again.leaf_id == store.leaf_id
    assert again.build_context() == store.build_context()
    assert again.session_name == "my work"
    again.close()


def test_reopen_and_append_continues_chain(project: Path, tmp_path: Path) -> None:
    store = SessionStore.create(project, tmp_path / "s")
    store.append_message(user("one"))
    store.close()
    again = SessionStore.open(store.path)
    added = again.append_message(assistant("two"))
    assert added["parentId"] == store.leaf_id
    again.close()
    assert [e["id"] for e in SessionStore.open(store.path).entries] == [store.leaf_id, added["id"]]


def test_unicode_round_trip(project: Path, tmp_path: Path) -> None:
    text = "line\u2028sep\u2029para 🎉 漢字 ﻿ \x00 \"q\" \\ \n"
    store = SessionStore.create(project, tmp_path / "s")
    store.append_message(user(text))
    store.append_session_info(name="名前 🚀")
    store.close()
    raw = store.path.read_bytes()
    assert "\u2028".encode() in raw and "🎉".encode() in raw
    again = SessionStore.open(store.path)
    assert again.build_context().messages[0]["content"][0]["text"] == text
    assert again.session_name == "名前 🚀"
    again.close()


def test_lone_surrogate_is_written_as_u_fffd(project: Path, tmp_path: Path) -> None:
    store = SessionStore.create(project, tmp_path / "s")
    store.append_message(user("broken \ud800 pair"))
    store.close()
    raw = store.path.read_bytes()
    raw.decode("utf-8")  # the file stays valid UTF-8, with no lone-surrogate escape strict parsers reject
    assert b"\\ud800" not in raw
    again = SessionStore.open(store.path)
    assert again.entries[0]["message"]["content"][0]["text"] == "broken \ufffd pair"


def test_entry_is_a_snapshot_of_the_callers_dict(project: Path, tmp_path: Path) -> None:
    store = SessionStore.in_memory(project)
    message = user("before")
    entry = store.append_message(message)
    message["content"][0]["text"] = "after"
    assert entry["message"]["content"][0]["text"] == "before"
    assert store.build_context().messages[0]["content"][0]["text"] == "before"


def test_in_memory_never_touches_disk(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_FORGE_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("AGENT_FORGE_SESSION_DIR", raising=False)
    store = SessionStore.in_memory(project)
    store.append_message(user("x"))
    store.append_message(assistant("y"))
    assert store.path is None and not store.on_disk
    assert not (tmp_path / "agent").exists()
    assert [m["role"] for m in store.build_context().messages] == ["user", "assistant"]


def test_unique_ids_over_many_appends(project: Path) -> None:
    store = SessionStore.in_memory(project)
    ids = [store.append_custom(custom_type="t")["id"] for _ in range(20_000)]
    assert len(set(ids)) == len(ids)
    assert all(ENTRY_ID.match(i) for i in ids)


def test_every_entry_type_has_a_typed_append_writing_its_shape_in_order(project: Path, tmp_path: Path) -> None:
    store = SessionStore.create(project, tmp_path / "s")
    q = store.append_message(user("q"))
    usage = {"input": 1, "output": 2}
    written = [
        q, store.append_model_change("p", "m"), store.append_thinking_level_change("high"),
        store.append_context_window_change("p", "m", 1000), store.append_session_info("name"),
        store.append_label(q["id"], "checkpoint"), store.append_custom("state", {"n": 1}),
        store.append_custom_message("plug", "note", False, details={"k": 1}),
        store.append_compaction("s", q["id"], 10, usage=usage, details={"d": 1}, from_hook=False),
        store.append_branch_summary(None, "b", usage=usage, details=None, from_hook=True),
        store.append_context_edit(q["id"], None), store.append_usage("cache_warm", "p", "m", usage),
    ]
    assert [entry["type"] for entry in written] == list(ENTRY_SHAPES)
    for entry in written:  # every field of its TypedDict, in that order: base fields first, as on disk
        assert list(entry) == list(get_type_hints(ENTRY_SHAPES[entry["type"]])), entry["type"]
    lines = store.path.read_text(encoding="utf-8").splitlines()[1:]
    assert lines == [json.dumps(entry, separators=(",", ":"), ensure_ascii=False) for entry in written]
    assert written[9]["details"] is None  # given as None: written as null; not given: left out
    bare = [store.append_label(q["id"]), store.append_custom("t"), store.append_custom_message("t", "c", True),
            store.append_compaction("s", None, 1), store.append_branch_summary(q["id"], "b")]
    assert [sorted(set(e) - {"type", "id", "parentId", "timestamp"}) for e in bare] == [
        ["targetId"], ["customType"], ["content", "customType", "display"],
        ["firstKeptEntryId", "summary", "tokensBefore"], ["fromId", "summary"]]
    store.close()


def test_bad_appends_rejected_without_changing_state(project: Path, tmp_path: Path) -> None:
    store = SessionStore.create(project, tmp_path / "s")
    store.append_message(user("ok"))
    before = store.path.read_bytes()
    with pytest.raises(TypeError):
        store.append_custom("t", data={1, 2})
    with pytest.raises(ValueError):
        store._append("custom", {"id": "x"})  # the typed methods cannot name a base field; the core refuses too
    with pytest.raises(ValueError):
        store._append("session", {})
    with pytest.raises(ValueError):
        store.append_message({"content": "no role"})  # type: ignore[arg-type]
    assert store.path.read_bytes() == before and len(store.entries) == 1
    store.close()


def test_context_model_thinking_and_custom_messages(project: Path) -> None:
    store = SessionStore.in_memory(project)
    assert store.build_context() == SessionContext(messages=[], model=None, thinking_level=None)
    store.append_model_change("a", "m1")
    store.append_thinking_level_change("low")
    store.append_message(user("q"))
    note = store.append_custom_message(custom_type="plug", content="ctx", display=True, details={"k": 1})
    store.append_custom(custom_type="state", data={})
    store.append_compaction(summary="s", first_kept_entry_id=note["id"], tokens_before=10)
    store.append_branch_summary(from_id=None, summary="b")
    store.append_model_change("b", "m2")
    context = store.build_context()
    assert context.model == ("b", "m2") and context.thinking_level == "low"
    # The compaction keeps entries from the custom message on; the branch summary comes after it.
    assert [m["role"] for m in context.messages] == ["compactionSummary", "custom", "branchSummary"]
    assert context.messages[1]["customType"] == "plug" and context.messages[1]["content"] == "ctx"
    assert context.messages[1]["details"] == {"k": 1} and isinstance(context.messages[1]["timestamp"], int)


def two_branch_session(store: SessionStore) -> tuple[dict, dict, dict]:
    """q1 → a1 → {q2 → a2 (first branch), q3 (second branch, leaf)}."""
    store.append_model_change("p", "first")
    q1 = store.append_message(user("q1"))
    a1 = store.append_message(assistant("a1"))
    store.append_message(user("q2"))
    store.append_session_info(name="on first branch")
    store.append_thinking_level_change("high")
    a2 = store.append_message(assistant("a2"))
    store.set_leaf(a1["id"])
    q3 = store.append_message(user("q3"))
    return q1, a2, q3


def test_branch_and_context_after_moving_leaf_back(project: Path, tmp_path: Path) -> None:
    store = SessionStore.create(project, tmp_path / "s")
    q1, a2, q3 = two_branch_session(store)
    a1 = store.get_entry(q3["parentId"])
    assert a1 is not None and a1["message"]["content"][0]["text"] == "a1" and a1["parentId"] == q1["id"]
    children = [e for e in store.entries if e["parentId"] == a1["id"]]
    assert len(children) == 2
    texts = [m["content"][0]["text"] for m in store.build_context().messages]
    assert texts == ["q1", "a1", "q3"]
    context = store.build_context()
    assert context.thinking_level is None and context.model == ("p", "first")
    assert store.session_name is None
    assert [e["id"] for e in store.branch(a2["id"])][-1] == a2["id"]
    assert [m["content"][0]["text"] for m in _messages(store.branch(a2["id"]))] == ["q1", "a1", "q2", "a2"]
    store.set_leaf(a2["id"])
    assert store.session_name == "on first branch" and store.build_context().thinking_level == "high"
    store.close()
    reopened = SessionStore.open(store.path)
    assert reopened.leaf_id == q3["id"]  # the last line of the file
    assert [m["content"][0]["text"] for m in reopened.build_context().messages] == ["q1", "a1", "q3"]


def _messages(entries: list[dict]) -> list[dict]:
    return [e["message"] for e in entries if e["type"] == "message"]


def test_set_leaf_none_starts_a_new_root(project: Path) -> None:
    store = SessionStore.in_memory(project)
    store.append_message(user("old"))
    store.set_leaf(None)
    assert store.branch() == [] and store.build_context().messages == []
    root = store.append_message(user("new"))
    assert root["parentId"] is None
    assert [m["content"][0]["text"] for m in store.build_context().messages] == ["new"]


def test_unknown_ids_raise(project: Path) -> None:
    store = SessionStore.in_memory(project)
    store.append_message(user("x"))
    for call in (lambda: store.set_leaf("deadbeef"), lambda: store.branch("deadbeef"),
                 lambda: store.entries_since("deadbeef")):
        with pytest.raises(ValueError, match="deadbeef"):
            call()
    assert store.leaf_id == store.entries[0]["id"]


def test_entries_since(project: Path) -> None:
    store = SessionStore.in_memory(project)
    made = [store.append_message(user(str(i))) for i in range(5)]
    assert store.entries_since(made[1]["id"]) == made[2:]
    assert store.entries_since(made[-1]["id"]) == []


def test_session_name_latest_and_cleared(project: Path) -> None:
    store = SessionStore.in_memory(project)
    assert store.session_name is None
    store.append_session_info(name="a")
    store.append_session_info(name="b")
    assert store.session_name == "b"
    store.append_session_info(name="")
    assert store.session_name is None


def test_session_name_follows_appends_and_leaf_moves(project: Path) -> None:
    """The name is kept between calls (get_state asks each time): every way the branch changes must renew it."""
    store = SessionStore.in_memory(project)
    named = store.append_session_info(name="first")
    assert store.session_name == "first"
    store.append_message(user("q"))  # an append that is no session_info keeps the name
    assert store.session_name == "first"
    store.set_leaf(None)
    assert store.session_name is None
    other = store.append_session_info(name="other root")  # a new root: the branch is rebuilt
    assert store.session_name == "other root"
    store.set_leaf(named["id"])
    assert store.session_name == "first"
    store.append_session_info(name="  ")  # blank clears it on this branch only
    assert store.session_name is None
    store.set_leaf(other["id"])
    assert store.session_name == "other root"
    store.append_message(user("after"))
    store.set_leaf(named["id"])
    store.append_session_info(name="again")
    assert store.session_name == "again"


def test_branch_types_follow_the_leaf_and_the_name_and_window_come_from_the_branch(project: Path,
                                                                                   tmp_path: Path) -> None:
    store = SessionStore.create(project, tmp_path / "sessions")
    first = store.append_message({"role": "user", "content": "a", "timestamp": 1})
    assert store.branch_types() == {"message"} and store.session_name is None
    store.append_session_info("named")
    store.append_context_window_change("p", "m", 1000)
    assert store.branch_types() == {"message", "session_info", "context_window_change"}
    assert store.session_name == "named"
    store.set_leaf(first["id"])  # the other entries are off the branch now
    assert store.branch_types() == {"message"} and store.session_name is None
    reopened = SessionStore.open(store.path)
    assert reopened.branch_types() == {"message", "session_info", "context_window_change"}
    assert reopened.session_name == "named"
