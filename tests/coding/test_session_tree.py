"""Session tree: entries since a cursor, the tree with labels/orphans/cycles, fork and clone paths, context with
compactions and branch summaries, fork/clone stores, the single-writer lock, and deep JSON encoding."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agent_forge.coding.messages import convert_to_llm
from agent_forge.coding.errors import SessionLockError
from agent_forge.coding.session.lock import SessionLock, lock_path_for
from agent_forge.coding.session.store import SessionStore
from agent_forge.coding.switching import fork_file
from agent_forge.coding.session.tree import (
    INVALID_FORK_ENTRY,
    build_tree,
    clone_path,
    entries_since,
    fork_messages,
    fork_path,
    get_tree,
)
from agent_forge.modes.rpc import framing
from agent_forge.modes.rpc.deep_json import dumps as deep_dumps


def user(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def assistant(text: str) -> dict:
    return {"role": "assistant", "content": [{"type": "text", "text": text}], "provider": "p", "model": "m",
            "stopReason": "stop", "timestamp": 2}


def texts(messages: list[dict]) -> list[str]:
    return [m["content"][0]["text"] if "content" in m else f"<{m['role']}:{m['summary']}>" for m in messages]


def ids_of(nodes: list[dict]) -> list[str]:
    return [node["entry"]["id"] for node in nodes]


@pytest.fixture
def branched(tmp_path: Path) -> tuple[SessionStore, dict[str, str]]:
    """u1 → a1 ┬ u2a → a2a (abandoned) ├ u2b → a2b (abandoned) └ u2c → a2c (active), written and reopened."""
    store = SessionStore.create(tmp_path / "proj", tmp_path / "sessions")
    ids = {"m": store.append_model_change("p", "m")["id"], "u1": store.append_message(user("u1"))["id"]}
    ids["a1"] = store.append_message(assistant("a1"))["id"]
    for branch in "abc":
        store.set_leaf(ids["a1"])
        ids[f"u2{branch}"] = store.append_message(user(f"u2{branch}"))["id"]
        ids[f"a2{branch}"] = store.append_message(assistant(f"a2{branch}"))["id"]
    store.close()
    return SessionStore.open(store.path), ids


def test_tree_of_a_file_with_two_abandoned_branches(branched) -> None:
    store, ids = branched
    data = get_tree(store)
    assert data["leafId"] == ids["a2c"]
    [root] = data["tree"]
    a1 = root["children"][0]["children"][0]
    assert ids_of(a1["children"]) == [ids["u2a"], ids["u2b"], ids["u2c"]]
    assert [ids_of(n["children"]) for n in a1["children"]] == [[ids["a2a"]], [ids["a2b"]], [ids["a2c"]]]
    assert all(n["children"][0]["children"] == [] for n in a1["children"])


def test_labels_latest_wins_and_clearing_removes(branched) -> None:
    store, ids = branched
    store.append_label(target_id=ids["u1"], label="first")
    latest = store.append_label(target_id=ids["u1"], label="second")
    store.append_label(target_id=ids["a1"], label="gone")
    store.append_label(target_id=ids["a1"])  # no label: cleared
    nodes = {n["entry"]["id"]: n for n in _walk(get_tree(store)["tree"])}
    assert nodes[ids["u1"]]["label"] == "second" and nodes[ids["u1"]]["labelTimestamp"] == latest["timestamp"]
    assert "label" not in nodes[ids["a1"]] and "labelTimestamp" not in nodes[ids["a1"]]
    assert len(nodes) == store.entry_count  # label entries are tree nodes too


def _walk(roots: list[dict]) -> list[dict]:
    out, stack = [], list(roots)
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(node["children"])
    return out


def test_orphans_and_cycles_become_roots() -> None:
    def entry(entry_id: str, parent: str | None) -> dict:
        return {"type": "custom", "id": entry_id, "parentId": parent, "timestamp": "t", "customType": "x"}

    entries = [entry("r", None), entry("c", "r"), entry("o", "missing"), entry("x", "y"), entry("y", "x"),
               entry("s", "s")]
    roots = build_tree(entries)
    assert ids_of(roots) == ["r", "o", "s", "x"]
    assert ids_of(roots[0]["children"]) == ["c"] and ids_of(roots[3]["children"]) == ["y"]
    assert roots[3]["children"][0]["children"] == []  # the cycle is cut, every entry appears once
    assert sorted(n["entry"]["id"] for n in _walk(roots)) == sorted(e["id"] for e in entries)


def cyclic_store(tmp_path: Path, lines: list[tuple[str, str | None, str]]) -> SessionStore:
    """A hand-edited file: `(id, parentId, role or "")` per entry, in append order."""
    header = {"type": "session", "version": 3, "id": "cyc", "timestamp": "t", "cwd": str(tmp_path)}
    entries = [{"type": "message", "id": entry_id, "parentId": parent, "timestamp": "t",
                "message": user(entry_id) if role == "user" else assistant(entry_id)}
               for entry_id, parent, role in lines]
    path = tmp_path / "cyclic.jsonl"
    path.write_text("".join(json.dumps(obj) + "\n" for obj in [header, *entries]))
    return SessionStore.open(path)


def test_a_child_of_a_cycle_hangs_under_the_cycle_not_as_an_extra_root(tmp_path: Path) -> None:
    """c (child of the cycle a ⇄ b) comes first in the file: only the cycle's earliest entry, a, becomes a root."""
    store = cyclic_store(tmp_path, [("r", None, "user"), ("c", "b", "user"), ("a", "b", "user"),
                                    ("b", "a", "assistant"), ("d", "c", "assistant")])
    roots = get_tree(store)["tree"]
    assert ids_of(roots) == ["r", "a"]
    assert ids_of(roots[1]["children"]) == ["b"] and ids_of(roots[1]["children"][0]["children"]) == ["c"]
    assert sorted(n["entry"]["id"] for n in _walk(roots)) == ["a", "b", "c", "d", "r"]
    assert [e["id"] for e in store.branch()] == ["a", "b", "c", "d"]  # the leaf's branch starts at the cut
    assert [e["id"] for e in store.branch("a")] == ["a"]


