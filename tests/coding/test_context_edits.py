"""`context_edit` entries (reference session-format.md, ContextEditEntry) shape the context a branch builds:
omissions and replacements, the latest edit winning, branch-relative, across compactions, bad edits ignored."""

from __future__ import annotations

from pathlib import Path

from agent_forge.coding.session.store import SessionStore


def user(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def assistant(text: str, stop: str = "stop") -> dict:
    return {"role": "assistant", "content": [{"type": "text", "text": text}], "stopReason": stop, "timestamp": 2}


def texts(store: SessionStore) -> list[str]:
    out = []
    for message in store.build_context().messages:
        content = message.get("content", message.get("summary"))
        out.append(content if isinstance(content, str) else content[0]["text"])
    return out


def test_omission_and_replacements_with_the_latest_edit_winning(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path / "sessions")
    q = store.append_message(user("q"))
    failed = store.append_message(assistant("", "error"))
    store.append_context_edit(target_id=failed["id"], replacement=None)
    a = store.append_message(assistant("a"))
    note = store.append_custom_message(custom_type="p", content="note", display=False)
    store.append_context_edit(target_id=a["id"], replacement="first edit")
    store.append_context_edit(target_id=a["id"], replacement="a, edited")  # the latest wins
    store.append_context_edit(target_id=q["id"], replacement=[{"type": "text", "text": "q, edited"}])
    store.append_context_edit(target_id=note["id"], replacement="note, edited")
    assert texts(store) == ["q, edited", "a, edited", "note, edited"]
    edited = store.build_context().messages[1]
    assert edited["content"] == [{"type": "text", "text": "a, edited"}] and edited["stopReason"] == "stop"
    assert store.get_entry(a["id"])["message"]["content"][0]["text"] == "a"  # the raw entry is unchanged
    store.close()
    reopened = SessionStore.open(store.path)
    assert texts(reopened) == ["q, edited", "a, edited", "note, edited"]
    reopened.close()


def test_edits_are_branch_relative(tmp_path: Path) -> None:
    store = SessionStore.in_memory(tmp_path)
    store.append_message(user("q"))
    a = store.append_message(assistant("a"))
    store.append_context_edit(target_id=a["id"], replacement=None)
    store.append_message(user("after the edit"))
    assert texts(store) == ["q", "after the edit"]
    store.set_leaf(a["id"])  # before the edit: the original counts again
    assert texts(store) == ["q", "a"]


def test_an_edit_after_a_compaction_applies_to_the_kept_entries(tmp_path: Path) -> None:
    store = SessionStore.in_memory(tmp_path)
    store.append_message(user("old"))
    kept = store.append_message(user("kept"))
    store.append_compaction(summary="summary", first_kept_entry_id=kept["id"], tokens_before=9)
    store.append_context_edit(target_id=kept["id"], replacement=None)
    assert texts(store) == ["summary"]


def test_malformed_edits_are_ignored(tmp_path: Path) -> None:
    store = SessionStore.in_memory(tmp_path)
    q = store.append_message(user("q"))
    info = store.append_session_info(name="n")
    for fields in ({"targetId": q["id"], "replacement": 42}, {"targetId": q["id"]},
                   {"targetId": q["id"], "replacement": [{"type": "text"}]}, {"targetId": ["x"], "replacement": None},
                   {"targetId": "deadbeef", "replacement": None}, {"targetId": info["id"], "replacement": None}):
        store._append("context_edit", fields)  # hand-edited files: shapes append_context_edit cannot write
    later = store.append_message(user("later"))
    store.append_context_edit(target_id=later["id"], replacement="fine")
    store.append_context_edit(target_id=q["id"], replacement=None)
    store.append_context_edit(target_id=q["id"], replacement={"not": "content"})  # ignored: the omission holds
    assert texts(store) == ["fine"]
