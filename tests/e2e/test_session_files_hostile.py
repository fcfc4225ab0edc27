"""End to end: session files that are not what they seem (a FIFO, a symlink loop, damaged lines, a newer
version, an id too long for a file name, a file deleted under a running agent) never hang the agent, never lose
history silently, and are reported in one clear message."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from agent_forge.coding.session.store import session_cwd_dir
from agent_forge.modes.rpc.client import RpcClient
from e2e.test_cli_sessions import cli, write_session
from e2e.test_full_disk import fill, mounted_tmpfs
from e2e.test_rpc_compaction import VERBATIM, exchanges

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "x.jsonl"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("flags", [["--session", "{fifo}", "-p", "x"], ["--fork", "{fifo}", "-p", "x"],
                                   ["--export", "{fifo}", "{out}"]])
def test_a_fifo_given_as_a_session_file_is_refused_not_waited_on(agent_env, tmp_path, fifo, flags):
    args = [flag.format(fifo=fifo, out=tmp_path / "out.html") for flag in flags]
    result = cli(agent_env, tmp_path, *args)  # cli() times out (and fails) instead of hanging
    assert result.returncode == 1
    assert b"not a regular file but a FIFO" in result.stderr
    assert not (tmp_path / "out.html").exists()


def test_a_fifo_in_another_directorys_session_dir_does_not_hang_an_id_lookup(agent_env, tmp_path):
    root = tmp_path / "sessions"
    other = session_cwd_dir(tmp_path / "elsewhere", root)
    other.mkdir(parents=True)
    os.mkfifo(other / "2026-01-01T00-00-00-000Z_abcd.jsonl")
    write_session(other, "abcd1234-0000-4000-8000-000000000001", ["q", "a"], mtime=1_000_000)
    result = cli(agent_env, tmp_path, "--session-dir", str(root), "--session", "abcd", "-p", "x")
    assert result.returncode == 1
    assert b"abcd1234-0000-4000-8000-000000000001.jsonl" in result.stderr  # the listing of the other directory


async def test_switch_session_to_a_fifo_is_refused_and_the_agent_keeps_answering(agent_env, tmp_path, fifo):
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        reply = await client.send({"type": "switch_session", "sessionPath": str(fifo)}, timeout=20)
        state = await client.send({"type": "get_state"}, timeout=20)
    assert reply["success"] is False and "not a regular file but a FIFO" in reply["error"]
    assert state["success"] is True


def test_a_symlink_loop_is_named_the_same_on_the_command_line_and_over_rpc(agent_env, tmp_path):
    loop = tmp_path / "loop1.jsonl"
    os.symlink(tmp_path / "loop2.jsonl", loop)
    os.symlink(loop, tmp_path / "loop2.jsonl")
    expected = f"cannot read session file {loop}: Too many levels of symbolic links"
    result = cli(agent_env, tmp_path, "--session", str(loop), "-p", "x")
    assert result.returncode == 1 and expected in result.stderr.decode()

    async def over_rpc() -> dict:
        async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
            return await client.send({"type": "switch_session", "sessionPath": str(loop)})

    import asyncio

    reply = asyncio.run(over_rpc())
    assert reply["success"] is False and reply["error"] == expected


def _seven_line_session(tmp_path: Path) -> Path:
    """header, model_change, q1, a1, q2, a2, q3: line 5 is q2."""
    return write_session(tmp_path / "s", "dddd0000-0000-4000-8000-000000000001", ["q1", "a1", "q2", "a2", "q3"],
                         mtime=1_000_000)


async def _texts(env, cwd, *args) -> tuple[list[str], str]:
    client = await RpcClient.start(list(args), cwd=str(cwd), env=env)
    async with client:
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    return [m["content"][0]["text"] for m in messages], client.stderr.decode("utf-8", "replace")


def _replace_line(path: Path, number: int, new: bytes) -> None:
    lines = path.read_bytes().split(b"\n")
    lines[number - 1] = new
    path.write_bytes(b"\n".join(lines))


async def test_invalid_utf8_in_a_middle_line_costs_a_character_not_the_history(agent_env, tmp_path):
    path = _seven_line_session(tmp_path)
    _replace_line(path, 5, path.read_bytes().split(b"\n")[4].replace(b'"q2"', b'"\xff\xfe"'))
    texts, _ = await _texts(agent_env, tmp_path, "--session", str(path))
    assert texts == ["q1", "a1", "\ufffd\ufffd", "a2", "q3"]


async def test_an_unparseable_middle_line_is_skipped_and_named_and_the_chain_is_kept(agent_env, tmp_path):
    path = _seven_line_session(tmp_path)
    _replace_line(path, 5, b'{"type": "message", "id": "e00')
    texts, stderr = await _texts(agent_env, tmp_path, "--session", str(path))
    assert texts == ["q1", "a1", "a2", "q3"]  # a2's parent (q2) was lost: a2 continues from a1
    assert f"skipped 1 damaged line ({path}:5)" in stderr


async def test_a_second_agent_with_the_same_session_id_is_refused_before_the_first_has_written(agent_env,
                                                                                               tmp_path):
    root = tmp_path / "sessions"
    async with await RpcClient.start(["--session-dir", str(root), "--session-id", "myid-1"], cwd=str(tmp_path),
                                     env=agent_env) as first:
        assert (await first.send({"type": "get_state"}))["success"]  # started, nothing written yet
        second = cli(agent_env, tmp_path, "--session-dir", str(root), "--session-id", "myid-1", "-p", "x")
    assert second.returncode == 1
    assert b"Session id myid-1 is in use by another agent-forge process" in second.stderr
    assert list(session_cwd_dir(tmp_path, root).glob("*.jsonl")) == []  # no second file with that id


def test_an_over_long_session_id_is_refused_at_start_up_with_the_limit(agent_env, tmp_path):
    result = cli(agent_env, tmp_path, "--session-id", "a" * 300, "-p", "x")
    assert result.returncode == 2
    assert b"--session-id is 300 characters long; at most 128" in result.stderr


def test_fork_of_another_directorys_partial_id_lists_where_it_is(agent_env, tmp_path):
    root = tmp_path / "sessions"
    other = write_session(session_cwd_dir(tmp_path / "elsewhere", root), "4d107c02-0000-4000-8000-000000000001",
                          ["q", "a"], mtime=1_000_000)
    result = cli(agent_env, tmp_path, "--session-dir", str(root), "--fork", "4d107c02", "-p", "x")
    assert result.returncode == 1
    assert b"It matches sessions of other directories" in result.stderr and str(other).encode() in result.stderr


async def _verbatim_compact(env, fake_llm, cwd, session_dir: Path, before_compact=None) -> dict:
    fake_llm.set_script([{"text": "one"}, {"text": "two"}, {"text": "three"}, {"match": VERBATIM, "text": "1,2"}])
    async with await RpcClient.start(["--session-dir", str(session_dir)], cwd=str(cwd), env=env) as client:
        await exchanges(client, "first", "second", "third")
        if before_compact is not None:
            before_compact()
        return await client.send({"type": "compact"})


async def test_the_verbatim_compaction_backup_is_private(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"compaction": {"strategy": "verbatim-lines"}})
    reply = await _verbatim_compact(env, fake_llm, tmp_path, tmp_path / "sessions")
    assert reply["success"] is True
    assert os.stat(reply["data"]["backupPath"]).st_mode & 0o777 == 0o600


async def test_a_compaction_that_fails_on_a_full_disk_leaves_no_empty_backup(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"compaction": {"strategy": "verbatim-lines"}})
    with mounted_tmpfs(tmp_path / "disk") as disk:
        reply = await _verbatim_compact(env, fake_llm, tmp_path, disk, before_compact=lambda: fill(disk))
        backups = list(disk.glob("*/*.compact.bak"))
    assert reply["success"] is False and "Could not write the session backup" in reply["error"]
    assert backups == []


def _newer_version_session(project: Path, root: Path) -> Path:
    path = write_session(session_cwd_dir(project, root), "eeee0000-0000-4000-8000-000000000099", ["from the future"],
                         mtime=9_000_000)
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header["version"] = 99
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    os.utime(path, (9_000_000, 9_000_000))
    return path


@pytest.mark.parametrize("flags", [["--list-sessions"], ["--list-sessions", "--json"], ["-c", "--mode", "rpc"]])
def test_a_session_of_a_newer_version_is_not_skipped_silently(agent_env, tmp_path, flags):
    root = tmp_path / "sessions"
    write_session(session_cwd_dir(tmp_path, root), "eeee0000-0000-4000-8000-000000000001", ["older"],
                  mtime=1_000_000)
    newer = _newer_version_session(tmp_path, root)
    result = cli(agent_env, tmp_path, "--session-dir", str(root), *flags)
    assert f"skipped session file {newer}: version 99 is newer than supported".encode() in result.stderr
    assert b"made by a newer agent-forge" in result.stderr


@pytest.mark.parametrize("flags", [["-p", "x", "--session"], ["--export"]])
@pytest.mark.parametrize("reference", ["eeee0000", "eeee0000-0000-4000-8000-000000000099"])
def test_a_partial_or_full_id_of_a_newer_version_session_names_the_file_and_why(agent_env, tmp_path, flags,
                                                                                reference):
    root = tmp_path / "sessions"
    newer = _newer_version_session(tmp_path, root)
    result = cli(agent_env, tmp_path, "--session-dir", str(root), *flags, reference)
    assert result.returncode == 1
    assert b"version 99 is newer than supported" in result.stderr and str(newer).encode() in result.stderr
    assert b"No session found" not in result.stderr


def test_a_partial_id_matching_several_unusable_files_lists_each_with_its_reason(agent_env, tmp_path):
    root = tmp_path / "sessions"
    newer = _newer_version_session(tmp_path, root)
    broken = session_cwd_dir(tmp_path, root) / "2026-01-01T00-00-00-000Z_eeee0000-0000-4000-8000-000000000042.jsonl"
    broken.write_text("not json\n")
    result = cli(agent_env, tmp_path, "--session-dir", str(root), "-p", "x", "--session", "eeee0000")
    assert result.returncode == 1
    shown = result.stderr.decode()
    assert "matches 2 session files that cannot be opened" in shown
    assert f"session file {newer}: version 99 is newer" in shown and f"session file {broken}:" in shown


@pytest.mark.parametrize("how", ["deleted", "replaced by another file"])
async def test_a_session_file_deleted_or_replaced_under_a_running_agent_is_written_again(agent_env, fake_llm,
                                                                                        tmp_path, how):
    fake_llm.set_script([{"text": "one"}, {"text": "two"}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        await client.prompt_and_wait("first")
        path = Path((await client.send({"type": "get_state"}))["data"]["sessionFile"])
        path.unlink()
        if how != "deleted":
            path.write_text("someone else's file\n")
        await client.prompt_and_wait("second")
        entries = (await client.send({"type": "get_entries"}))["data"]["entries"]
        state = (await client.send({"type": "get_state"}))["data"]
    errors = [r for r in client.records if r.get("type") == "session_write_error"]
    assert len(errors) == 1 and errors[0]["error"].startswith(f"the session file was {how} while in use")
    assert any(r.get("type") == "session_write_resumed" for r in client.records)
    assert "sessionWriteError" not in state
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["type"] == "session" and lines[1:] == entries  # every entry, none lost
    assert [e["message"]["role"] for e in entries if e["type"] == "message"] == ["user", "assistant"] * 2
    if how != "deleted":
        assert path.with_name(path.name + ".replaced.bak").read_text() == "someone else's file\n"


async def test_a_hard_link_of_a_session_file_in_use_is_refused(agent_env, tmp_path):
    path = write_session(tmp_path / "s", "ffff0000-0000-4000-8000-000000000001", ["q", "a"], mtime=1_000_000)
    link = tmp_path / "other-name.jsonl"
    os.link(path, link)
    async with await RpcClient.start(["--session", str(path)], cwd=str(tmp_path), env=agent_env) as first:
        assert (await first.send({"type": "get_state"}))["success"]
        second = cli(agent_env, tmp_path, "--session", str(link), "-p", "x")
    assert second.returncode == 1
    assert b"Session file is in use by another agent-forge process" in second.stderr


async def _second_prompt_after(env, fake_llm, cwd, change, *, prompts: int = 1) -> tuple[RpcClient, Path, list]:
    """Prompt once, apply `change(session file path)`, prompt `prompts` more times, close; returns the client
    (records, stderr), the path and the entries the agent held."""
    fake_llm.set_script([{"text": f"answer {i}"} for i in range(prompts + 1)])
    async with await RpcClient.start([], cwd=str(cwd), env=env) as client:
        await client.prompt_and_wait("first")
        path = Path((await client.send({"type": "get_state"}))["data"]["sessionFile"])
        change(path)
        for i in range(prompts):
            await client.prompt_and_wait(f"again {i}")
        entries = (await client.send({"type": "get_entries"}))["data"]["entries"]
    return client, path, entries


def _errors(client: RpcClient) -> list[dict]:
    return [r for r in client.records if r.get("type") == "session_write_error"]


def _loop_in_place(path: Path) -> None:
    path.unlink()
    os.symlink(path, path)  # the path now resolves to nothing: ELOOP, not ENOENT


async def test_a_session_file_turned_into_a_symlink_loop_is_written_again_not_lost(agent_env, fake_llm, tmp_path):
    client, path, entries = await _second_prompt_after(agent_env, fake_llm, tmp_path, _loop_in_place)
    errors = _errors(client)
    assert len(errors) == 1
    assert errors[0]["error"].startswith("the session file was made unreachable (Too many levels of symbolic links)")
    assert not path.is_symlink()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["type"] == "session" and lines[1:] == entries


def _directory_becomes_file(path: Path) -> None:
    import shutil

    shutil.rmtree(path.parent)
    path.parent.write_text("")


async def test_a_session_directory_replaced_by_a_file_is_reported_and_the_session_saved_elsewhere(
        agent_env, fake_llm, tmp_path):
    env = {**agent_env, "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir()
    client, path, entries = await _second_prompt_after(env, fake_llm, tmp_path, _directory_becomes_file, prompts=2)
    errors = _errors(client)
    assert len(errors) == 1  # one event per change of error, not one per try
    assert errors[0]["error"] == (f"the session file was made unreachable (Not a directory) while in use and "
                                  f"cannot be written again: session directory {path.parent} is not a "
                                  "directory: it is a regular file")
    # every entry so far (none is on disk): the event came with the user message of the second prompt, then its
    # answer and the third exchange followed
    assert errors[0]["pendingEntries"] == len(entries) - 3
    stderr = client.stderr.decode()
    assert stderr.count("could not be written to") == 1
    assert f"{len(entries)} session entries could not be written to {path}" in stderr
    saved = list((tmp_path / "tmp").glob(f"{path.name}.recovered-*.jsonl"))
    assert len(saved) == 1 and f"the whole session is saved to {saved[0]}" in stderr
    lines = [json.loads(line) for line in saved[0].read_text().splitlines()]
    assert lines[0]["type"] == "session" and lines[1:] == entries


def _directory_in_place(path: Path) -> None:
    path.unlink()
    path.mkdir()


async def test_a_session_file_replaced_by_a_directory_is_one_error_and_saved_beside_it(agent_env, fake_llm,
                                                                                      tmp_path):
    client, path, entries = await _second_prompt_after(agent_env, fake_llm, tmp_path, _directory_in_place,
                                                       prompts=2)
    errors = _errors(client)
    assert len(errors) == 1
    assert errors[0]["error"].startswith("the session file was replaced by a directory while in use and cannot "
                                         "be written again: ")
    saved = list(path.parent.glob(f"{path.name}.recovered-*.jsonl"))
    assert len(saved) == 1
    assert f"{len(entries)} session entries could not be written" in client.stderr.decode()
    assert [json.loads(line) for line in saved[0].read_text().splitlines()][1:] == entries


def test_a_torn_last_line_is_cut_off_before_the_first_append(agent_env, fake_llm, tmp_path):
    path = write_session(tmp_path / "s", "aaaa0000-0000-4000-8000-000000000003", ["q", "a"], mtime=1_000_000)
    with path.open("ab") as handle:
        handle.write(b'{"type": "message", "id": "e00')  # a crash in the middle of a write
    fake_llm.set_script([{"text": "one"}, {"text": "two"}])
    first = cli(agent_env, tmp_path, "--session", str(path), "-p", "more")
    second = cli(agent_env, tmp_path, "--session", str(path), "-p", "again")
    assert first.returncode == 0 and second.returncode == 0
    assert b"damaged line" not in second.stderr
    assert all(isinstance(json.loads(line), dict) for line in path.read_text().splitlines())


def test_session_id_whose_file_cannot_be_read_is_refused_not_duplicated(agent_env, tmp_path):
    root = tmp_path / "sessions"
    directory = session_cwd_dir(tmp_path, root)
    directory.mkdir(parents=True)
    loop = directory / "2026-01-01T00-00-00-000Z_myid-5.jsonl"
    os.symlink(loop, loop)
    result = cli(agent_env, tmp_path, "--session-dir", str(root), "--session-id", "myid-5", "-p", "x")
    assert result.returncode == 1
    assert f"cannot read session file {loop}: Too many levels of symbolic links".encode() in result.stderr
    assert [p.name for p in directory.glob("*myid-5.jsonl")] == [loop.name]  # no second file with that id


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _loop(path: Path) -> None:
    os.symlink(path, path)


@pytest.mark.parametrize("make, reason", [(_fifo, "it is a FIFO (named pipe)"),
                                          (_loop, "Too many levels of symbolic links")])
def test_a_session_directory_that_is_no_directory_is_named_with_the_reason(agent_env, fake_llm, tmp_path, make,
                                                                           reason):
    root = tmp_path / "sessions"
    directory = session_cwd_dir(tmp_path, root)
    root.mkdir()
    make(directory)
    fake_llm.set_script([{"text": "one"}])
    result = cli(agent_env, tmp_path, "--session-dir", str(root), "-p", "x")
    assert result.returncode == 1
    stderr = result.stderr.decode()
    assert f"session directory {directory} is not a directory: {reason}" in stderr
    assert "File exists" not in stderr
    assert stderr.count("could not be written to") == 1 and "the whole session is saved to" in stderr


@pytest.mark.parametrize("flags", [["--list-sessions"], ["-c", "--mode", "rpc"]])
def test_every_unusable_session_file_is_named_in_one_format(agent_env, tmp_path, flags):
    root = tmp_path / "sessions"
    directory = session_cwd_dir(tmp_path, root)
    write_session(directory, "eeee0000-0000-4000-8000-000000000002", ["older"], mtime=1_000_000)
    os.mkfifo(directory / "a-fifo.jsonl")
    (directory / "a-dir.jsonl").mkdir()
    os.symlink(directory / "a-loop.jsonl", directory / "a-loop.jsonl")
    (directory / "empty.jsonl").write_bytes(b"")
    result = cli(agent_env, tmp_path, "--session-dir", str(root), *flags)
    stderr = result.stderr.decode()
    for name, why in [("a-fifo.jsonl", "cannot be read: not a regular file but a FIFO (named pipe)"),
                      ("a-dir.jsonl", "cannot be read: not a regular file but a directory"),
                      ("a-loop.jsonl", "cannot be read: Too many levels of symbolic links"),
                      ("empty.jsonl", "it is empty")]:
        assert f"skipped session file {directory / name}: {why}" in stderr, stderr


async def test_a_session_file_starting_with_a_byte_order_mark_resumes(agent_env, tmp_path, fake_llm):
    """Notepad saves UTF-8 with a BOM: the file opens (RPC `--session`, `switch_session`, the listing), its
    history intact, and new entries are appended after it."""
    path = write_session(session_cwd_dir(tmp_path, tmp_path / "sessions"), "b0b0b0b0-0000-4000-8000-000000000001", ["q", "a"], mtime=1_000_000,
                         cwd=str(tmp_path))
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    fake_llm.set_script([{"text": "again"}, {"text": "by id"}])
    async with await RpcClient.start(["--session", str(path)], cwd=str(tmp_path), env=agent_env) as client:
        before = await client.send({"type": "get_messages"})
        await client.prompt_and_wait("more", timeout=20)
        switched = await client.send({"type": "switch_session", "sessionPath": str(path)}, timeout=20)
        after = await client.send({"type": "get_messages"})
    listed = cli(agent_env, tmp_path, "--session-dir", str(tmp_path / "sessions"), "--session", "b0b0", "-p", "x")
    assert [m["content"][0]["text"] for m in before["data"]["messages"]] == ["q", "a"]
    assert switched["success"] is True, switched
    assert [m["role"] for m in after["data"]["messages"]] == ["user", "assistant", "user", "assistant"]
    assert listed.returncode == 0, listed.stderr  # found by id in the listing
    assert path.read_bytes().startswith(b"\xef\xbb\xbf{")
