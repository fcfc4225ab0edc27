"""End to end: a client learns that its session file was damaged. Damaged lines and a torn last line (a crash
mid-write) are `sessionWarnings` in the `switch_session` response and in `get_state`, in the words stderr
prints after `Warning: ` (docs/rpc.md, "Opening session files"; the real CLI, real files)."""

from __future__ import annotations

import json
from pathlib import Path

from agent_forge.modes.rpc.client import RpcClient
from e2e.test_cli_sessions import cli, write_session

TORN = b'{"type": "message", "id": "e00'  # a crash in the middle of a write


def damaged(tmp_path: Path, name: str = "s") -> Path:
    """Seven lines (header, model_change, q1, a1, q2, a2, q3), line 5 garbage, and a torn line 8 of 30 bytes."""
    path = write_session(tmp_path / name, f"aaaa0000-0000-4000-8000-00000000000{len(name)}",
                         ["q1", "a1", "q2", "a2", "q3"], mtime=1_000_000, cwd=str(tmp_path))
    lines = path.read_bytes().split(b"\n")
    lines[4] = b"not json"
    path.write_bytes(b"\n".join(lines) + TORN)  # the split's last item is empty: line 8 is the torn one
    return path


def expected(path: Path) -> list[dict]:
    return [{"kind": "damaged_lines", "path": str(path), "count": 1, "lines": [5],
             "message": f"session file {path}: skipped 1 damaged line ({path}:5); the entries after a skipped "
                        "line continue from the entry before it"},
            {"kind": "torn_line", "path": str(path), "count": 1, "lines": [8],
             "message": f"session file {path}: the last line ({path}:8, {len(TORN)} bytes) was cut off mid-write "
                        "(a crash?); it is left out and cut back before the next entry is written"}]


def stderr_lines(client: RpcClient) -> list[str]:
    return [line for line in client.stderr.decode().splitlines() if line.startswith("Warning: session file")]


async def test_a_resumed_damaged_file_is_named_in_get_state_and_on_stderr(agent_env, tmp_path):
    path = damaged(tmp_path)
    async with await RpcClient.start(["--session", str(path)], cwd=str(tmp_path), env=agent_env) as client:
        state = (await client.send({"type": "get_state"}))["data"]
        await client.send({"type": "new_session"})
        fresh = (await client.send({"type": "get_state"}))["data"]
    assert state["sessionWarnings"] == expected(path)
    assert stderr_lines(client) == [f"Warning: {w['message']}" for w in expected(path)]
    assert "sessionWarnings" not in fresh  # a session made in this process has read no file


async def test_switch_session_answers_what_the_file_lost(agent_env, tmp_path):
    path, intact = damaged(tmp_path), write_session(tmp_path / "ok", "bbbb0000-0000-4000-8000-000000000001",
                                                    ["q", "a"], mtime=1_000_000, cwd=str(tmp_path))
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        switched = await client.send({"type": "switch_session", "sessionPath": str(path)})
        state = (await client.send({"type": "get_state"}))["data"]
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
        clean = await client.send({"type": "switch_session", "sessionPath": str(intact)})
        after = (await client.send({"type": "get_state"}))["data"]
    assert switched["data"] == {"cancelled": False, "sessionWarnings": expected(path)}
    assert state["sessionWarnings"] == expected(path) and len(messages) == 4  # q2 (line 5) is lost
    assert clean["data"] == {"cancelled": False, "sessionWarnings": []} and "sessionWarnings" not in after
    assert stderr_lines(client) == [f"Warning: {w['message']}" for w in expected(path)]


def test_the_torn_line_is_cut_back_by_the_next_write_and_then_not_reported(agent_env, fake_llm, tmp_path):
    path = damaged(tmp_path)
    fake_llm.set_script([{"text": "one"}, {"text": "two"}])
    first = cli(agent_env, tmp_path, "--session", str(path), "-p", "more")
    second = cli(agent_env, tmp_path, "--session", str(path), "-p", "again")
    assert first.returncode == 0 and second.returncode == 0
    assert [f"Warning: {w['message']}" for w in expected(path)] == [
        line for line in first.stderr.decode().splitlines() if line.startswith("Warning: session file")]
    assert b"cut off mid-write" not in second.stderr and b"skipped 1 damaged line" in second.stderr
    lines = path.read_text().splitlines()
    assert lines[4] == "not json" and all(json.loads(line) for i, line in enumerate(lines) if i != 4)