@pytest.mark.parametrize("order", [["a", "b", "x"], ["x", "b", "a"], ["b", "x", "a"]])
def test_branches_of_a_cycle_start_where_the_tree_cuts_it(tmp_path: Path, order: list[str]) -> None:
    """The cycle a → x → b → a (parents), in any append order: branch() and get_tree() agree."""
    parents = {"a": "b", "b": "x", "x": "a"}
    store = cyclic_store(tmp_path, [(entry_id, parents[entry_id], "user") for entry_id in order])
    root = get_tree(store)["tree"]
    assert ids_of(root) == [order[0]]
    chain = [node["entry"]["id"] for node in _walk(root)]
    for entry_id in order:
        assert [e["id"] for e in store.branch(entry_id)] == chain[: chain.index(entry_id) + 1]


def test_forking_at_a_message_on_a_cycle_never_keeps_that_message(tmp_path: Path) -> None:
    store = cyclic_store(tmp_path, [("u", "a", "user"), ("a", "v", "assistant"), ("v", "u", "user"),
                                    ("self", "self", "user")])
    assert fork_path(store, "u") == ([], "u")  # the earliest entry of the cycle: the tree's root
    assert [e["id"] for e in fork_path(store, "v")[0]] == ["u"]  # u → v → a once cut at u
    # A self-parented entry continues from the entry before it in the file (issue 10: it used to be a root, which
    # left a self-parented leaf with an empty context); the first entry of a file has none before it.
    assert [e["id"] for e in fork_path(store, "self")[0]] == ["u", "v"]
    first = cyclic_store(tmp_path, [("self", "self", "user"), ("b", "self", "assistant")])
    assert fork_path(first, "self") == ([], "self") and [e["id"] for e in first.branch()] == ["self", "b"]


