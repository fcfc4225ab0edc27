"""Hand-edited session files: a real session written by the store, its entries mutated (fields dropped, values of
the wrong type at every depth, unknown roles, parents pointing anywhere, cycles), must still open, and building
the context, the tree, entry cursors, fork and clone paths, session stats, listings and the HTML export must
never raise; the context holds only well-shaped messages, and the session can still be appended to."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_forge.coding.compaction.tokens import context_tokens
from agent_forge.coding.compaction.transcript import file_operations, serialize
from agent_forge.coding.export_html import SessionSnapshot, render_html
from agent_forge.coding.messages import convert_to_llm
from agent_forge.coding.session.context import context_message
from agent_forge.coding.session.listing import session_info
from agent_forge.coding.session.stats import session_stats
from agent_forge.coding.session.store import SessionStore
from agent_forge.coding.session.tree import clone_path, entries_since, fork_messages, fork_path, get_tree

DROP = object()
"""Stands for "remove this field" in a mutation."""

VALUES: tuple[Any, ...] = (DROP, None, 0, -1, 2.5, "x", "", True, [], {}, [1], ["x"], {"type": 1},
                           [{"type": "text", "text": 5}], "2026-13-99T99:99:99Z")
"""Replacement values: every JSON type, empty and odd containers, a malformed block, a bad timestamp."""

Path_ = tuple[Any, ...]


def write_real_session(tmp_path: Path) -> Path:
    """A session with every entry type and message role, a branch, a label and a compaction, written by the store."""
    store = SessionStore.create(tmp_path / "proj", tmp_path / "sessions")
    store.append_model_change("p", "m")
    store.append_thinking_level_change("high")
    first = store.append_message({"role": "user", "content": "hello", "timestamp": 1})
    answer = store.append_message({
        "role": "assistant", "provider": "p", "model": "m", "stopReason": "toolUse", "timestamp": 2,
        "content": [{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "hi"},
                    {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}],
        "usage": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3, "cost": {"total": 0.1}},
    })
    store.append_message({"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "isError": False,
                          "timestamp": 3, "content": [{"type": "text", "text": "out"},
                                                      {"type": "image", "data": "aGk=", "mimeType": "image/png"}]})
    store.append_message({"role": "bashExecution", "command": "ls", "output": "x", "exitCode": 1,
                          "cancelled": False, "truncated": True, "fullOutputPath": "/tmp/x", "timestamp": 4})
    store.append_message({"role": "custom", "customType": "t", "content": "c", "display": True, "timestamp": 5})
    store.append_custom_message(custom_type="t", content=[{"type": "text", "text": "cm"}], display=False,
                                details={"a": 1})
    store.append_custom(custom_type="t", data={"x": 1})
    store.append_session_info(name="name")
    store.append_label(target_id=first["id"], label="start")
    store.append_context_window_change(provider="p", model_id="m", context_window=1000)
    store.append_compaction(summary="summary", first_kept_entry_id=first["id"], tokens_before=10,
                            usage={"input": 1, "output": 1})
    store.set_leaf(answer["id"])
    store.append_branch_summary(from_id=first["id"], summary="branch", usage={"input": 1})
    store.append_message({"role": "user", "content": [{"type": "text", "text": "again"}], "timestamp": 6})
    store.append_message({"role": "compactionSummary", "summary": "s", "tokensBefore": 3, "timestamp": 7})
    store.close()
    assert store.path is not None
    return store.path


def field_paths(value: Any, prefix: Path_ = ()) -> Iterator[Path_]:
    """Every dict key and list index path inside `value`, depth first."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        yield (*prefix, key)
        yield from field_paths(child, (*prefix, key))


def mutate(entry: dict[str, Any], path: Path_, value: Any) -> None:
    """Set (or with DROP remove) the field at `path` in `entry`, in place; a path no longer there is skipped."""
    target: Any = entry
    for key in path[:-1]:
        try:
            target = target[key]
        except (KeyError, IndexError, TypeError):
            return
    if not isinstance(target, (dict, list)) or (isinstance(target, list) and path[-1] >= len(target)):
        return
    if value is DROP:
        del target[path[-1]]
    else:
        target[path[-1]] = copy.deepcopy(value)


