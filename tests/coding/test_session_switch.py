"""`--no-session` is a choice for the whole process: after `switch_session` to a file that file is the session,
but every session started from it (`successor_store`: new_session, fork, clone) stays in memory."""

from __future__ import annotations

from pathlib import Path

from agent_forge.coding.session_store import SessionStore
from agent_forge.coding.session_switch import clone, fork, successor_store, switch_session
from agent_forge.sdk import create_agent_session, faux_model


def session_file(tmp_path: Path) -> Path:
    store = SessionStore.create(tmp_path / "project", tmp_path / "sessions")
    store.append_message({"role": "user", "content": "in the file", "timestamp": 1})
    store.close()
    assert store.path is not None
    return store.path


def make_session(tmp_path: Path, **options):
    return create_agent_session(cwd=str(tmp_path / "project"), model=faux_model(key=f"switch-{tmp_path.name}"),
                                agent_dir=tmp_path / "agent", session_dir=str(tmp_path / "sessions"), tools=[],
                                **options)


async def test_no_session_choice_survives_a_switch_to_a_file(tmp_path: Path) -> None:
    path = session_file(tmp_path)
    session = make_session(tmp_path, no_session=True)
    await switch_session(session, str(path))
    assert session.store.path == path and session.store.no_session
    successor = successor_store(session, str(path))
    assert successor.path is None and successor.no_session
    [entry] = session.store.entries
    assert (await fork(session, entry["id"]))["cancelled"] is False and session.store.path is None
    await switch_session(session, str(path))
    await clone(session)
    assert session.store.path is None and session.store.entry_count > 0
    assert sorted((tmp_path / "sessions").rglob("*.jsonl")) == [path]
    await session.close()


async def test_a_file_session_starts_new_sessions_as_files(tmp_path: Path) -> None:
    path = session_file(tmp_path)
    session = make_session(tmp_path)
    await switch_session(session, str(path))
    assert not session.store.no_session
    successor = successor_store(session, str(path))
    assert successor.path is not None and successor.path.parent == path.parent
    assert successor.header["parentSession"] == str(path)
    successor.close()
    await session.close()
