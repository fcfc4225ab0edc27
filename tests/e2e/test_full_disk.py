"""End to end: the session file on a full disk (a real 512 KB tmpfs, or a file size limit set with prlimit):
no acknowledged message is lost or skipped, the client is told, and writing resumes without a hole."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient

pytestmark = pytest.mark.real_process  # a full disk ends a real process (exit code, stderr line)

BIG = 100_000  # characters of one answer: five fill the 512 KB disk


@pytest.fixture
def agent_env(agent_env):
    """The agent retries a failed session write every 100 ms (`AGENT_FORGE_WRITE_RETRY_MS`), not every 2 s: the
    tests that free the disk wait for that retry."""
    return {**agent_env, "AGENT_FORGE_WRITE_RETRY_MS": "100"}


def big_answers(count: int) -> list[dict]:
    return [{"text": f"answer {i} " + "x" * BIG, "text_deltas": 4} for i in range(count)]


@contextlib.contextmanager
def mounted_tmpfs(directory: Path, size: str = "512k"):
    """A real tmpfs of `size` at `directory`; the test is skipped where mounting is not permitted."""
    directory.mkdir()
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(directory)],
                            capture_output=True)
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {result.stderr.decode(errors='replace').strip()}")
    try:
        yield directory
    finally:
        subprocess.run(["umount", "-l", str(directory)], capture_output=True)


def resize(directory: Path, size: str) -> None:
    subprocess.run(["mount", "-o", f"remount,size={size}", str(directory)], check=True)


def fill(directory: Path) -> Path:
    """Take every free byte of the filesystem at `directory` with one file; returns it."""
    filler = directory / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        with contextlib.suppress(OSError):
            while os.write(fd, b"\0" * 4096):
                pass
    finally:
        os.close(fd)
    return filler


def file_lines(path: Path) -> list[dict]:
    """Every line of a session file, each of which must be a whole JSON object (no torn line anywhere)."""
    data = path.read_bytes()
    assert data.endswith(b"\n")
    return [json.loads(line) for line in data.split(b"\n")[:-1]]


def assert_complete(path: Path, acknowledged: list[dict]) -> None:
    """The file holds every acknowledged message, in order, as one unbroken parent chain (no hole)."""
    lines = file_lines(path)
    assert lines[0]["type"] == "session"
    entries = lines[1:]
    for parent, child in zip(entries, entries[1:]):
        assert child["parentId"] == parent["id"]
    assert [e["message"] for e in entries if e["type"] == "message"] == acknowledged


def ended_messages(records: list[dict]) -> list[dict]:
    return [r["message"] for r in records if r.get("type") == "message_end"]


async def test_rpc_on_a_full_tmpfs_keeps_every_message_and_resumes_without_a_hole(agent_env, fake_llm, tmp_path):
    fake_llm.set_script(big_answers(8))
    with mounted_tmpfs(tmp_path / "disk") as disk:
        client = await RpcClient.start(["--session-dir", str(disk)], cwd=str(tmp_path), env=agent_env)
        try:
            for i in range(7):
                await client.prompt_and_wait(f"question {i}")
            errors = [r for r in client.records if r.get("type") == "session_write_error"]
            assert len(errors) == 1 and errors[0]["error"] == "No space left on device"
            # told at once: before the message_end of the first message that did not fit
            first_error = client.records.index(errors[0])
            assert client.records[first_error + 1]["type"] == "message_end"
            state = (await client.send({"type": "get_state"}))["data"]
            assert state["sessionWriteError"]["path"] == state["sessionFile"]
            assert state["sessionWriteError"]["pendingEntries"] >= 2
            refused = await client.send({"type": "new_session"})
            assert not refused["success"] and "cannot be written" in refused["error"]
            path = Path(state["sessionFile"])
            file_lines(path)  # no torn line while the disk is full

            resize(disk, "8m")  # space returns: the periodic retry writes what waits
            await client.wait_for("session_write_resumed")
            assert "sessionWriteError" not in (await client.send({"type": "get_state"}))["data"]
            assert_complete(path, ended_messages(client.records))
            await client.prompt_and_wait("after the disk was freed")
        finally:
            code = await client.close()
        assert code == 0
        assert_complete(path, ended_messages(client.records))
        assert b"No space left on device" in client.stderr


async def test_rpc_disk_full_before_the_first_write_creates_the_file_when_space_returns(
        agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "first"}, {"text": "second"}])
    with mounted_tmpfs(tmp_path / "disk") as disk:
        filler = fill(disk)
        client = await RpcClient.start(["--session-dir", str(disk)], cwd=str(tmp_path), env=agent_env)
        try:
            await client.prompt_and_wait("hello")
            error = next(r for r in client.records if r.get("type") == "session_write_error")
            state = (await client.send({"type": "get_state"}))["data"]
            path = Path(state["sessionFile"])
            assert not path.exists() and error["path"] == str(path)
            assert state["sessionWriteError"]["pendingEntries"] == 4  # model, thinking level, user, assistant
            filler.unlink()
            await client.prompt_and_wait("again")
            assert any(r.get("type") == "session_write_resumed" for r in client.records)
        finally:
            assert await client.close() == 0
        assert_complete(path, ended_messages(client.records))


def run_print(env, cwd, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_forge", *args], cwd=cwd, env=env, input=b"",
                          capture_output=True, timeout=120)


def test_print_mode_on_a_full_disk_exits_non_zero_and_leaves_a_clean_prefix(agent_env, fake_llm, tmp_path):
    fake_llm.set_script(big_answers(7))
    (tmp_path / "tmp").mkdir()
    env = {**agent_env, "TMPDIR": str(tmp_path / "tmp")}
    with mounted_tmpfs(tmp_path / "disk") as disk:
        result = run_print(env, tmp_path, "--session-dir", str(disk), "-p",
                           *[f"question {i}" for i in range(7)])
        assert result.returncode == 1
        assert result.stdout.startswith(b"answer 6 ")  # the answer is still printed
        assert b"No space left on device" in result.stderr
        # the full disk cannot take the rest: the whole session is saved in the temp dir, and said so once
        [saved] = (tmp_path / "tmp").glob("*.recovered-*.jsonl")
        assert result.stderr.count(f"the whole session is saved to {saved}".encode()) == 1
        assert sum(line["type"] == "message" for line in file_lines(saved)) == 14
        [path] = disk.rglob("*.jsonl")
        lines = file_lines(path)
        messages = [line["message"] for line in lines if line["type"] == "message"]
        roles = [m["role"] for m in messages]
        assert 2 <= len(messages) < 14 and roles == ["user", "assistant"] * (len(roles) // 2) + ["user"] * (
            len(roles) % 2)
        texts = [m["content"][0]["text"] for m in messages if m["role"] == "user"]
        assert texts == [f"question {i}" for i in range(len(texts))]  # a prefix: nothing skipped


@pytest.mark.parametrize("mode", ["print", "json"])
def test_disk_full_before_the_first_write_fails_print_and_json_mode(agent_env, fake_llm, tmp_path, mode):
    fake_llm.set_script([{"text": "the answer"}])
    with mounted_tmpfs(tmp_path / "disk") as disk:
        fill(disk)
        flag = ["-p"] if mode == "print" else ["--mode", "json"]
        result = run_print(agent_env, tmp_path, "--session-dir", str(disk), *flag, "hello")
        assert result.returncode == 1
        assert not list(disk.rglob("*.jsonl"))
        assert b"No space left on device" in result.stderr
        if mode == "json":
            events = [json.loads(line) for line in result.stdout.splitlines()]
            error = next(e for e in events if e["type"] == "session_write_error")
            assert error["error"] == "No space left on device" and error["pendingEntries"] >= 3


@pytest.mark.skipif(not hasattr(__import__("resource"), "prlimit"), reason="needs Linux prlimit")
async def test_a_file_size_limit_is_handled_like_a_full_disk(agent_env, fake_llm, tmp_path):
    """Runs everywhere prlimit exists (no mount needed): EFBIG from RLIMIT_FSIZE instead of ENOSPC."""
    import resource

    fake_llm.set_script(big_answers(5))
    client = await RpcClient.start([], cwd=str(tmp_path), env=agent_env)
    try:
        await client.prompt_and_wait("question 0")
        path = Path((await client.send({"type": "get_state"}))["data"]["sessionFile"])
        limit = path.stat().st_size + BIG + BIG // 2  # room for one more answer, not two
        _, hard = resource.prlimit(client.process.pid, resource.RLIMIT_FSIZE)
        resource.prlimit(client.process.pid, resource.RLIMIT_FSIZE, (limit, hard))
        for i in range(1, 4):
            await client.prompt_and_wait(f"question {i}")
        error = next(r for r in client.records if r.get("type") == "session_write_error")
        assert error["error"] == "File too large"
        assert path.stat().st_size <= limit
        file_lines(path)  # cut back: no torn line
        resource.prlimit(client.process.pid, resource.RLIMIT_FSIZE, (hard, hard))
        await client.wait_for("session_write_resumed")
        await client.prompt_and_wait("question 4")
    finally:
        assert await client.close() == 0
    assert_complete(path, ended_messages(client.records))
    assert os.path.getsize(path) > limit
    async with await RpcClient.start(["--session", str(path)], cwd=str(tmp_path), env=agent_env) as resumed:
        messages = (await resumed.send({"type": "get_messages"}))["data"]["messages"]
    assert messages == ended_messages(client.records)  # the resumed conversation has no hole


async def test_sigterm_on_a_full_disk_says_once_how_many_entries_are_not_written(agent_env, fake_llm, tmp_path):
    import signal

    fake_llm.set_script([{"text": "first"}, {"text": "second"}])
    with mounted_tmpfs(tmp_path / "disk") as disk:
        fill(disk)
        client = await RpcClient.start(["--session-dir", str(disk)], cwd=str(tmp_path), env=agent_env)
        try:
            await client.prompt_and_wait("hello")
            pending = (await client.send({"type": "get_state"}))["data"]["sessionWriteError"]["pendingEntries"]
            refused = await client.send({"type": "new_session"})
            await client.prompt_and_wait("again")
            state = (await client.send({"type": "get_state"}))["data"]
            client.process.send_signal(signal.SIGTERM)
            await client.process.wait()
        finally:
            await client.close()
    assert f"{pending} session entries of " in refused["error"]  # the same number get_state gave
    total = state["sessionWriteError"]["pendingEntries"]
    stderr = client.stderr.decode()
    assert stderr.count("could not be written to") == 1, stderr  # once, though SIGTERM also closes
    assert f"agent-forge: {total} session entries could not be written to {state['sessionFile']}" in stderr


async def test_acp_tells_the_editor_when_the_session_file_cannot_be_written_and_when_it_can(agent_env, fake_llm,
                                                                                           tmp_path):
    """Only stderr said it; RPC clients get `session_write_error` (round 24)."""
    from support.acp_client import AcpClient

    fake_llm.set_script(big_answers(8))
    with mounted_tmpfs(tmp_path / "disk") as disk:
        client = await AcpClient.start(["--session-dir", str(disk)], cwd=str(tmp_path), env=agent_env)
        await client.initialize()
        session_id = await client.new_session(str(tmp_path))

        def said() -> str:
            return "".join(u["content"]["text"] for u in client.updates(session_id, "agent_thought_chunk"))

        for i in range(7):
            assert await client.prompt(session_id, f"question {i}") == {"stopReason": "end_turn"}
        assert "cannot be written: No space left on device" in said()
        assert re.search(r"\((1 session entry waits|([02-9]|\d\d+) session entries wait) in memory, written once "
                         r"(it|they) can", said()), said()
        resize(disk, "8m")
        await client.wait_for(lambda: "The session file is written again." in said())  # retried every 100 ms
        assert await client.close() == 0


def test_the_interactive_mode_says_at_exit_where_the_unwritten_entries_went(agent_env, fake_llm, tmp_path,
                                                                           terminal):
    """The release line was written while stderr was the UI's log: the terminal never showed it, the resume hint
    named the file that lacks the entries, and the exit code was 0 (round 31)."""
    from support.tui import ask, needs_tmux

    if needs_tmux.args[0]:
        pytest.skip(needs_tmux.kwargs["reason"])
    fake_llm.set_script([{"text": "first answer"}, {"text": "second answer " + "y" * 9000}])  # > the slack page
    (tmp_path / "tmp").mkdir()
    env = {**agent_env, "TMPDIR": str(tmp_path / "tmp")}
    with mounted_tmpfs(tmp_path / "disk") as disk:
        term = terminal("--session-dir", str(disk), env=env)
        ask(term, "before full", "first answer")
        fill(disk)
        term.type("after full")
        term.press("Enter")
        history = lambda: " ".join(term.scrollback().split())  # noqa: E731 (the answer is longer than the screen)
        term.wait_for("cannot write the session file", where=history)
        term.wait_until(lambda: "esc to interrupt" not in term.screen(), "the run to end")
        assert re.search(r"\((1 session entry waits|([02-9]|\d\d+) session entries wait) in memory\)",
                         history()), history()
        term.type("/session")  # its counts hold entries the file lacks yet: it says so (round 35)
        term.press("Enter")
        term.wait_for("not on disk yet: ", where=history)
        assert re.search(r"not on disk yet: (1 session entry|([02-9]|\d\d+) session entries) \(No space left on "
                         r"device\); written once the file can be written", history()), history()
        term.press("C-d")
        assert term.exit_code() == 1
        [saved] = (tmp_path / "tmp").glob("*.recovered-*.jsonl")
        joined = term._tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "t")  # soft wraps joined, as a copy
        assert f"the whole session is saved to {saved}" in joined, joined  # no line break inside the path
        assert f"Resume this session: agent-forge --session {saved}\n" in joined
        assert "after full" in saved.read_text()


def test_a_signal_stopping_the_interactive_mode_still_says_where_the_unwritten_entries_went(agent_env, fake_llm,
                                                                                           tmp_path, terminal):
    """A stopped interactive mode prints nothing else, but this line went only to the UI's log (round 31)."""
    import signal

    from support.tui import needs_tmux

    if needs_tmux.args[0]:
        pytest.skip(needs_tmux.kwargs["reason"])
    fake_llm.set_script([{"text": "the answer " + "y" * 9000}])  # more than the slack of the file's last page
    (tmp_path / "tmp").mkdir()
    env = {**agent_env, "TMPDIR": str(tmp_path / "tmp")}
    with mounted_tmpfs(tmp_path / "disk") as disk:
        term = terminal("--session-dir", str(disk), env=env)
        fill(disk)
        term.type("after full")
        term.press("Enter")
        term.wait_for("cannot write the session file", where=lambda: " ".join(term.scrollback().split()))
        term.wait_until(lambda: "esc to interrupt" not in term.screen(), "the run to end")
        pane = int(term._tmux("display-message", "-p", "-t", "t", "#{pane_pid}"))
        [agent] = Path(f"/proc/{pane}/task/{pane}/children").read_text().split()
        os.kill(int(agent), signal.SIGTERM)
        assert term.exit_code() == 128 + signal.SIGTERM
        [saved] = (tmp_path / "tmp").glob("*.recovered-*.jsonl")
        shown = "".join(term.scrollback().split())  # a long path wraps anywhere
        assert "agent-forge:" in shown and f"thewholesessionissavedto{saved}" in shown, shown
        assert "Resumethissession" not in shown