def mutations_of(entries: list[dict[str, Any]]) -> list[list[tuple[Path_, Any]]]:
    """For each entry: every single mutation (each field path × each value, and `parentId` set to every id)."""
    ids = [entry["id"] for entry in entries]
    return [[(path, value) for path in field_paths(entry) for value in VALUES]
            + [(("parentId",), other) for other in ids] for entry in entries]


class Session:
    def __init__(self, tmp_path: Path) -> None:
        self.path = write_real_session(tmp_path)
        header, *lines = self.path.read_text().splitlines()
        self.header = header
        self.entries = [json.loads(line) for line in lines]
        self.target = tmp_path / "sessions" / "mutant.jsonl"

    def write(self, entries: list[dict[str, Any]]) -> Path:
        self.target.write_text("\n".join([self.header, *map(json.dumps, entries)]) + "\n")
        return self.target


def tree_ids(nodes: list[dict[str, Any]]) -> list[str]:
    ids, stack = [], list(nodes)
    while stack:
        node = stack.pop()
        ids.append(node["entry"]["id"])
        stack.extend(node["children"])
    return ids


def exercise(path: Path) -> None:
    """Everything a client or a later prompt does with a session file; raises on the first fault."""
    store = SessionStore.open(path)
    context = store.build_context()
    assert all(context_message(message) is message for message in context.messages)  # only usable messages
    convert_to_llm(context.messages)
    context_tokens(context.messages)
    serialize(context.messages)
    file_operations(context.messages)
    tree = get_tree(store)
    json.dumps(tree)
    assert sorted(tree_ids(tree["tree"])) == sorted(entry["id"] for entry in store.entries)  # each exactly once
    assert entries_since(store)["entries"] == store.entries
    for entry in store.entries:
        entries_since(store, entry["id"])
        assert store.branch(entry["id"])[-1] is entry
        try:
            kept, _ = fork_path(store, entry["id"])
        except ValueError:
            continue
        assert entry["id"] not in {kept_entry["id"] for kept_entry in kept}
    fork_messages(store)
    clone_path(store)
    _ = store.session_name
    model: Any = {"contextWindow": 1000}
    stats = session_stats(session_file=str(path), session_id=store.session_id, entries=store.entries,
                          branch=store.branch(), model=model, context_tokens=0)
    assert stats["totalMessages"] == sum(1 for entry in store.entries if entry["type"] == "message")
    assert session_info(path) is not None
    render_html(SessionSnapshot.of_store(store))
    store.append_message({"role": "user", "content": "still usable", "timestamp": 8})
    store.close()
    assert SessionStore.open(path).build_context().messages[-1]["content"] == "still usable"


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Session:
    return Session(tmp_path_factory.mktemp("fuzz"))


def test_every_single_mutation_of_every_entry(session: Session) -> None:
    """Round r mutates every entry with its r-th mutation at once (one file per round instead of one per
    mutation: each mutation is still applied, to an otherwise intact entry)."""
    per_entry = mutations_of(session.entries)
    for round_ in range(max(map(len, per_entry))):
        entries = copy.deepcopy(session.entries)
        applied = []
        for entry, mutations in zip(entries, per_entry):
            if round_ < len(mutations):
                mutate(entry, *mutations[round_])
                applied.append((entry.get("id"), mutations[round_]))
        try:
            exercise(session.write(entries))
        except Exception as exc:
            raise AssertionError(f"round {round_}: {applied}") from exc


@pytest.mark.parametrize("seed", range(60))
def test_random_combinations_of_mutations(session: Session, seed: int) -> None:
    rng = random.Random(seed)
    entries = copy.deepcopy(session.entries)
    ids = [entry["id"] for entry in entries]
    for _ in range(rng.randint(1, 12)):
        entry = rng.choice(entries)
        if rng.random() < 0.3:
            entry["parentId"] = rng.choice(ids)
            continue
        paths = list(field_paths(entry))
        if paths:
            mutate(entry, rng.choice(paths), rng.choice(VALUES))
    exercise(session.write(entries))


