"""Session store on damaged and hostile files: torn lines, garbage, missing headers, odd versions."""

from __future__ import annotations

import gc
import json
import os
from pathlib import Path

import pytest

from agent_forge.ai import json_wire
from agent_forge.coding.errors import SessionFileError
from agent_forge.coding.session.store import SessionStore


def user(text: str) -> dict:
    return {"role": "user", "content": text, "timestamp": 1}


def written_session(tmp_path: Path, count: int = 3) -> SessionStore:
    store = SessionStore.create(tmp_path / "proj", tmp_path / "s")
    for i in range(count):
        store.append_message(user(f"m{i}"))
    store.close()
    return store


def texts(store: SessionStore) -> list[str]:
    return [m["content"] for m in store.build_context().messages]


def test_torn_last_line_is_ignored_and_next_append_starts_fresh(tmp_path: Path) -> None:
    store = written_session(tmp_path)
    raw = store.path.read_bytes()
    last_start = raw.rstrip(b"\n").rfind(b"\n") + 1
    store.path.write_bytes(raw[: last_start + (len(raw) - last_start) // 2])  # cut the last entry in half
    torn = SessionStore.open(store.path)
    assert texts(torn) == ["m0", "m1"]
    assert torn.leaf_id == store.entries[1]["id"]
    added = torn.append_message(user("after crash"))
    torn.close()
    assert added["parentId"] == store.entries[1]["id"]
    lines = store.path.read_bytes().split(b"\n")
    assert json.loads(lines[-2]) == added  # whole line of its own
    again = SessionStore.open(store.path)
    assert texts(again) == ["m0", "m1", "after crash"]
    assert again.entries[-1] == added


def test_cut_right_after_a_complete_line_needs_no_extra_newline(tmp_path: Path) -> None:
    store = written_session(tmp_path)
    store.path.write_bytes(store.path.read_bytes().rstrip(b"\n"))
    reopened = SessionStore.open(store.path)
    assert texts(reopened) == ["m0", "m1", "m2"]
    reopened.append_message(user("m3"))
    reopened.close()
    assert texts(SessionStore.open(store.path)) == ["m0", "m1", "m2", "m3"]


@pytest.mark.parametrize(
    "garbage",
    [b"not json", b"[1, 2]", b"null", b"42", b'"str"', b"\xff\xfe invalid utf-8", b"{", b"[" * 100_000,
     b'{"type":"message"}', b'{"type":"message","id":7,"parentId":null}', b"   ", b""],
)
def test_garbage_lines_in_the_middle_are_skipped(tmp_path: Path, garbage: bytes) -> None:
    store = written_session(tmp_path)
    lines = store.path.read_bytes().split(b"\n")
    lines.insert(2, garbage)
    store.path.write_bytes(b"\n".join(lines))
    reopened = SessionStore.open(store.path)
    assert texts(reopened) == ["m0", "m1", "m2"]
    assert reopened.entries == store.entries


def test_crlf_file_still_loads(tmp_path: Path) -> None:
    store = written_session(tmp_path)
    store.path.write_bytes(store.path.read_bytes().replace(b"\n", b"\r\n"))
    assert texts(SessionStore.open(store.path)) == ["m0", "m1", "m2"]


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SessionFileError, match="not found"):
        SessionStore.open(tmp_path / "nope.jsonl")


def test_directory_instead_of_file(tmp_path: Path) -> None:
    with pytest.raises(SessionFileError, match="cannot read"):
        SessionStore.open(tmp_path)


@pytest.mark.parametrize("content", [b"", b"\n\n  \n"])
def test_empty_file(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(content)
    with pytest.raises(SessionFileError, match="empty"):
        SessionStore.open(path)


@pytest.mark.parametrize(
    "first_line",
    [
        b'{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"x","message":{}}',
        b'{"type":"session","version":3}',
        b'{"type":"session","version":3,"id":"u","timestamp":"t"}',
        b"garbage only",
    ],
)
def test_headerless_file(tmp_path: Path, first_line: bytes) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(first_line + b"\n")
    with pytest.raises(SessionFileError, match="no valid session header"):
        SessionStore.open(path)


@pytest.mark.parametrize("version", [0, True, "3", 4])  # 1 and a missing version are migrated
def test_unsupported_versions_are_refused_clearly(tmp_path: Path, version: object) -> None:
    header = {"type": "session", "id": "u", "timestamp": "t", "cwd": "/"}
    if version is not None:
        header["version"] = version
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(header) + "\n")
    with pytest.raises(SessionFileError, match="version"):
        SessionStore.open(path)


def test_version_2_hook_messages_become_custom(tmp_path: Path) -> None:
    path = tmp_path / "v2.jsonl"
    header = {"type": "session", "version": 2, "id": "u", "timestamp": "2024-01-01T00:00:00.000Z", "cwd": "/p"}
    entry = {"type": "message", "id": "aaaaaaaa", "parentId": None, "timestamp": "2024-01-01T00:00:00.000Z",
             "message": {"role": "hookMessage", "customType": "x", "content": "c", "display": True, "timestamp": 1}}
    path.write_text(json.dumps(header) + "\n" + json.dumps(entry) + "\n")
    assert [m["role"] for m in SessionStore.open(path).build_context().messages] == ["custom"]


def test_duplicate_ids_keep_the_first(tmp_path: Path) -> None:
    store = written_session(tmp_path, 2)
    lines = store.path.read_bytes().split(b"\n")
    store.path.write_bytes(store.path.read_bytes() + lines[1] + b"\n")
    reopened = SessionStore.open(store.path)
    assert reopened.entries == store.entries


def test_parent_cycle_in_a_hand_edited_file_terminates(tmp_path: Path) -> None:
    path = tmp_path / "cycle.jsonl"
    header = {"type": "session", "version": 3, "id": "u", "timestamp": "2024-01-01T00:00:00.000Z", "cwd": "/p"}
    a = {"type": "message", "id": "aaaaaaaa", "parentId": "bbbbbbbb", "timestamp": "t", "message": user("a")}
    b = {"type": "message", "id": "bbbbbbbb", "parentId": "aaaaaaaa", "timestamp": "t", "message": user("b")}
    path.write_text("\n".join(json.dumps(x) for x in (header, a, b)) + "\n")
    assert texts(SessionStore.open(path)) == ["a", "b"]


def test_missing_parent_ends_the_branch(tmp_path: Path) -> None:
    store = written_session(tmp_path)
    lines = store.path.read_bytes().split(b"\n")
    del lines[1]  # the root entry
    store.path.write_bytes(b"\n".join(lines))
    assert texts(SessionStore.open(store.path)) == ["m1", "m2"]


def test_append_after_file_deleted_writes_it_again_with_its_header_and_every_entry(tmp_path: Path) -> None:
    store = written_session(tmp_path)
    reopened = SessionStore.open(store.path)
    store.path.unlink()
    states = []
    reopened.on_write_state = lambda previous: states.append((previous, reopened.write_error))
    reopened.append_message(user("kept"))
    assert states[0][1]["error"] == "the session file was deleted while in use; it is written again with all 4 entries"
    assert reopened.write_error is None  # written again: nothing waits
    assert SessionStore.open(store.path).entries == reopened.entries and len(reopened.entries) == 4


def test_appends_with_fsync(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path / "proj", tmp_path / "s", fsync=True)
    store.append_message(user("durable"))
    store.close()
    assert texts(SessionStore.open(store.path, fsync=True)) == ["durable"]


def test_file_is_private(tmp_path: Path) -> None:
    store = written_session(tmp_path, 1)
    assert os.stat(store.path).st_mode & 0o077 == 0


def test_large_session_loads(tmp_path: Path) -> None:
    """50,000 entries load in one pass (timings live in benchmarks/; this checks correctness at size)."""
    path = tmp_path / "big.jsonl"
    header = {"type": "session", "version": 3, "id": "u", "timestamp": "2024-01-01T00:00:00.000Z", "cwd": "/p"}
    lines = [json.dumps(header)]
    parent = None
    for i in range(50_000):
        entry_id = f"{i:08x}"
        lines.append(json.dumps({"type": "message", "id": entry_id, "parentId": parent, "timestamp": "t",
                                 "message": user("x" * 100)}))
        parent = entry_id
    path.write_text("\n".join(lines) + "\n")
    store = SessionStore.open(path)
    assert len(store.entries) == 50_000 and store.leaf_id == f"{49_999:08x}"
    assert len(store.build_context().messages) == 50_000
    assert store.append_message(user("next"))["id"] not in {f"{i:08x}" for i in range(50_000)}
    store.close()


def test_a_long_integer_deep_in_a_large_file_keeps_every_digit(tmp_path: Path, json_backend: str) -> None:
    """The file is screened for 19-digit numbers a chunk at a time (orjson reads them as floats): one far into
    a file of several chunks still sends its line the stdlib's way."""
    store = written_session(tmp_path, count=7000)
    big = 123456789012345678901234567890
    store = SessionStore.open(store.path)
    store.append_custom("big", {"n": big, "neg": -big})
    store.close()
    assert store.path.stat().st_size > 3 * json_wire._SCAN_CHUNK
    reopened = SessionStore.open(store.path)
    assert reopened.entries[-1]["data"] == {"n": big, "neg": -big}
    assert texts(reopened)[-1] == "m6999" and reopened.load_warnings == []


def test_opening_leaves_the_parsed_entries_old_for_the_collector(tmp_path: Path) -> None:
    """The parsed entries are moved to the collector's oldest generation, so the next young collections do not
    walk all of them; objects frozen on purpose (gc.freeze) stay frozen."""
    path = written_session(tmp_path, count=50).path
    store = SessionStore.open(path)
    young = {id(obj) for obj in gc.get_objects(generation=0)}
    assert not any(id(entry) in young or id(entry["message"]) in young for entry in store.entries)
    sentinel = [object()]  # frozen with the rest: it must still be frozen after the open (the freeze count is
    gc.freeze()  # no measure: another thread of the test process may free frozen objects meanwhile)
    try:
        assert len(SessionStore.open(path).entries) == 50
        assert not any(obj is sentinel for obj in gc.get_objects())  # get_objects leaves frozen objects out
    finally:
        gc.unfreeze()
    assert any(obj is sentinel for obj in gc.get_objects())  # the check above can fail


class FailingWrites:
    """Fault injection for `os.write`: the next write puts half its bytes on disk, then fails with ENOSPC."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.real_write = os.write
        monkeypatch.setattr("agent_forge.coding.session.store.os.write", self)

    def __call__(self, fd: int, data: bytes) -> int:
        self.real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(28, "No space left on device")


def test_failed_append_is_cut_back_kept_and_written_first_by_the_next_append(tmp_path: Path, monkeypatch) -> None:
    store = SessionStore.create(tmp_path / "proj", tmp_path / "s")
    kept = store.append_message(user("kept"))
    size = store.path.stat().st_size
    states: list[object] = []
    store.on_write_state = lambda previous: states.append((previous, store.write_error))
    with monkeypatch.context() as patch:
        FailingWrites(patch)
        failed = store.append_message(user("failed " * 50))
        assert store.path.stat().st_size == size  # the torn half line is cut off again
        later = store.append_message(user("also waits"))
    assert store.leaf_id == later["id"] and len(store.entries) == 3
    assert store.write_error == {"path": str(store.path), "error": "No space left on device", "pendingEntries": 2}
    assert states == [(None, {"path": str(store.path), "error": "No space left on device", "pendingEntries": 1})]
    after = store.append_message(user("after"))
    assert store.write_error is None and states[-1] == ("No space left on device", None)
    store.close()
    reopened = SessionStore.open(store.path)
    assert reopened.entries == [kept, failed, later, after]
    assert b"\n\n" not in store.path.read_bytes()


def test_flush_writes_what_waits_without_a_new_append(tmp_path: Path, monkeypatch) -> None:
    store = SessionStore.create(tmp_path / "proj", tmp_path / "s")
    store.append_message(user("kept"))
    with monkeypatch.context() as patch:
        FailingWrites(patch)
        waiting = store.append_message(user("waits"))
        assert not store.flush()
    assert store.flush() and store.write_error is None
    assert SessionStore.open(store.path).entries[-1] == waiting


def test_failed_creation_leaves_no_file_and_is_retried(tmp_path: Path, monkeypatch) -> None:
    store = SessionStore.create(tmp_path / "proj", tmp_path / "s")
    model = store.append_model_change("p", "m")
    with monkeypatch.context() as patch:
        FailingWrites(patch)
        first = store.append_message(user("first"))
    assert list(store.path.parent.iterdir()) == [] and not store.on_disk
    assert store.write_error is not None and store.write_error["pendingEntries"] == 2
    second = store.append_message(user("second"))
    store.close()
    assert SessionStore.open(store.path).entries == [model, first, second]


def test_when_cutting_back_fails_too_the_next_append_starts_a_fresh_line(tmp_path: Path, monkeypatch) -> None:
    store = SessionStore.create(tmp_path / "proj", tmp_path / "s")
    kept = store.append_message(user("kept"))
    with monkeypatch.context() as patch:
        FailingWrites(patch)
        patch.setattr("agent_forge.coding.session.durable.os.ftruncate", _refuse_truncate)
        waiting = store.append_message(user("waits " * 50))
    after = store.append_message(user("after"))
    store.close()
    assert store.write_error is None
    assert SessionStore.open(store.path).entries == [kept, waiting, after]  # the torn half line is skipped


def _refuse_truncate(fd: int, length: int) -> None:
    raise OSError(5, "Input/output error")


@pytest.mark.parametrize("backend", ["orjson", "stdlib"])
def test_lines_read_as_bytes_keep_what_the_decoded_file_kept(tmp_path: Path, monkeypatch, backend: str) -> None:
    """The file is split into byte lines and parsed without decoding it first: invalid UTF-8 still costs only
    its character, a BOM before an entry is still ignored, a line of Unicode whitespace is still blank (no
    damaged line), and a header that is the file's only, unterminated line still opens."""
    from agent_forge.ai import json_wire

    monkeypatch.setattr(json_wire, "_backend", False if backend == "stdlib" else None)
    store = written_session(tmp_path, count=1)
    header, first = store.path.read_bytes().rstrip(b"\n").split(b"\n")
    entry = json.loads(first)
    damaged = json.dumps({**entry, "id": "e2", "parentId": entry["id"], "message": user("caf\u00e9 x")},
                         ensure_ascii=False).encode().replace("\u00e9".encode(), b"\xff")
    bom = b"\xef\xbb\xbf" + json.dumps({**entry, "id": "e3", "parentId": "e2", "message": user("bom")}).encode()
    store.path.write_bytes(b"\n".join([header, first, "\u00a0\u2028".encode(), damaged, bom, b"{torn"]))
    reopened = SessionStore.open(store.path)
    assert texts(reopened) == ["m0", "caf\ufffd x", "bom"]
    assert [(w.kind, w.lines) for w in reopened.load_warnings] == [("torn_line", (6,))]  # only the torn tail
    store.path.write_bytes(header)
    assert SessionStore.open(store.path).entries == []


def test_repeated_words_are_one_string_after_opening(tmp_path: Path) -> None:
    """Entry types, roles and block types repeat on most lines: an opened session holds each once (`sharing.py`;
    the values providers and tools give are not shared: too slow for what they save), and a value of the wrong
    type is left for the context checks."""
    store = SessionStore.create(tmp_path / "proj", tmp_path / "s")
    for i in range(3):
        call = {"type": "toolCall", "id": f"c{i}", "name": "read", "arguments": {}}
        store.append_message({"role": "assistant", "provider": "prov", "model": "mod-1", "api": "api-1",
                              "stopReason": "stop", "timestamp": i, "content": [call]})
        store.append_message({"role": "toolResult", "toolCallId": f"c{i}", "toolName": "read", "isError": False,
                              "timestamp": i, "content": [{"type": "text", "text": "x"}]})
    store.append_message({"role": "user", "content": [{"type": 5}], "timestamp": 9})
    store.close()
    entries = SessionStore.open(store.path).entries
    messages = [entry["message"] for entry in entries]
    assert len({id(entry["type"]) for entry in entries}) == 1
    assert len({id(m["role"]) for m in messages[0:6:2]}) == 1 and len({id(m["role"]) for m in messages[1:6:2]}) == 1
    assert len({id(m["content"][0]["type"]) for m in messages[1:6:2]}) == 1
    assert len({id(m["content"][0]["type"]) for m in messages[0:6:2]}) == 1
    assert messages[-1]["content"] == [{"type": 5}]
