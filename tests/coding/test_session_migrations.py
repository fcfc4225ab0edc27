"""Loading version-1 and version-2 session files: migrated in memory without losing anything, rewritten as
version 3 (atomically, original kept as a backup) only when something is appended."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agent_forge.coding.errors import SessionFileError
from agent_forge.coding.session.listing import list_sessions, session_cwd_dir
from agent_forge.coding.session.store import SessionStore

STAMP = "2024-05-01T10:00:00.000Z"
ENTRY_ID = re.compile(r"^[0-9a-f]{8}$")


def message(role: str, text: str, **extra) -> dict:
    return {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1_714_557_600_000, **extra}


def v1_lines() -> list[bytes]:
    """A linear version-1 file: no `version`, no ids; its compaction keeps from line 4 (`q2`); a torn line in
    the middle and a torn tail, as a crash of an old writer could leave them."""
    objects = [
        {"type": "session", "id": "0b1d-v1", "timestamp": STAMP, "cwd": "/old/project"},
        {"type": "message", "timestamp": STAMP, "message": message("user", "q1")},
        {"type": "message", "timestamp": STAMP,
         "message": message("assistant", "a1", provider="anthropic", model="claude-old", stopReason="stop")},
        {"type": "thinking_level_change", "timestamp": STAMP, "thinkingLevel": "high"},
        {"type": "message", "timestamp": STAMP, "message": message("user", "q2")},
        {"type": "message", "timestamp": STAMP, "message": message("assistant", "a2", stopReason="stop")},
        {"type": "compaction", "timestamp": STAMP, "summary": "talked about q1", "firstKeptEntryIndex": 4,
         "tokensBefore": 1234},
        {"type": "message", "timestamp": STAMP,
         "message": {"role": "hookMessage", "customType": "plug", "content": "hooked", "display": True,
                     "timestamp": 1}},
        {"type": "message", "timestamp": STAMP, "message": message("user", "q3")},
    ]
    lines = [json.dumps(obj).encode() for obj in objects]
    return lines[:5] + [b'{"type":"message","timest'] + lines[5:]


@pytest.fixture
def v1_file(tmp_path: Path) -> Path:
    path = session_cwd_dir("/old/project", tmp_path / "sessions") / "2024-05-01T10-00-00-000Z_0b1d-v1.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\n".join(v1_lines()) + b'\n{"type":"message","id":"torn')
    return path


@pytest.fixture
def v2_file(tmp_path: Path) -> Path:
    """Version 2: a tree (q1 → a1 → {q2a, q2b}) with a `hookMessage` on the active branch."""
    def entry(entry_id: str, parent: str | None, **fields) -> dict:
        return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": STAMP, **fields}

    objects = [
        {"type": "session", "version": 2, "id": "0b1d-v2", "timestamp": STAMP, "cwd": "/old/project"},
        {"type": "model_change", "id": "00000001", "parentId": None, "timestamp": STAMP, "provider": "openai",
         "modelId": "gpt-old"},
        entry("00000002", "00000001", message=message("user", "q1")),
        entry("00000003", "00000002", message=message("assistant", "a1", stopReason="stop")),
        entry("00000004", "00000003", message=message("user", "q2a")),
        entry("00000005", "00000003", message=message("user", "q2b")),
        entry("00000006", "00000005", message={"role": "hookMessage", "customType": "plug", "content": "hooked",
                                               "display": False, "timestamp": 1}),
    ]
    path = tmp_path / "v2.jsonl"
    path.write_text("".join(json.dumps(obj) + "\n" for obj in objects))
    return path


def roles_and_texts(messages: list[dict]) -> list[tuple[str, str]]:
    def text(m: dict) -> str:
        if "summary" in m:
            return m["summary"]
        content = m["content"]
        return content if isinstance(content, str) else content[0]["text"]

    return [(m["role"], text(m)) for m in messages]


def test_version_1_loads_migrated_in_memory_and_leaves_the_file_alone(v1_file: Path) -> None:
    original = v1_file.read_bytes()
    store = SessionStore.open(v1_file)
    entries = store.entries
    assert v1_file.read_bytes() == original  # reading never writes
    assert [e["type"] for e in entries] == ["message", "message", "thinking_level_change", "message", "message",
                                            "compaction", "message", "message"]
    assert all(ENTRY_ID.match(e["id"]) for e in entries) and len({e["id"] for e in entries}) == 8
    assert [e["parentId"] for e in entries] == [None] + [e["id"] for e in entries[:-1]]  # linear chain
    compaction = entries[5]
    assert compaction["firstKeptEntryId"] == entries[3]["id"] and "firstKeptEntryIndex" not in compaction
    assert entries[6]["message"]["role"] == "custom"
    assert store.header["version"] == 3 and store.leaf_id == entries[-1]["id"]
    context = store.build_context()
    assert roles_and_texts(context.messages) == [
        ("compactionSummary", "talked about q1"), ("user", "q2"), ("assistant", "a2"), ("custom", "hooked"),
        ("user", "q3")]
    assert context.model == ("anthropic", "claude-old") and context.thinking_level == "high"


def test_version_1_is_rewritten_as_version_3_on_first_append(v1_file: Path) -> None:
    original = v1_file.read_bytes()
    store = SessionStore.open(v1_file, lock=True)
    migrated = store.entries
    added = store.append_message(message("user", "q4"))
    store.close()
    backup = v1_file.with_name(v1_file.name + ".v1.bak")
    assert backup.read_bytes() == original  # nothing of the old file is lost
    lines = [json.loads(line) for line in v1_file.read_text().splitlines()]
    assert lines[0] == {"type": "session", "id": "0b1d-v1", "timestamp": STAMP, "cwd": "/old/project",
                        "version": 3}
    assert lines[1:] == migrated + [added] and added["parentId"] == migrated[-1]["id"]
    reopened = SessionStore.open(v1_file)
    assert reopened.entries == migrated + [added]  # ids are stable from now on: no second migration
    assert reopened.build_context().messages[-1]["content"][0]["text"] == "q4"
    assert not list(v1_file.parent.glob(".*.tmp"))


def test_version_2_keeps_its_tree_and_ids(v2_file: Path) -> None:
    original = v2_file.read_bytes()
    store = SessionStore.open(v2_file)
    assert [e["id"] for e in store.entries] == [f"0000000{i}" for i in range(1, 7)]
    assert store.entries[-1]["message"]["role"] == "custom"
    assert roles_and_texts(store.build_context().messages) == [
        ("user", "q1"), ("assistant", "a1"), ("user", "q2b"), ("custom", "hooked")]
    assert store.build_context().model == ("openai", "gpt-old")
    store.set_leaf("00000004")
    added = store.append_message(message("assistant", "a2a"))
    backup = v2_file.with_name("v2.jsonl.v2.bak")
    assert backup.read_bytes() == original
    reopened = SessionStore.open(v2_file)
    assert reopened.header["version"] == 3 and reopened.entries == store.entries
    assert [e["id"] for e in reopened.branch()] == ["00000001", "00000002", "00000003", "00000004", added["id"]]


def test_failed_rewrite_keeps_the_old_file_and_can_be_retried(v2_file: Path, monkeypatch) -> None:
    original = v2_file.read_bytes()
    store = SessionStore.open(v2_file)
    with monkeypatch.context() as patch:
        patch.setattr("agent_forge.coding.session.durable.os.replace", _refuse)
        store.append_message(message("user", "waits"))
    assert store.write_error is not None and store.write_error["error"] == "No space left on device"
    assert v2_file.read_bytes() == original and store.entry_count == 7
    assert not list(v2_file.parent.glob(".*.tmp"))
    store.append_message(message("user", "kept"))
    assert store.write_error is None
    texts = [e["message"]["content"][0]["text"] for e in SessionStore.open(v2_file).entries[-2:]]
    assert texts == ["waits", "kept"]


def _refuse(*args: object) -> None:
    raise OSError(28, "No space left on device")


def test_old_versions_are_listed(v1_file: Path, tmp_path: Path) -> None:
    [info] = list_sessions("/old/project", tmp_path / "sessions")
    assert info.id == "0b1d-v1" and info.message_count == 6 and info.first_message == "q1"
    assert v1_file.read_bytes().endswith(b'"torn')  # listing did not touch it


@pytest.mark.parametrize("version, error", [(4, "newer than supported"), ("2", "unsupported version"),
                                            (0, "unsupported version")])
def test_unknown_versions_are_refused(tmp_path: Path, version: object, error: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps({"type": "session", "version": version, "id": "x", "timestamp": STAMP,
                                "cwd": "/"}) + "\n")
    with pytest.raises(SessionFileError, match=error):
        SessionStore.open(path)


def test_non_finite_numbers_are_written_as_null(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path / "proj", tmp_path / "sessions")
    entry = store.append_message(message("assistant", "x", usage={"cost": float("nan"), "total": float("inf")}))
    raw = store.path.read_text()
    json.loads(raw.splitlines()[-1], parse_constant=lambda name: pytest.fail(f"{name} written"))
    assert entry["message"]["usage"] == {"cost": None, "total": None}  # the store keeps what the file holds
    assert SessionStore.open(store.path).entries == store.entries


def test_version_1_ids_are_the_same_on_every_load(v1_file: Path) -> None:
    """Migrated ids derive from the session id and the line: cursors and fork ids survive a restart before the
    first append rewrote the file, and the rewrite keeps them."""
    first, second = SessionStore.open(v1_file), SessionStore.open(v1_file)
    ids = [entry["id"] for entry in first.entries]
    assert ids == [entry["id"] for entry in second.entries] and len(set(ids)) == len(ids)
    assert all(ENTRY_ID.match(entry_id) for entry_id in ids)
    assert [e["parentId"] for e in second.entries] == [None, *ids[:-1]]
    assert second.entries_since(ids[3]) == first.entries[4:]
    first.append_message(message("user", "q4"))
    first.close()
    assert [entry["id"] for entry in SessionStore.open(v1_file).entries][:-1] == ids


def test_derived_ids_skip_ids_already_taken() -> None:
    from agent_forge.coding.session.migrations import derived_entry_id

    natural = derived_entry_id("sid", 3, set())
    assert derived_entry_id("sid", 3, set()) == natural and derived_entry_id("sid", 4, set()) != natural
    other = derived_entry_id("sid", 3, {natural})
    assert other != natural and derived_entry_id("sid", 3, {natural}) == other


def test_version_1_file_given_as_a_symlink_migrates_the_real_file(v1_file: Path, tmp_path: Path) -> None:
    link = tmp_path / "elsewhere" / "link.jsonl"
    link.parent.mkdir()
    link.symlink_to(v1_file)
    original = v1_file.read_bytes()
    store = SessionStore.open(link, lock=True)
    assert store.path == v1_file
    store.append_message(message("user", "q4"))
    store.close()
    assert link.is_symlink() and link.resolve() == v1_file
    assert json.loads(v1_file.read_text().splitlines()[0])["version"] == 3
    assert v1_file.with_name(v1_file.name + ".v1.bak").read_bytes() == original  # the backup is beside the file
    assert sorted(p.name for p in link.parent.iterdir()) == ["link.jsonl"]  # nothing written beside the link