def test_entries_since_is_a_durable_cursor(branched) -> None:
    store, ids = branched
    everything = entries_since(store)
    assert [e["id"] for e in everything["entries"]] == [e["id"] for e in store.entries]
    after = entries_since(store, ids["a2a"])
    assert [e["id"] for e in after["entries"]] == [ids[k] for k in ("u2b", "a2b", "u2c", "a2c")]
    assert after["leafId"] == ids["a2c"]
    assert entries_since(store, ids["a2c"]) == {"entries": [], "leafId": ids["a2c"]}
    with pytest.raises(KeyError, match="Entry not found: zzz"):
        entries_since(store, "zzz")


def test_fork_messages_are_the_user_messages_of_the_active_branch(branched) -> None:
    store, ids = branched
    assert fork_messages(store) == [{"entryId": ids["u1"], "text": "u1"}, {"entryId": ids["u2c"], "text": "u2c"}]
    store.set_leaf(ids["a2a"])
    assert [m["entryId"] for m in fork_messages(store)] == [ids["u1"], ids["u2a"]]


def test_fork_and_clone_paths(branched) -> None:
    store, ids = branched
    path, text = fork_path(store, ids["u2c"])
    assert [e["id"] for e in path] == [ids["m"], ids["u1"], ids["a1"]] and text == "u2c"
    assert fork_path(store, ids["u1"]) == ([store.get_entry(ids["m"])], "u1")
    for bad in (ids["a1"], ids["m"], "unknown"):
        with pytest.raises(ValueError, match=INVALID_FORK_ENTRY):
            fork_path(store, bad)
    assert [e["id"] for e in clone_path(store)] == [ids[k] for k in ("m", "u1", "a1", "u2c", "a2c")]


def test_forked_store_keeps_ids_and_is_written_at_once(branched, tmp_path: Path) -> None:
    store, ids = branched
    path, _ = fork_path(store, ids["u2c"])
    forked = SessionStore.create(tmp_path / "proj", tmp_path / "sessions", parent_session=store.path, entries=path)
    assert forked.path.exists() and forked.leaf_id == ids["a1"]  # it holds messages: written now
    lines = [json.loads(line) for line in forked.path.read_text().splitlines()]
    assert lines[0]["parentSession"] == str(store.path)
    assert lines[1:] == path and lines[1]["parentId"] is None
    added = forked.append_message(user("new"))
    assert added["parentId"] == ids["a1"] and SessionStore.open(forked.path).entries == forked.entries
    forked.close()


def test_clone_without_messages_is_written_lazily(tmp_path: Path) -> None:
    fresh = SessionStore.create(tmp_path / "proj", tmp_path / "sessions")
    fresh.append_model_change("p", "m")
    clone = SessionStore.create(tmp_path / "proj", tmp_path / "sessions", entries=clone_path(fresh))
    assert not clone.path.exists() and clone.entries == fresh.entries
    clone.append_message(user("first"))
    assert [json.loads(line)["type"] for line in clone.path.read_text().splitlines()] == [
        "session", "model_change", "message"]


def test_fork_file_copies_the_leaf_branch_with_a_lock(branched, tmp_path: Path) -> None:
    store, ids = branched
    store.set_leaf(ids["a2b"])  # the file's own leaf (its last line) is what --fork copies, not this
    copy = fork_file(store.path, str(tmp_path / "elsewhere"), str(tmp_path / "sessions"))
    assert [e["id"] for e in copy.entries] == [e["id"] for e in clone_path(SessionStore.open(store.path))]
    assert copy.header["parentSession"] == str(store.path) and copy.cwd == str(tmp_path / "elsewhere")
    with pytest.raises(SessionLockError):
        SessionStore.open(copy.path, lock=True)
    copy.close()
    SessionStore.open(copy.path, lock=True).close()


