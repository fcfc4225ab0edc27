"""A message the session file cannot hold as it is: the store refuses it before changing anything, then the
message itself is made JSON-safe and saved, so memory and file agree."""

from __future__ import annotations

import datetime
import json

import pytest

from agent_forge.coding.message_persist import make_json_safe, persist_message
from agent_forge.coding.session.reading import UnencodableEntry
from agent_forge.coding.session.store import SessionStore


def test_the_store_refuses_an_unencodable_entry_before_changing_memory(tmp_path):
    store = SessionStore.create(tmp_path, tmp_path / "s")
    with pytest.raises(UnencodableEntry):
        store.append_message({"role": "user", "content": {1, 2}})
    assert store.entries == [] and store.leaf_id is None


def test_persist_message_saves_a_json_safe_message_equal_to_memory(tmp_path, capsys):
    store = SessionStore.create(tmp_path, tmp_path / "s")
    message = {"role": "toolResult", "content": [{"type": "text", "text": "ok"}],
               "details": {"when": datetime.date(2020, 1, 2), "pair": (1, 2), 3: [{"s": {1}}]}}
    persist_message(store, message)
    saved = json.loads(store.path.read_text().splitlines()[-1])["message"]
    assert saved == message
    assert message["details"] == {"when": "<unserialisable date: datetime.date(2020, 1, 2)>", "pair": [1, 2],
                                  "3": [{"s": "<unserialisable set: {1}>"}]}
    assert "held values JSON cannot hold" in capsys.readouterr().err


def test_make_json_safe_counts_and_walks_any_depth():
    deep: list = []
    inner = deep
    for _ in range(5000):
        inner.append([])
        inner = inner[0]
    inner.append(object())
    assert make_json_safe({"a": deep, "b": 10 ** 5000, "c": "fine"}) == 2