MIB = 1 << 20


def with_huge_line(tmp_path: Path, size: int, *, last: bool) -> Path:
    """Header, model_change, q1, a1, then line 5: `size` bytes (a sparse run of NULs after an entry's start), with
    no newline after it when `last`, else followed by q2 (whose parent, a1, is intact). Costs no disk space."""
    path = write_session(tmp_path / "huge", "cccc0000-0000-4000-8000-000000000001", ["q1", "a1"],
                         mtime=1_000_000, cwd=str(tmp_path))
    start = b'{"type": "message", "id": "e0000009", "parentId": "e0000002", "message": {"content": "'
    with path.open("r+b") as handle:
        handle.seek(0, 2)
        handle.write(start)
        handle.truncate(handle.tell() - len(start) + size)
        if not last:
            handle.seek(0, 2)
            handle.write(b"\n" + json.dumps({"type": "message", "id": "e0000003", "parentId": "e0000002",
                                             "timestamp": "2026-01-01T00:00:01.000Z", "message": {
                                                 "role": "user", "content": "q2", "timestamp": 1}}).encode() + b"\n")
    return path


def huge_warning(path: Path) -> dict:
    return {"kind": "damaged_lines", "path": str(path), "count": 1, "lines": [5],
            "message": f"session file {path}: skipped 1 damaged line ({path}:5); {path}:5 is longer than the 64 "
                       "MiB line limit (skipped unread, left in the file); the entries after a skipped line "
                       "continue from the entry before it"}


async def test_a_line_over_64_mib_in_the_middle_is_skipped_and_named(agent_env, tmp_path):
    path = with_huge_line(tmp_path, 100 * MIB, last=False)
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        switched = await client.send({"type": "switch_session", "sessionPath": str(path)})
        state = (await client.send({"type": "get_state"}))["data"]
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    assert switched["data"] == {"cancelled": False, "sessionWarnings": [huge_warning(path)]}
    assert state["sessionWarnings"] == [huge_warning(path)]
    assert [texts(m["content"]) for m in messages] == ["q1", "a1", "q2"]
    assert stderr_lines(client) == [f"Warning: {huge_warning(path)['message']}"]


def test_a_last_line_over_64_mib_without_a_newline_is_not_a_torn_line(agent_env, fake_llm, tmp_path):
    path = with_huge_line(tmp_path, 200 * MIB, last=True)
    fake_llm.set_script([{"text": "answer"}])
    run = cli(agent_env, tmp_path, "--session", str(path), "-p", "more")
    assert run.returncode == 0, run.stderr
    assert [line for line in run.stderr.decode().splitlines() if line.startswith("Warning: session file")] == [
        f"Warning: {huge_warning(path)['message']}"]  # and no torn_line warning
    tail = read_tail(path, 4096).split(b"\n")  # the line is kept (a torn one is cut back before the next write)
    assert path.stat().st_size > 200 * MIB and tail[0].strip(b"\0") == b""
    assert [json.loads(line)["message"]["role"] for line in tail[1:-1]] == ["user", "assistant"]  # lines of their own
    sent = [(m["role"], texts(m["content"])) for m in fake_llm.requests[0]["body"]["messages"] if m["role"] != "system"]
    assert sent == [("user", "q1"), ("assistant", "a1"), ("user", "more")]


def read_tail(path: Path, size: int) -> bytes:
    with path.open("rb") as handle:
        handle.seek(-size, 2)
        return handle.read()


def texts(content: str | list[dict]) -> str:
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


def relinked(tmp_path: Path, parents: dict[str, str | None], *, label_leaf: str | None = None) -> Path:
    """The file of `damaged`'s conversation without its damage (q1, a1, q2, a2, q3 as e0000001..5), with the
    `parentId` of the entries in `parents` changed; `label_leaf`: a label of q1 appended last, with that parentId."""
    path = write_session(tmp_path / "links", "dddd0000-0000-4000-8000-000000000001", ["q1", "a1", "q2", "a2", "q3"],
                         mtime=1_000_000, cwd=str(tmp_path))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:
        line["parentId"] = parents.get(line.get("id"), line.get("parentId"))
    if label_leaf is not None:
        lines.append({"type": "label", "id": label_leaf, "parentId": label_leaf, "timestamp": "2026-01-01T00:00:03.000Z",
                      "targetId": "e0000001", "label": "start"})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def links_warning(path: Path, count: int, lines: list[int], reasons: str) -> dict:
    return {"kind": "broken_links", "path": str(path), "count": count, "lines": lines,
            "message": f"session file {path}: {count} entr{'ies' if count > 1 else 'y'} with a broken parent link "
                       f"(the file is left as it is): {reasons}"}