HANGING_BIG = {"text": "second " + "y" * 20000, "text_deltas": 4, "hang_after": 3}
"""An answer that stops streaming after 15,000 characters: aborted, its message is more than a full disk takes."""


@pytest.mark.parametrize("change", ["new_session", "clone", "switch_session", "fork"])
async def test_leaving_a_session_whose_stopped_run_cannot_be_written_is_refused(agent_env, fake_llm, tmp_path,
                                                                                change):
    """Entries were on disk when the change was asked; the aborted answer then was not, and the session was
    left anyway (its entries only in a recovery copy, said where no one looked: the reviewer of round 31). The
    file a refused switch opened is released (no lock left)."""
    fake_llm.set_script([{"text": "other"}, {"text": "first"}, HANGING_BIG])
    other = tmp_path / "other"
    assert run_print(agent_env, tmp_path, "--session-dir", str(other), "-p", "elsewhere").returncode == 0
    [target] = other.rglob("*.jsonl")
    command = {"type": change, "sessionPath": str(target)} if change == "switch_session" else {"type": change}
    with mounted_tmpfs(tmp_path / "disk") as disk:
        client = await RpcClient.start(["--session-dir", str(disk)], cwd=str(tmp_path), env=agent_env)
        try:
            await client.prompt_and_wait("before full")
            path = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
            if change == "fork":
                forkable = (await client.send({"type": "get_fork_messages"}))["data"]["messages"]
                command = {"type": "fork", "entryId": forkable[0]["entryId"]}
            filler = fill(disk)
            client.send_nowait({"type": "prompt", "message": "after full"})
            await client.wait_for("message_update")
            refused = await client.send(command)
            files = [p.name for p in disk.rglob("*.jsonl")]
            state = (await client.send({"type": "get_state"}))["data"]
            locks = list(other.rglob("*.lock"))
            filler.unlink()
            await client.wait_for("session_write_resumed")
            moved = await client.send(command)
        finally:
            assert await client.close() == 0
        assert refused["success"] is False and refused["error"].startswith("The session file cannot be written")
        assert refused["error"].endswith("(The run was stopped first.)")
        assert files == [Path(path).name]  # no file made for the change
        assert state["sessionFile"] == path and state["sessionWriteError"]["pendingEntries"] >= 1
        assert moved["success"] is True and locks == []
        assert not list(tmp_path.rglob("*.recovered-*")) and "could not be written to" not in client.stderr.decode()
        assert_complete(Path(path), [m for m in ended_messages(client.records)])