# --- context --------------------------------------------------------------------------------------------


def test_context_uses_the_latest_compaction_and_its_kept_entries(tmp_path: Path) -> None:
    store = SessionStore.in_memory(tmp_path)
    store.append_message(user("q1"))
    store.append_message(assistant("r1"))
    q2 = store.append_message(user("q2"))
    store.append_compaction(summary="old summary", first_kept_entry_id=q2["id"], tokens_before=100)
    store.append_message(assistant("r2"))
    r3 = store.append_message(user("q3"))
    store.append_compaction(summary="new summary", first_kept_entry_id=r3["id"], tokens_before=200)
    store.append_message(assistant("r3"))
    context = store.build_context()
    assert texts(context.messages) == ["<compactionSummary:new summary>", "q3", "r3"]
    assert context.messages[0]["tokensBefore"] == 200 and isinstance(context.messages[0]["timestamp"], int)
    llm = convert_to_llm(context.messages)
    assert llm[0]["role"] == "user" and "new summary" in llm[0]["content"][0]["text"]


def test_retain_none_compaction_and_branch_summary(tmp_path: Path) -> None:
    store = SessionStore.in_memory(tmp_path)
    store.append_message(user("q1"))
    done = store.append_message(assistant("r1"))
    compaction = store.append_compaction(summary="all of it", first_kept_entry_id=None, tokens_before=5)
    store.append_branch_summary(from_id=done["id"], summary="tried another way")
    store.append_branch_summary(from_id=done["id"], summary="")  # empty: contributes nothing
    store.append_message(user("q2"))
    assert texts(store.build_context().messages) == [
        "<compactionSummary:all of it>", "<branchSummary:tried another way>", "q2"]
    store.set_leaf(compaction["id"])
    store.append_compaction(summary="self", first_kept_entry_id="itself-unknown", tokens_before=5)
    assert texts(store.build_context().messages) == ["<compactionSummary:self>"]
    assert [m["role"] for m in convert_to_llm(store.build_context().messages)] == ["user"]


def test_context_settings_from_the_path(tmp_path: Path) -> None:
    store = SessionStore.in_memory(tmp_path)
    store.append_message(assistant("from an old file"))
    assert store.build_context().model == ("p", "m")  # no model_change: the answering model stands in
    store.append_model_change("router", "auto")
    store.append_message(assistant("answered by the physical model"))
    store.append_context_window_change(provider="router", model_id="auto", context_window=400_000)
    context = store.build_context()
    assert context.model == ("router", "auto") and context.context_window == 400_000


# --- lock -----------------------------------------------------------------------------------------------


def test_second_writer_is_refused_until_the_first_closes(branched) -> None:
    store, _ = branched
    first = SessionStore.open(store.path, lock=True)
    with pytest.raises(SessionLockError) as caught:
        SessionStore.open(store.path, lock=True)
    assert caught.value.pid == os.getpid()
    assert str(caught.value).startswith(f"Session file is already open in this process (pid {os.getpid()}): close "
                                        "the session that has it open first: ")
    assert lock_path_for(store.path).read_text().strip() == str(os.getpid())
    SessionStore.open(store.path).close()  # readers never lock
    first.close()
    assert not lock_path_for(store.path).exists()
    SessionStore.open(store.path, lock=True).close()