@pytest.mark.parametrize("message", [
    None, 42, "text", [], {"content": "no role"}, {"role": 7, "content": "x"}, {"role": ["user"], "content": "x"},
    {"role": "wizard", "content": "x"}, {"role": "user", "content": 5}, {"role": "user", "content": None},
    {"role": "user", "content": {"type": "text"}}, {"role": "user", "content": [5]},
    {"role": "user", "content": [{"type": ["text"], "text": "x"}]}, {"role": "assistant", "content": "a string"},
    {"role": "assistant", "content": [{"type": "text", "text": None}]},
    {"role": "assistant", "content": [{"type": "toolCall", "id": "c", "name": "n", "arguments": "{}"}]},
    {"role": "toolResult", "content": "x", "toolCallId": "c"}, {"role": "toolResult", "content": []},
    {"role": "bashExecution", "command": 5, "output": "x"}, {"role": "bashExecution", "command": "ls", "output": 5},
    {"role": "custom", "content": 5}, {"role": "compactionSummary", "summary": None},
])
def test_a_bad_message_is_left_out_of_the_context_but_kept_in_the_file(tmp_path: Path, message: Any) -> None:
    store = SessionStore.create(tmp_path, tmp_path / "sessions")
    store.append_message({"role": "user", "content": "before", "timestamp": 1})
    bad = store._append("message", {"message": message})  # a foreign writer: no check of the message
    store.append_message({"role": "user", "content": "after", "timestamp": 2})
    store.close()
    reopened = SessionStore.open(store.path)  # type: ignore[arg-type]
    assert [m["content"] for m in reopened.build_context().messages] == ["before", "after"]
    assert reopened.get_entry(bad["id"])["message"] == message  # type: ignore[index]
    assert bad["id"] in [entry["id"] for entry in entries_since(reopened)["entries"]]


def test_wrong_optional_fields_are_repaired_in_a_copy(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path / "sessions")
    store.append_message({"role": "user", "content": "q", "timestamp": "yesterday"})
    entry = store.append_message({"role": "assistant", "content": [{"type": "text", "text": "a"}], "timestamp": 2,
                                  "usage": {"input": "12", "output": 1}, "stopReason": 3, "model": None})
    user, assistant = store.build_context().messages
    assert user["timestamp"] == 0
    assert assistant == {"role": "assistant", "content": [{"type": "text", "text": "a"}], "timestamp": 2}
    assert store.get_entry(entry["id"])["message"]["usage"] == {"input": "12", "output": 1}  # type: ignore[index]
    assert context_tokens([user, assistant]) > 0


def test_custom_message_entry_with_bad_content_is_left_out(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path / "sessions")
    store.append_message({"role": "user", "content": "q", "timestamp": 1})
    store.append_custom_message(custom_type="t", content=12, display=True)
    store.append_custom_message(custom_type=["t"], content="ok", display=True)
    assert [m.get("content") for m in store.build_context().messages] == ["q", "ok"]
    assert "customType" not in store.build_context().messages[-1]


def test_label_without_timestamp_and_entry_without_parent_field(tmp_path: Path) -> None:
    """The tester's `KeyError: 'timestamp'` in get_tree, and an entry line lacking `parentId` altogether."""
    store = SessionStore.create(tmp_path, tmp_path / "sessions")
    first = store.append_message({"role": "user", "content": "q", "timestamp": 1})
    store.close()
    with open(store.path, "a") as handle:  # type: ignore[arg-type]
        handle.write(json.dumps({"type": "label", "id": "11111111", "parentId": first["id"],
                                 "targetId": first["id"], "label": "here"}) + "\n")
        handle.write(json.dumps({"type": "custom", "id": "22222222", "customType": "t"}) + "\n")
    reopened = SessionStore.open(store.path)  # type: ignore[arg-type]
    roots = get_tree(reopened)["tree"]
    assert roots[0]["label"] == "here" and "labelTimestamp" not in roots[0]
    assert [root["entry"]["id"] for root in roots] == [first["id"], "22222222"]
    assert reopened.get_entry("22222222")["parentId"] is None  # type: ignore[index]