def test_a_recovery_copy_takes_a_free_name_when_one_of_that_second_exists(agent_env, fake_llm, tmp_path):
    """Two rescues of one file in one second: the second found the name taken in both places and lost its
    entries (`... it is lost`; round 34). Copies of every second of the next minute are there already."""
    import time

    fake_llm.set_script([{"text": "first"}, {"text": "second " + "y" * 9000}])
    (tmp_path / "tmp").mkdir()
    env = {**agent_env, "TMPDIR": str(tmp_path / "tmp")}
    with mounted_tmpfs(tmp_path / "disk") as disk:
        assert run_print(env, tmp_path, "--session-dir", str(disk), "-p", "first").returncode == 0
        [path] = disk.rglob("*.jsonl")
        now = time.time()
        taken = {f"{path.name}.recovered-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime(now + s))}.jsonl"
                 for s in range(-1, 60)}
        for name in taken:
            (tmp_path / "tmp" / name).write_text("an older copy\n")
        fill(disk)
        result = run_print(env, tmp_path, "--session-dir", str(disk), "-c", "-p", "again")
    stderr = result.stderr.decode()
    assert result.returncode == 1 and "lost" not in stderr, stderr
    [saved] = [p for p in (tmp_path / "tmp").glob("*.recovered-*") if p.name not in taken]
    assert saved.name.endswith("-2.jsonl") and f"the whole session is saved to {saved}" in stderr
    assert "second" in saved.read_text()