async def messages_and_state(env: dict, tmp_path: Path, path: Path) -> tuple[list[str], dict, RpcClient]:
    async with await RpcClient.start(["--session", str(path)], cwd=str(tmp_path), env=env) as client:
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
        state = (await client.send({"type": "get_state"}))["data"]
    return [texts(m["content"]) for m in messages], state, client


async def test_a_self_parented_label_as_the_leaf_keeps_the_conversation(agent_env, tmp_path):
    path = relinked(tmp_path, {}, label_leaf="e00000aa")
    before = path.read_bytes()
    texts_, state, client = await messages_and_state(agent_env, tmp_path, path)
    warning = links_warning(path, 1, [8], f'"e00000aa" ({path}:8) names itself as parent (it continues from the '
                                          "entry before it in the file)")
    assert texts_ == ["q1", "a1", "q2", "a2", "q3"] and state["messageCount"] == 5
    assert state["sessionWarnings"] == [warning] and stderr_lines(client) == [f"Warning: {warning['message']}"]
    assert path.read_bytes() == before  # nothing is rewritten


async def test_a_missing_parent_and_a_cycle_start_the_branch_where_the_link_breaks(agent_env, tmp_path):
    missing = relinked(tmp_path / "m", {"e0000003": "gone"})  # q2's parent is no entry: the chain starts at q2
    cycle = relinked(tmp_path / "c", {"e0000003": "e0000004", "e0000005": "e0000005"})  # q2 ⇄ a2, q3 on itself
    texts_m, state_m, _ = await messages_and_state(agent_env, tmp_path, missing)
    texts_c, state_c, _ = await messages_and_state(agent_env, tmp_path, cycle)
    assert texts_m == ["q2", "a2", "q3"] and texts_c == ["q2", "a2", "q3"]
    assert state_m["sessionWarnings"] == [links_warning(
        missing, 1, [5], f'"e0000003" ({missing}:5) names a parent no entry has (it starts a branch of its own)')]
    assert state_c["sessionWarnings"] == [links_warning(
        cycle, 3, [5, 6, 7], f'"e0000005" ({cycle}:7) names itself as parent (it continues from the entry before it '
                             f'in the file); "e0000003", "e0000004" ({cycle}:5, {cycle}:6) form a parent cycle (cut at '
                             '"e0000003", the first in the file, which starts a branch of its own)')]


def test_print_mode_resumes_a_file_with_broken_links_without_rewriting_it(agent_env, fake_llm, tmp_path):
    path = relinked(tmp_path, {"e0000003": "gone"}, label_leaf="e00000aa")
    before = path.read_bytes()
    fake_llm.set_script([{"text": "one"}, {"text": "two"}])
    first = cli(agent_env, tmp_path, "--session", str(path), "-p", "more")
    second = cli(agent_env, tmp_path, "--session", str(path), "-p", "again")
    assert first.returncode == 0 and second.returncode == 0, first.stderr
    for run in (first, second):  # the file still holds the broken links: each resume says so
        assert stderr_lines_of(run.stderr) == [f"Warning: session file {path}: 2 entries with a broken parent link "
                                               f'(the file is left as it is): "e00000aa" ({path}:8) names itself as '
                                               "parent (it continues from the entry before it in the file); "
                                               f'"e0000003" ({path}:5) names a parent no entry has (it starts a branch '
                                               "of its own)"]
    sent = [[texts(m["content"]) for m in request["body"]["messages"] if m["role"] != "system"]
            for request in fake_llm.requests]
    assert sent == [["q2", "a2", "q3", "more"], ["q2", "a2", "q3", "more", "one", "again"]]
    assert path.read_bytes().startswith(before)  # appended to, never rewritten
    appended = [json.loads(line) for line in path.read_bytes()[len(before):].splitlines()]
    assert appended[0]["parentId"] == "e00000aa" and [e["parentId"] for e in appended[1:]] == [
        e["id"] for e in appended[:-1]]


def stderr_lines_of(stderr: bytes) -> list[str]:
    return [line for line in stderr.decode().splitlines() if line.startswith("Warning: session file")]
