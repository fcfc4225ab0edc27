"""Broken parent links found where a session file is read (`links.py` through `reading.read_session`): which
entries are self-parented, name a missing parent or sit on a parent cycle, in files of every shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_forge.coding.session.reading import read_session
from agent_forge.coding.session.store import SessionStore


def read(tmp_path: Path, parents: list[tuple[str, str | None]]):
    """A file of `custom` entries `(id, parentId)` in this order: its `ParsedSession`."""
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": str(tmp_path)}
    lines = [header, *({"type": "custom", "id": i, "parentId": p, "timestamp": "t", "customType": "x"}
                       for i, p in parents)]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return read_session(path), path


def ids(parsed, indexes: list[int]) -> list[str]:
    return [parsed.entries[i]["id"] for i in indexes]


@pytest.mark.parametrize("parents, self_parented, missing, cycles", [
    ([("a", None), ("b", "a"), ("c", "b")], [], [], []),  # linear
    ([("a", None), ("b", "a"), ("c", "a"), ("d", "c")], [], [], []),  # branched
    ([("b", "a"), ("a", None)], [], [], []),  # a parent further on in the file is no break
    ([("a", "a"), ("b", "b")], ["a", "b"], [], []),
    ([("a", None), ("b", "x"), ("c", "y"), ("d", "c")], [], ["b", "c"], []),
    ([("t", "a"), ("a", "b"), ("b", "c"), ("c", "a")], [], [], [["a", "b", "c"]]),  # t hangs below the cycle
    ([("a", "b"), ("b", "a"), ("c", "d"), ("d", "c"), ("e", "x")], [], ["e"], [["a", "b"], ["c", "d"]]),
])
def test_each_kind_of_broken_link_is_found_once(tmp_path, parents, self_parented, missing, cycles) -> None:
    parsed, _ = read(tmp_path, parents)
    links = parsed.broken_links
    assert ids(parsed, links.self_parented) == self_parented and ids(parsed, links.missing) == missing
    assert [ids(parsed, cycle) for cycle in links.cycles] == cycles


def test_a_cycle_of_any_length_is_found_without_recursion(tmp_path: Path) -> None:
    count = 20_000
    parsed, path = read(tmp_path, [(f"e{i}", f"e{(i + 1) % count}") for i in range(count)])
    assert [len(cycle) for cycle in parsed.broken_links.cycles] == [count]
    store = SessionStore.open(path)
    assert [e["id"] for e in store.branch()] == ["e0", f"e{count - 1}"]  # cut at e0, the first in the file
    assert store.load_warnings[-1].kind == "broken_links" and store.load_warnings[-1].to_json()["count"] == count
    assert str(store.load_warnings[-1]).count('"e') == 11  # ten ids and the one cut at


def test_a_long_or_odd_id_is_shown_on_one_line(tmp_path: Path) -> None:
    odd = "line\nbreak " + "x" * 100
    _, path = read(tmp_path, [(odd, odd)])
    (warning,) = SessionStore.open(path).load_warnings
    assert "\n" not in warning.message and '"line\\nbreak ' + "x" * 29 + '…"' in warning.message
