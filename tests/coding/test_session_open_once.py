"""Opening a session file reads it in one pass: each message is checked for the context once (the check that
warns about unusable entries is the one the first context uses), and the file's numbers are screened for
integers past 64 bits once, reading them as integers on both JSON backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_forge.coding.session import context
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


def test_each_message_is_checked_once_on_open(tmp_path, monkeypatch):
    path, _ = write_session(tmp_path)
    calls = []
    real = context.context_message
    monkeypatch.setattr(context, "context_message", lambda message: calls.append(message) or real(message))
    store = SessionStore.open(path)
    messages = store.build_context().messages
    assert len(calls) == 5
    assert [m["content"] for m in messages] == ["q0", "q1", "q2", "big"]
    assert any("unusable shape" in warning for warning in store.load_warnings)
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
