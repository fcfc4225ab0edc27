"""End to end: the session tree commands (get_entries, get_tree, get_fork_messages, fork, clone, switch_session)
on real session files, driven through the real CLI in RPC mode."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_forge.coding.session.store import SessionStore
from agent_forge.modes.rpc.client import RpcClient


async def start(env, cwd, *args):
    return await RpcClient.start(list(args), cwd=str(cwd), env=env)


def user(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1_700_000_000_000}


def assistant(text: str) -> dict:
    return {"role": "assistant", "content": [{"type": "text", "text": text}], "api": "openai-completions",
            "provider": "fake", "model": "fake-model", "stopReason": "stop", "timestamp": 1_700_000_000_001,
            "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                      "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}}


def file_lines(path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


def text_of(message: dict) -> str:
    return "".join(b["text"] for b in message["content"] if b.get("type") == "text")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def branched(project: Path, tmp_path: Path) -> dict:
    """A session file whose first answer has three continuations: two abandoned branches and the active one.

    model_change → thinking(low) → u1 → a1 ┬ u2a → a2a            (abandoned)
                                            ├ u2b → a2b           (abandoned)
                                            └ u2c → a2c → name → label(u1)   (active; leaf = the label)
    """
    store = SessionStore.create(project, tmp_path / "sessions")
    store.append_model_change("fake", "fake-model")
    store.append_thinking_level_change("low")
    ids = {"u1": store.append_message(user("first question"))["id"]}
    ids["a1"] = store.append_message(assistant("first answer"))["id"]
    for branch in ("a", "b", "c"):
        store.set_leaf(ids["a1"])
        ids[f"u2{branch}"] = store.append_message(user(f"question {branch}"))["id"]
        ids[f"a2{branch}"] = store.append_message(assistant(f"answer {branch}"))["id"]
    store.append_session_info(name="branchy")
    ids["label"] = store.append_label(target_id=ids["u1"], label="checkpoint")["id"]
    store.close()
    return {"path": store.path, "ids": ids}


async def test_entries_and_tree_of_a_file_with_two_abandoned_branches(agent_env, project, branched):
    ids = branched["ids"]
    async with await start(agent_env, project, "--session", str(branched["path"])) as client:
        entries = (await client.send({"type": "get_entries"}))["data"]
        tree = (await client.send({"type": "get_tree"}))["data"]
        forks = (await client.send({"type": "get_fork_messages"}))["data"]["messages"]
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
        since = (await client.send({"type": "get_entries", "since": ids["a2b"]}))["data"]
        state = (await client.send({"type": "get_state"}))["data"]
    assert entries["entries"] == file_lines(branched["path"])[1:]  # append order, header left out
    assert entries["leafId"] == ids["label"] == tree["leafId"]
    [root] = tree["tree"]
    assert root["entry"]["type"] == "model_change"
    u1 = root["children"][0]["children"][0]
    assert u1["entry"]["id"] == ids["u1"] and u1["label"] == "checkpoint"
    assert u1["labelTimestamp"] == entries["entries"][-1]["timestamp"]
    a1 = u1["children"][0]
    assert [child["entry"]["id"] for child in a1["children"]] == [ids["u2a"], ids["u2b"], ids["u2c"]]
    assert "label" not in a1
    assert forks == [{"entryId": ids["u1"], "text": "first question"}, {"entryId": ids["u2c"], "text": "question c"}]
    assert [text_of(m) for m in messages] == ["first question", "first answer", "question c", "answer c"]
    assert [e["id"] for e in since["entries"]] == [ids["u2c"], ids["a2c"], entries["entries"][-2]["id"], ids["label"]]
    assert state["sessionName"] == "branchy" and state["thinkingLevel"] == "low"


async def test_cursor_walk_with_since_across_a_client_restart(agent_env, fake_llm, project, branched):
    fake_llm.set_script([{"text": "later answer"}, {"text": "third answer"}])
    path = str(branched["path"])
    async with await start(agent_env, project, "--session", path) as client:
        seen = (await client.send({"type": "get_entries"}))["data"]["entries"]
        cursor = seen[-1]["id"]
        await client.prompt_and_wait("later question")
    async with await start(agent_env, project, "--session", path) as client:  # a new client process
        new = (await client.send({"type": "get_entries", "since": cursor}))["data"]
        await client.prompt_and_wait("third question")
        newer = (await client.send({"type": "get_entries", "since": new["leafId"]}))["data"]
        none = (await client.send({"type": "get_entries", "since": newer["leafId"]}))["data"]
        bad = await client.send({"type": "get_entries", "since": "abc"})
    assert [e["message"]["role"] for e in new["entries"]] == ["user", "assistant"]
    assert new["entries"][0]["parentId"] == cursor and new["leafId"] == new["entries"][-1]["id"]
    assert [text_of(e["message"]) for e in newer["entries"]] == ["third question", "third answer"]
    assert none == {"entries": [], "leafId": newer["leafId"]}
    assert bad["success"] is False and bad["error"] == "Entry not found: abc"
    assert [e["id"] for e in file_lines(path)[1:]][-4:] == [e["id"] for e in new["entries"] + newer["entries"]]


async def test_fork_then_clone_then_switch_back(agent_env, fake_llm, project, branched):
    fake_llm.set_script([{"text": "forked answer"}])
    ids, original = branched["ids"], str(branched["path"])
    before = file_lines(original)
    async with await start(agent_env, project, "--session", original) as client:
        bad_kind = await client.send({"type": "fork", "entryId": ids["a1"]})
        unknown = await client.send({"type": "fork", "entryId": "nope"})
        forked = await client.send({"type": "fork", "entryId": ids["u2c"]})
        fork_state = (await client.send({"type": "get_state"}))["data"]
        fork_messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
        await client.prompt_and_wait("question c, rephrased")
        cloned = await client.send({"type": "clone"})
        clone_state = (await client.send({"type": "get_state"}))["data"]
        clone_messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
        switched = await client.send({"type": "switch_session", "sessionPath": original})
        back_state = (await client.send({"type": "get_state"}))["data"]
        back_messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    assert bad_kind["success"] is False and bad_kind["error"] == "Invalid entry ID for forking"
    assert unknown["success"] is False and unknown["error"] == "Invalid entry ID for forking"
    assert forked["success"] is True and forked["data"] == {"text": "question c", "cancelled": False}
    fork_file = fork_state["sessionFile"]
    assert fork_file != original and fork_state["sessionId"] != back_state["sessionId"]
    assert [text_of(m) for m in fork_messages] == ["first question", "first answer"]
    fork_lines = file_lines(fork_file)
    assert fork_lines[0]["parentSession"] == original
    kept = [ids["u1"], ids["a1"]]
    assert [e["id"] for e in fork_lines[1:5]][2:] == kept  # ids survive the fork: cursors stay valid
    assert [e["type"] for e in fork_lines[1:3]] == ["model_change", "thinking_level_change"]
    # u1's label lay after the fork point: its entry comes along, once, after the copied path
    assert fork_lines[5] == {**before[-1], "parentId": ids["a1"]} and fork_lines[5]["id"] == ids["label"]
    assert [e["message"]["role"] for e in fork_lines[6:]] == ["user", "assistant"]
    assert fake_llm.requests[0]["body"]["messages"][-1]["content"][0]["text"] == "question c, rephrased"
    assert [m["role"] for m in fake_llm.requests[0]["body"]["messages"] if m["role"] != "system"] == [
        "user", "assistant", "user"]

    assert cloned["data"] == {"cancelled": False} and clone_state["sessionFile"] not in (fork_file, original)
    assert [text_of(m) for m in clone_messages] == [
        "first question", "first answer", "question c, rephrased", "forked answer"]
    clone_lines = file_lines(clone_state["sessionFile"])
    assert clone_lines[0]["parentSession"] == fork_file
    assert [e["id"] for e in clone_lines[1:]] == [e["id"] for e in file_lines(fork_file)[1:]]

    assert switched["data"] == {"cancelled": False, "sessionWarnings": []}
    assert back_state["sessionFile"] == original and back_state["sessionName"] == "branchy"
    assert back_state["thinkingLevel"] == "low" and back_state["model"]["id"] == "fake-model"
    assert [text_of(m) for m in back_messages] == ["first question", "first answer", "question c", "answer c"]
    assert file_lines(original) == before  # forking and cloning only read the original


async def test_switch_session_failures_leave_the_current_session(agent_env, fake_llm, project, tmp_path):
    fake_llm.set_script([{"text": "kept"}])
    not_a_session = tmp_path / "garbage.jsonl"
    not_a_session.write_text("not json\n")
    async with await start(agent_env, project) as client:
        await client.prompt_and_wait("hello")
        state = (await client.send({"type": "get_state"}))["data"]
        missing = await client.send({"type": "switch_session", "sessionPath": str(tmp_path / "nope.jsonl")})
        garbage = await client.send({"type": "switch_session", "sessionPath": str(not_a_session)})
        directory = await client.send({"type": "switch_session", "sessionPath": str(tmp_path)})
        after = (await client.send({"type": "get_state"}))["data"]
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    assert missing["success"] is False and "not found" in missing["error"] and "nope.jsonl" in missing["error"]
    assert garbage["success"] is False and "no valid session header" in garbage["error"]
    assert directory["success"] is False
    assert after == state and [text_of(m) for m in messages] == ["hello", "kept"]


@pytest.mark.real_process
async def test_switch_to_a_file_in_use_by_another_process_fails(agent_env, project, branched):
    path = str(branched["path"])
    async with await start(agent_env, project, "--session", path) as holder:
        await holder.send({"type": "get_state"})  # started: it holds the lock now
        async with await start(agent_env, project) as other:
            before = (await other.send({"type": "get_state"}))["data"]
            reply = await other.send({"type": "switch_session", "sessionPath": path})
            after = (await other.send({"type": "get_state"}))["data"]
        late = await start(agent_env, project, "--session", path)
        code = await late.close()
        holder_pid = holder.process.pid
    assert reply["success"] is False
    assert reply["error"].startswith(f"Session file is in use by another agent-forge process (pid {holder_pid})")
    assert after == before
    assert code == 1 and f"in use by another agent-forge process (pid {holder_pid})".encode() in late.stderr


async def test_switch_to_the_current_file_reloads_it(agent_env, fake_llm, project, branched):
    fake_llm.set_script([{"text": "again"}])
    path = str(branched["path"])
    async with await start(agent_env, project, "--session", path) as client:
        reply = await client.send({"type": "switch_session", "sessionPath": path})
        await client.prompt_and_wait("after reload")
        state = (await client.send({"type": "get_state"}))["data"]
    assert reply["data"] == {"cancelled": False, "sessionWarnings": []} and state["sessionFile"] == path
    assert file_lines(path)[-1]["message"]["content"][0]["text"] == "again"


async def test_clone_and_fork_on_a_fresh_session(agent_env, fake_llm, project):
    fake_llm.set_script([{"text": "answer one"}])
    async with await start(agent_env, project) as client:
        fresh = (await client.send({"type": "get_state"}))["data"]
        cloned = await client.send({"type": "clone"})
        clone_state = (await client.send({"type": "get_state"}))["data"]
        forks = (await client.send({"type": "get_fork_messages"}))["data"]["messages"]
        await client.prompt_and_wait("first")
        first_id = (await client.send({"type": "get_fork_messages"}))["data"]["messages"][0]["entryId"]
        forked = await client.send({"type": "fork", "entryId": first_id})
        fork_state = (await client.send({"type": "get_state"}))["data"]
    assert cloned["success"] is True and cloned["data"] == {"cancelled": False}
    assert clone_state["sessionFile"] != fresh["sessionFile"] and clone_state["model"]["id"] == "fake-model"
    assert forks == [] and not Path(fresh["sessionFile"]).exists()  # the fresh session never had a message
    lines = file_lines(clone_state["sessionFile"])
    assert "parentSession" not in lines[0]
    assert [e["type"] for e in lines[1:]] == ["model_change", "thinking_level_change", "message", "message"]
    assert forked["data"] == {"text": "first", "cancelled": False}
    assert fork_state["messageCount"] == 0 and not Path(fork_state["sessionFile"]).exists()


async def test_no_session_mode_forks_and_clones_in_memory(agent_env, fake_llm, project, tmp_path):
    fake_llm.set_script([{"text": "answer"}])
    async with await start(agent_env, project, "--no-session") as client:
        await client.prompt_and_wait("question")
        cloned = await client.send({"type": "clone"})
        state = (await client.send({"type": "get_state"}))["data"]
        entries = (await client.send({"type": "get_entries"}))["data"]["entries"]
    assert cloned["success"] is True and state["sessionFile"] is None and state["messageCount"] == 2
    assert [e["type"] for e in entries][-2:] == ["message", "message"]
    assert not list(tmp_path.rglob("*.jsonl"))


async def test_new_session_then_switch_back_to_the_first_file(agent_env, fake_llm, project):
    fake_llm.set_script([{"text": "first answer"}, {"text": "second answer"}])
    async with await start(agent_env, project) as client:
        await client.prompt_and_wait("first question")
        first = (await client.send({"type": "get_state"}))["data"]
        await client.send({"type": "new_session", "parentSession": first["sessionFile"]})
        await client.prompt_and_wait("in the new session")
        second = (await client.send({"type": "get_state"}))["data"]
        switched = await client.send({"type": "switch_session", "sessionPath": first["sessionFile"]})
        back = (await client.send({"type": "get_state"}))["data"]
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
        again = await client.send({"type": "switch_session", "sessionPath": second["sessionFile"]})
    assert second["sessionFile"] != first["sessionFile"]
    assert switched["data"] == {"cancelled": False, "sessionWarnings": []}  # the lock of the first file went with its store
    assert back["sessionId"] == first["sessionId"] and [text_of(m) for m in messages] == [
        "first question", "first answer"]
    assert again["success"] is True
    assert file_lines(second["sessionFile"])[0]["parentSession"] == first["sessionFile"]


async def test_hand_edited_entries_never_break_the_tree_commands_or_a_prompt(agent_env, fake_llm, project, branched):
    """A label without timestamp (once `Internal error: KeyError: 'timestamp'`), a message whose content is a
    number and one with an unknown role: the commands answer, and the next prompt leaves the bad ones out."""
    fake_llm.set_script([{"text": "still fine"}])
    path, ids = branched["path"], branched["ids"]
    lines = file_lines(path)
    leaf = lines[-1]["id"]
    hand_edited = [
        {"type": "label", "id": "1abe1000", "parentId": leaf, "targetId": ids["a1"], "label": "no time"},
        {"type": "message", "id": "bad00001", "parentId": "1abe1000", "timestamp": "x",
         "message": {"role": "user", "content": 42, "timestamp": 1}},
        {"type": "message", "id": "bad00002", "parentId": "bad00001", "timestamp": "x",
         "message": {"role": "wizard", "content": "spell"}},
    ]
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(entry) + "\n" for entry in hand_edited))
    async with await start(agent_env, project, "--session", str(path)) as client:
        tree = await client.send({"type": "get_tree"})
        entries = (await client.send({"type": "get_entries", "since": leaf}))["data"]["entries"]
        stats = await client.send({"type": "get_session_stats"})
        exported = await client.send({"type": "export_html", "outputPath": str(project / "page.html")})
        await client.prompt_and_wait("after the edits")
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    assert tree["success"] is True and stats["success"] is True and exported["success"] is True
    a1 = tree["data"]["tree"][0]["children"][0]["children"][0]["children"][0]
    assert a1["entry"]["id"] == ids["a1"] and a1["label"] == "no time" and "labelTimestamp" not in a1
    assert [e["id"] for e in entries] == ["1abe1000", "bad00001", "bad00002"]  # kept, and served as they are
    assert [text_of(m) for m in messages][-4:] == ["question c", "answer c", "after the edits", "still fine"]
    sent = fake_llm.requests[-1]["body"]["messages"]
    assert "spell" not in json.dumps(sent) and all(m.get("content") != 42 for m in sent)
    assert "after the edits" in json.dumps(sent[-1])


async def test_no_session_stays_in_memory_after_switching_to_a_file(agent_env, fake_llm, project, tmp_path,
                                                                     branched):
    """`--no-session` then `switch_session` to a file: that file is the session (a prompt appends to it), but a
    fork or clone of it stays in memory: no new session file is ever created."""
    fake_llm.set_script([{"text": "answer in the file"}])
    path = str(branched["path"])
    async with await start(agent_env, project, "--no-session") as client:
        switched = await client.send({"type": "switch_session", "sessionPath": path})
        await client.prompt_and_wait("into the file")
        in_file = (await client.send({"type": "get_state"}))["data"]
        forks = (await client.send({"type": "get_fork_messages"}))["data"]["messages"]
        forked = await client.send({"type": "fork", "entryId": forks[-1]["entryId"]})
        after_fork = (await client.send({"type": "get_state"}))["data"]
        await client.send({"type": "switch_session", "sessionPath": path})
        cloned = await client.send({"type": "clone"})
        after_clone = (await client.send({"type": "get_state"}))["data"]
    assert switched["success"] is True and in_file["sessionFile"] == path
    assert text_of(file_lines(path)[-1]["message"]) == "answer in the file"
    assert forked["success"] is True and after_fork["sessionFile"] is None
    assert cloned["success"] is True and after_clone["sessionFile"] is None and after_clone["messageCount"] > 0
    assert sorted(tmp_path.rglob("*.jsonl")) == [Path(path)]


async def test_flat_tree_lists_nodes_in_tree_order_with_parent_and_child_ids(agent_env, project, branched):
    ids = branched["ids"]
    async with await start(agent_env, project, "--session", str(branched["path"])) as client:
        nested = (await client.send({"type": "get_tree"}))["data"]
        flat = await client.get_tree()
        refused = await client.send({"type": "get_tree", "flat": "yes"})
    order = [ids[k] for k in ("u1", "a1", "u2a", "a2a", "u2b", "a2b", "u2c", "a2c")]
    nodes = flat["nodes"]
    by_id = {node["entry"]["id"]: node for node in nodes}
    assert flat["leafId"] == nested["leafId"] == ids["label"]
    assert [node["entry"]["id"] for node in nodes if node["entry"]["id"] in order] == order  # depth first
    assert nodes[0]["parentId"] is None and nodes[0]["entry"] == nested["tree"][0]["entry"]
    assert by_id[ids["a1"]]["childIds"] == [ids["u2a"], ids["u2b"], ids["u2c"]]
    assert by_id[ids["u2b"]]["parentId"] == ids["a1"] and by_id[ids["a2b"]]["childIds"] == []
    assert by_id[ids["u1"]]["label"] == "checkpoint" and "labelTimestamp" in by_id[ids["u1"]]
    assert "label" not in by_id[ids["a1"]]
    assert len(nodes) == len(file_lines(branched["path"])) - 1
    assert refused["success"] is False and "flat" in refused["error"]


def test_a_long_linear_session_tree_is_readable_by_json_loads_in_flat_form(agent_env, project, tmp_path):
    """Python's `json.loads` (the seed's example client) cannot read the nested answer of a long session."""
    import subprocess
    import sys

    store = SessionStore.create(project, tmp_path / "sessions")
    for i in range(500):
        store.append_message(user(f"q{i}") if i % 2 == 0 else assistant(f"a{i}"))
    store.close()
    commands = b'{"id":"n","type":"get_tree"}\n{"id":"f","type":"get_tree","flat":true}\n'
    done = subprocess.run([sys.executable, "-m", "agent_forge", "--mode", "rpc", "--session", str(store.path)],
                          input=commands, capture_output=True, env=agent_env, cwd=project, timeout=60)
    nested_line, flat_line = done.stdout.splitlines()
    with pytest.raises(RecursionError):
        json.loads(nested_line)
    flat = json.loads(flat_line)
    assert flat["id"] == "f" and len(flat["data"]["nodes"]) == 500
    assert [n["parentId"] for n in flat["data"]["nodes"][1:]] == [n["entry"]["id"] for n in flat["data"]["nodes"][:-1]]


async def test_reads_of_a_long_session_do_not_hold_up_abort_and_get_state(agent_env, tmp_path):
    """`get_tree` (nested and flat), `get_entries` and `get_messages` of a 6,000-entry session: each is answered
    whole and right (the nested tree one chain), and a `get_state` and an `abort` sent right after it in the same
    write are answered before it (the long read is encoded off the event loop)."""
    from e2e.test_cli_sessions import write_session

    texts = [f"message {i}" for i in range(6000)]
    path = write_session(tmp_path / "s", "10n6a6a6-0000-4000-8000-000000000001", texts, mtime=1_000_000,
                         cwd=str(tmp_path))
    reads = [{"type": "get_tree"}, {"type": "get_tree", "flat": True}, {"type": "get_entries"},
             {"type": "get_messages"}]
    async with await RpcClient.start(["--session", str(path)], cwd=str(tmp_path), env=agent_env) as client:
        await client.send({"type": "get_state"})
        answers = []
        for index, read in enumerate(reads):
            client.write_raw(json.dumps({"id": f"r{index}", **read}).encode() + b"\n"
                             + json.dumps({"id": f"s{index}", "type": "get_state"}).encode() + b"\n"
                             + json.dumps({"id": f"a{index}", "type": "abort"}).encode() + b"\n")
            got: dict[str, dict] = {}
            order = []
            while len(got) < 3:
                event = await client.next_event(timeout=30)
                if event["type"] == "response":
                    got[event["id"]] = event
                    order.append(event["id"][0])
            assert order.index("r") == 2, (read, order)
            answers.append(got[f"r{index}"]["data"])
    tree, flat, entries, messages = answers
    depth, node = 0, tree["tree"][0]
    while node["children"]:
        depth, node = depth + 1, node["children"][0]
    assert depth == 6000 and node["entry"]["message"]["content"][0]["text"] == "message 5999"
    assert len(flat["nodes"]) == len(entries["entries"]) == 6001 and flat["leafId"] == entries["leafId"]
    assert [m["content"][0]["text"] for m in messages["messages"]] == texts


@pytest.fixture
def labelled_elsewhere(project: Path, tmp_path: Path) -> dict:
    """Labels set from /tree land on the branch that was active then, here one left since:

    u1 → a1 → label(u1 "old") → u2 → a2 → u3 → a3 → label(u2 "L") → label(u1 cleared)    (left)
                                 └ (u2) → branch_summary → u4 → a4                         (active)
    """
    store = SessionStore.create(project, tmp_path / "sessions")
    store.append_model_change("fake", "fake-model")
    ids = {"u1": store.append_message(user("q1"))["id"]}
    store.append_message(assistant("r1"))
    store.append_label(target_id=ids["u1"], label="old")
    ids["u2"] = store.append_message(user("q2"))["id"]
    store.append_message(assistant("r2"))
    store.append_message(user("q3"))
    left = store.append_message(assistant("r3"))["id"]
    store.append_label(target_id=ids["u2"], label="L")
    store.append_label(target_id=ids["u1"])
    store.set_leaf(ids["u2"])
    store.append_branch_summary(left, "q3 was asked")
    ids["u4"] = store.append_message(user("q4"))["id"]
    store.append_message(assistant("r4"))
    store.close()
    return {"path": store.path, "ids": ids}


def labels_of(tree: dict) -> dict[str, str]:
    return {node["entry"]["id"]: node["label"] for node in tree["nodes"] if "label" in node}


async def test_every_copy_keeps_the_labels_of_the_entries_it_holds(agent_env, fake_llm, project, tmp_path,
                                                                   labelled_elsewhere):
    """clone, fork and --fork copy one branch; the label of an entry they hold often lies on another branch
    (the one active when it was set in /tree): the copy still shows it, and a label removed stays removed."""
    ids, original = labelled_elsewhere["ids"], str(labelled_elsewhere["path"])
    fake_llm.set_script([{"text": "x"}])
    want = {ids["u2"]: "L"}
    copies = []
    root = str(tmp_path / "sessions")
    async with await start(agent_env, project, "--session", original, "--session-dir", root) as client:
        assert labels_of((await client.send({"type": "get_tree", "flat": True}))["data"]) == want
        for command in ({"type": "clone"}, {"type": "fork", "entryId": ids["u4"]}):
            await client.send({"type": "switch_session", "sessionPath": original})
            assert (await client.send(command))["success"]
            assert labels_of((await client.send({"type": "get_tree", "flat": True}))["data"]) == want
            copies.append((await client.send({"type": "get_state"}))["data"]["sessionFile"])
    forked = subprocess.run([sys.executable, "-m", "agent_forge", "--fork", original, "-p", "x", "--session-dir", root],
                            cwd=project,
                            env=agent_env, capture_output=True, timeout=60)
    assert forked.returncode == 0, forked.stderr
    copies += [str(p) for p in (tmp_path / "sessions").rglob("*.jsonl") if str(p) not in (original, *copies)]
    assert len(copies) == 3
    for copy in copies:
        async with await start(agent_env, project, "--session", copy) as client:
            tree = (await client.send({"type": "get_tree", "flat": True}))["data"]
            messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
        assert labels_of(tree) == want, copy
        assert "q2" in [text_of(m) for m in messages if m["role"] == "user"]
        assert sum(e["type"] == "label" and e["targetId"] == ids["u2"] for e in file_lines(copy)[1:]) == 1