def test_lock_held_by_another_process_names_its_pid(branched) -> None:
    store, _ = branched
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from agent_forge.coding.session.lock import SessionLock; "
                               "SessionLock.acquire(sys.argv[1]); print('locked', flush=True); sys.stdin.read()",
         str(store.path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline() == b"locked\n"
        with pytest.raises(SessionLockError, match=f"pid {holder.pid}"):
            SessionStore.open(store.path, lock=True)
    finally:
        holder.stdin.close()
        holder.wait()
    SessionStore.open(store.path, lock=True).close()  # the kernel dropped the lock with its holder


def test_stale_lock_file_from_a_dead_process_does_not_block(branched) -> None:
    store, _ = branched
    lock_path_for(store.path).write_text("999999999\n")
    with SessionStore.open(store.path, lock=True) as reopened:
        assert lock_path_for(store.path).read_text().strip() == str(os.getpid())
        reopened.append_message(user("still writable"))


def test_lock_handover_and_failed_open_release(branched, tmp_path: Path) -> None:
    store, _ = branched
    first = SessionStore.open(store.path, lock=True)
    second = SessionStore.open(store.path, lock=first.take_lock())
    first.close()  # no longer releases the lock it handed over
    with pytest.raises(SessionLockError):
        SessionLock.acquire(store.path)
    second.close()
    with pytest.raises(Exception, match="not found"):
        SessionStore.open(tmp_path / "missing.jsonl", lock=True)
    assert not lock_path_for(tmp_path / "missing.jsonl").exists()


def test_new_session_takes_the_lock_when_its_file_is_written(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path / "proj", tmp_path / "sessions", lock=True)
    store.append_model_change("p", "m")
    assert not lock_path_for(store.path).exists()
    store.append_message(user("now"))
    with pytest.raises(SessionLockError):
        SessionStore.open(store.path, lock=True)
    store.close()


# --- deep JSON ------------------------------------------------------------------------------------------


def _with_deep_stack(fn):
    """Run `fn` where the stdlib json may recurse deeply (to produce reference output for comparison)."""
    result: dict = {}
    limit = sys.getrecursionlimit()
    threading.stack_size(256 * 1024 * 1024)
    sys.setrecursionlimit(50_000)
    try:
        thread = threading.Thread(target=lambda: result.setdefault("value", fn()))
        thread.start()
        thread.join()
    finally:
        sys.setrecursionlimit(limit)
        threading.stack_size(0)
    return result["value"]


def test_get_tree_of_a_long_linear_session_encodes_exactly(tmp_path: Path) -> None:
    store = SessionStore.in_memory(tmp_path)
    for i in range(3000):
        store.append_message(user(f"m{i} \u2028 é"))
    store.append_custom(custom_type="x", data=[float("nan")])  # not JSON: written as null
    record = {"type": "response", "data": get_tree(store)}
    with pytest.raises(RecursionError):
        json.dumps(record)
    encoded = framing.encode(record)
    expected = _with_deep_stack(lambda: json.dumps(record, separators=(",", ":"), ensure_ascii=False))
    assert encoded == expected.replace("NaN", "null").encode() + b"\n"


def test_deep_json_keys_defaults_and_cycles() -> None:
    deep: list = []
    node = deep
    for _ in range(1500):
        node.append({1: None, None: 2.5, False: "f", "k": (1, 2), "s": {3}})
        node.append([])
        node = node[-1]
    encode = functools.partial(json.dumps, separators=(",", ":"), default=list)
    text = deep_dumps(deep, encode=encode)
    assert text.startswith('[{"1":null,"null":2.5,"false":"f","k":[1,2],"s":[3]},[{"1":null')
    assert text.count("[") == text.count("]")
    node.append(deep)
    with pytest.raises(ValueError, match="Circular"):
        deep_dumps(deep, encode=encode)


def test_older_compaction_inside_the_kept_range_is_not_repeated():
    from agent_forge.coding.session.projection import context_entries

    def entry(i, kind="message", **fields):
        return {"type": kind, "id": f"e{i}", "parentId": f"e{i - 1}" if i else None, "timestamp": "", **fields}

    path = [entry(0), entry(1, "compaction", summary="old", firstKeptEntryId="e0"), entry(2),
            entry(3, "compaction", summary="new", firstKeptEntryId="e0"), entry(4)]
    kinds = [(e["type"], e.get("summary")) for e in context_entries(path)]
    assert kinds == [("compaction", "new"), ("message", None), ("message", None), ("message", None)]
