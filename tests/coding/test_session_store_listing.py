"""Listing the sessions of a directory and finding the most recent one."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent_forge.coding.errors import SessionFileError
from agent_forge.coding.session.listing import resolve_session
from agent_forge.coding.session.store import SessionStore, find_most_recent, list_sessions, message_text


def make_session(cwd: Path, root: Path, prompts: list[str], name: str | None = None, mtime: int = 0) -> Path:
    store = SessionStore.create(cwd, root)
    store.append_model_change("p", "m")
    for text in prompts:
        store.append_message({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1})
        store.append_message({"role": "assistant", "content": [{"type": "text", "text": "ok"}], "timestamp": 2})
    if name is not None:
        store.append_session_info(name=name)
    store.close()
    assert store.path is not None
    if mtime:
        os.utime(store.path, (mtime, mtime))
    return store.path


def test_list_sessions_newest_first_with_summary(tmp_path: Path) -> None:
    cwd, root = tmp_path / "proj", tmp_path / "sessions"
    old = make_session(cwd, root, ["first question", "second"], mtime=1_000_000)
    new = make_session(cwd, root, ["newer"], name="named", mtime=2_000_000)
    make_session(tmp_path / "other", root, ["elsewhere"])
    infos = list_sessions(cwd, root)
    assert [info.path for info in infos] == [new, old]
    assert infos[0].name == "named" and infos[1].name is None
    assert infos[1].first_message == "first question" and infos[1].message_count == 4
    assert infos[0].message_count == 2 and infos[0].cwd == str(cwd)
    assert infos[0].modified.timestamp() == 2_000_000
    assert infos[1].id == SessionStore.open(old).session_id
    assert infos[1].created.tzinfo is not None and infos[1].created <= infos[0].created


def test_listing_skips_broken_files_and_unwritten_sessions(tmp_path: Path) -> None:
    cwd, root = tmp_path / "proj", tmp_path / "sessions"
    good = make_session(cwd, root, ["hi"], mtime=1_000_000)
    SessionStore.create(cwd, root).append_model_change("p", "m")  # never prompted: no file
    (good.parent / "broken.jsonl").write_bytes(b"garbage\n")
    (good.parent / "empty.jsonl").write_bytes(b"")
    assert [info.path for info in list_sessions(cwd, root)] == [good]
    assert find_most_recent(cwd, root) == good


def test_find_most_recent_by_mtime(tmp_path: Path) -> None:
    cwd, root = tmp_path / "proj", tmp_path / "sessions"
    assert find_most_recent(cwd, root) is None
    assert list_sessions(cwd, root) == []
    a = make_session(cwd, root, ["a"], mtime=3_000_000)
    make_session(cwd, root, ["b"], mtime=2_000_000)
    assert find_most_recent(cwd, root) == a


def test_message_text() -> None:
    assert message_text({"role": "user", "content": "plain"}) == "plain"
    blocks = [{"type": "text", "text": "a"}, {"type": "image", "data": "", "mimeType": "image/png"},
              {"type": "text", "text": "b"}]
    assert message_text({"role": "user", "content": blocks}) == "a\nb"
    assert message_text({"role": "user"}) == ""


UNOPENABLE = {
    "future version": {"type": "session", "version": 99, "id": "99999999-dead", "timestamp": "t", "cwd": "/p"},
    "no cwd": {"type": "session", "version": 3, "id": "99999999-dead", "timestamp": "t"},
    "version not a number": {"type": "session", "version": "3", "id": "99999999-dead", "timestamp": "t",
                             "cwd": "/p"},
    "cwd not a string": {"type": "session", "version": 3, "id": "99999999-dead", "timestamp": "t", "cwd": 5},
}


@pytest.mark.parametrize("problem", sorted(UNOPENABLE))
def test_continue_and_listing_agree_on_files_that_cannot_be_opened(tmp_path: Path, problem: str) -> None:
    """`--continue` takes the newest file `--list-sessions` shows, never a newer one it cannot open."""
    cwd, root = tmp_path / "proj", tmp_path / "sessions"
    good = make_session(cwd, root, ["usable"], mtime=1_000_000)
    bad = good.with_name("2099-01-01T00-00-00-000Z_99999999-dead.jsonl")
    bad.write_text(json.dumps(UNOPENABLE[problem]) + "\n")
    os.utime(bad, (2_000_000, 2_000_000))
    assert [info.path for info in list_sessions(cwd, root)] == [good]
    assert find_most_recent(cwd, root) == good
    SessionStore.open(find_most_recent(cwd, root)).close()  # type: ignore[arg-type]
    with pytest.raises(SessionFileError, match="session file"):
        resolve_session("99999999-dead", cwd, root)  # the reason, not "no session found"
    assert resolve_session(SessionStore.open(good).session_id[:8], cwd, root) == good


def test_header_after_blank_lines_counts_for_listing_and_continue(tmp_path: Path) -> None:
    cwd, root = tmp_path / "proj", tmp_path / "sessions"
    path = make_session(cwd, root, ["usable"])
    path.write_bytes(b"\n\n" + path.read_bytes())
    assert find_most_recent(cwd, root) == path and [info.path for info in list_sessions(cwd, root)] == [path]
