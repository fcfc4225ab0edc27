"""A session file reached through symlinks: one lock per real file (whichever name opened it), stores that work
on the real path, and links planted where the store writes its own files (lock, temporary, backup) are never
written through."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_forge.coding.errors import SessionFileError, SessionLockError
from agent_forge.coding.session.lock import SessionLock, lock_path_for
from agent_forge.coding.session.store import SessionStore


def user(text: str) -> dict:
    return {"role": "user", "content": text, "timestamp": 1}


@pytest.fixture
def session(tmp_path: Path) -> Path:
    store = SessionStore.create(tmp_path / "project", tmp_path / "sessions")
    store.append_message(user("first"))
    store.close()
    assert store.path is not None
    return store.path


@pytest.fixture
def link(session: Path, tmp_path: Path) -> Path:
    path = tmp_path / "links" / "current.jsonl"
    path.parent.mkdir()
    path.symlink_to(session)
    return path


def test_a_link_and_the_real_path_share_one_lock(session: Path, link: Path) -> None:
    for first, second in ((link, session), (session, link)):
        holder = SessionStore.open(first, lock=True)
        with pytest.raises(SessionLockError):
            SessionStore.open(second, lock=True)
        holder.close()
    assert not (link.parent / "current.jsonl.lock").exists()


def test_the_lock_is_shared_with_another_process(session: Path, link: Path) -> None:
    script = ("import sys\nfrom agent_forge.coding.session.store import SessionStore\n"
              "SessionStore.open(sys.argv[1], lock=True)\nprint('locked', flush=True)\nsys.stdin.read()\n")
    child = subprocess.Popen([sys.executable, "-c", script, str(session)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline() == "locked\n"
        with pytest.raises(SessionLockError, match=f"pid {child.pid}"):
            SessionStore.open(link, lock=True)
    finally:
        child.communicate("")
    SessionStore.open(link, lock=True).close()


def test_a_store_opened_through_a_link_appends_to_the_real_file(session: Path, link: Path) -> None:
    store = SessionStore.open(link, lock=True)
    assert store.path == session and store.take_lock().session_path == session  # type: ignore[union-attr]
    store.append_message(user("second"))
    store.close()
    assert link.is_symlink()
    assert [json.loads(line).get("message", {}).get("content") for line in session.read_text().splitlines()][1:] \
        == ["first", "second"]


def test_a_new_session_under_a_linked_sessions_dir_has_a_real_path(tmp_path: Path) -> None:
    (tmp_path / "real-sessions").mkdir()
    (tmp_path / "sessions").symlink_to(tmp_path / "real-sessions")
    store = SessionStore.create(tmp_path / "project", tmp_path / "sessions", lock=True)
    store.append_message(user("hi"))
    assert store.path is not None and store.path.parent.parent == tmp_path / "real-sessions"
    with pytest.raises(SessionLockError):
        SessionLock.acquire(tmp_path / "sessions" / store.path.parent.name / store.path.name)
    store.close()


def test_a_link_planted_at_the_lock_file_is_refused_not_followed(session: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    lock_path_for(session).symlink_to(victim)
    with pytest.raises(SessionFileError, match="cannot create lock file"):
        SessionStore.open(session, lock=True)
    assert victim.read_text() == "precious"


def test_links_planted_at_the_temporary_and_backup_names_are_replaced_not_followed(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    header = {"type": "session", "id": "v1-session", "timestamp": "2024-01-01T00:00:00.000Z", "cwd": "/p"}
    entry = {"type": "message", "timestamp": "2024-01-01T00:00:00.000Z", "message": user("old")}
    path.write_text(json.dumps(header) + "\n" + json.dumps(entry) + "\n")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (tmp_path / ".old.jsonl.tmp").symlink_to(victim)
    (tmp_path / "old.jsonl.v1.bak").symlink_to(tmp_path / "nowhere" / "backup")  # dangling: link() fails
    store = SessionStore.open(path)
    store.append_message(user("new"))
    store.close()
    assert victim.read_text() == "precious" and not (tmp_path / "nowhere").exists()
    backup = tmp_path / "old.jsonl.v1.bak"
    assert not backup.is_symlink() and backup.read_text().startswith(json.dumps(header))
    assert json.loads(path.read_text().splitlines()[0])["version"] == 3
