"""End to end: the CLI's session flags (--continue, --session <path|id>, --fork, --session-dir,
AGENT_FORGE_SESSION_DIR, --no-session, --list-sessions [--json]) on real session files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_forge.coding.session.store import session_cwd_dir
from agent_forge.modes.rpc.client import RpcClient

IDS = {
    "old": "aaaa1111-0000-4000-8000-000000000001",
    "mid": "aaaa2222-0000-4000-8000-000000000002",
    "new": "bbbb3333-0000-4000-8000-000000000003",
}


def cli(env, cwd, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_forge", *args], cwd=cwd, env=env, input=b"",
                          capture_output=True, timeout=60)


def write_session(directory: Path, session_id: str, texts: list[str], *, mtime: float, name: str | None = None,
                  cwd: str = "/somewhere") -> Path:
    """A version-3 file with a model change and alternating user/assistant messages, modified at `mtime`."""
    lines = [{"type": "session", "version": 3, "id": session_id, "timestamp": "2026-01-01T00:00:00.000Z",
              "cwd": cwd},
             {"type": "model_change", "id": "e0000000", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z",
              "provider": "fake", "modelId": "fake-model"}]
    for i, text in enumerate(texts):
        role = "user" if i % 2 == 0 else "assistant"
        message = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1_700_000_000_000 + i}
        if role == "assistant":
            message.update(provider="fake", model="fake-model", api="openai-completions", stopReason="stop")
        lines.append({"type": "message", "id": f"e000000{i + 1}", "parentId": lines[-1]["id"],
                      "timestamp": "2026-01-01T00:00:01.000Z", "message": message})
    if name:
        lines.append({"type": "session_info", "id": "e00000ff", "parentId": lines[-1]["id"],
                      "timestamp": "2026-01-01T00:00:02.000Z", "name": name})
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"2026-01-01T00-00-00-000Z_{session_id}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def sessions(tmp_path: Path, project: Path) -> dict[str, Path]:
    """Three sessions of `project` under `<tmp>/sessions` (old, mid, new by mtime) and one of another dir."""
    root = tmp_path / "sessions"
    directory = session_cwd_dir(project, root)
    files = {
        "old": write_session(directory, IDS["old"], ["old question", "old answer"], mtime=1_000_000),
        "mid": write_session(directory, IDS["mid"], ["mid question", "mid answer"], mtime=2_000_000,
                             name="the middle one"),
        "new": write_session(directory, IDS["new"], ["new question", "new answer", "follow-up"], mtime=3_000_000),
    }
    write_session(session_cwd_dir(project.parent, root), "cccc4444-0000-4000-8000-000000000004", ["elsewhere"],
                  mtime=4_000_000)
    return files


async def state_of(env, cwd, *args) -> tuple[dict, list[dict]]:
    async with await RpcClient.start(list(args), cwd=str(cwd), env=env) as client:
        state = (await client.send({"type": "get_state"}))["data"]
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    return state, messages


def texts(messages: list[dict]) -> list[str]:
    return [m["content"][0]["text"] for m in messages]


def test_list_sessions_as_text_and_json(agent_env, project, tmp_path, sessions):
    root = str(tmp_path / "sessions")
    plain = cli(agent_env, project, "--list-sessions", "--session-dir", root)
    as_json = cli(agent_env, project, "--list-sessions", "--json", "--session-dir", root)
    assert plain.returncode == 0 and as_json.returncode == 0
    lines = plain.stdout.decode().splitlines()
    assert [line.split()[0] for line in lines] == [IDS["new"], IDS["mid"], IDS["old"]]  # newest first
    assert "the middle one" in lines[1] and "old question" in lines[2] and "3 msgs" in lines[0]
    listed = json.loads(as_json.stdout)
    assert [item["id"] for item in listed] == [IDS["new"], IDS["mid"], IDS["old"]]
    assert listed[1]["name"] == "the middle one" and listed[0]["messageCount"] == 3
    assert listed[2]["firstMessage"] == "old question" and listed[2]["path"] == str(sessions["old"])
    assert len(list((tmp_path / "sessions").rglob("*.jsonl"))) == 4  # listing created no session


def test_list_sessions_text_carries_no_escape_sequence_from_a_session_file(agent_env, project, tmp_path):
    """A session file is data anyone may have written: its name or first message must not drive the terminal."""
    root = tmp_path / "sessions"
    directory = session_cwd_dir(project, root)
    write_session(directory, IDS["old"], ["\x1b[2J\x1b]0;pwned\x07first\rquestion\x9b31m"], mtime=1_000_000)
    write_session(directory, IDS["mid"], ["q"], mtime=2_000_000, name="\x1b]8;;http://x\x07link\x1b]8;;\x07 name")
    plain = cli(agent_env, project, "--list-sessions", "--session-dir", str(root))
    assert plain.returncode == 0
    assert not any(byte < 0x20 and byte != 0x0A for byte in plain.stdout) and b"\xc2\x9b" not in plain.stdout
    lines = plain.stdout.decode().splitlines()
    # shown, not obeyed: the escapes are visible text (hiding them would hide what the file holds)
    assert lines[0].endswith("  \\x1b]8;;http://x\\x07link\\x1b]8;;\\x07 name")
    assert lines[1].endswith("  \\x1b[2J\\x1b]0;pwned\\x07first question\\x9b31m")


def test_list_sessions_of_a_directory_without_any(agent_env, project, tmp_path):
    result = cli(agent_env, project, "--list-sessions", "--session-dir", str(tmp_path / "empty"))
    assert result.returncode == 0 and result.stdout.decode().strip() == "No sessions for this directory."
    assert json.loads(cli(agent_env, project, "--list-sessions", "--json").stdout) == []


async def test_continue_resumes_the_most_recent_session(agent_env, project, tmp_path, sessions):
    state, messages = await state_of(agent_env, project, "-c", "--session-dir", str(tmp_path / "sessions"))
    assert state["sessionId"] == IDS["new"] and state["sessionFile"] == str(sessions["new"])
    assert texts(messages) == ["new question", "new answer", "follow-up"]


async def test_continue_without_sessions_starts_a_new_one(agent_env, project, tmp_path):
    state, messages = await state_of(agent_env, project, "--continue", "--session-dir", str(tmp_path / "none"))
    assert messages == [] and state["sessionFile"].startswith(str(tmp_path / "none"))
    assert not Path(state["sessionFile"]).exists()  # nothing said yet: nothing written


@pytest.mark.parametrize("reference", ["aaaa1", "AAAA1111", IDS["old"], "path"])
async def test_session_by_path_or_partial_id(agent_env, project, tmp_path, sessions, reference):
    reference = str(sessions["old"]) if reference == "path" else reference
    state, messages = await state_of(agent_env, project, "--session", reference,
                                     "--session-dir", str(tmp_path / "sessions"))
    assert state["sessionId"] == IDS["old"] and texts(messages) == ["old question", "old answer"]


def test_ambiguous_or_unknown_session_id_is_a_startup_error(agent_env, project, tmp_path, sessions):
    root = str(tmp_path / "sessions")
    ambiguous = cli(agent_env, project, "--mode", "rpc", "--session", "aaaa", "--session-dir", root)
    unknown = cli(agent_env, project, "--mode", "rpc", "--session", "cccc", "--session-dir", root)
    assert ambiguous.returncode == 1
    err = ambiguous.stderr.decode()
    assert "ambiguous" in err and IDS["old"] in err and IDS["mid"] in err and IDS["new"] not in err
    assert unknown.returncode == 1 and "No session found matching 'cccc'" in unknown.stderr.decode()


async def test_fork_flag_copies_the_branch_into_a_new_session(agent_env, fake_llm, project, tmp_path, sessions):
    fake_llm.set_script([{"text": "forked reply"}])
    before = sessions["mid"].read_bytes()
    root = str(tmp_path / "sessions")
    async with await RpcClient.start(["--fork", "aaaa2", "--session-dir", root], cwd=str(project),
                                     env=agent_env) as client:
        state = (await client.send({"type": "get_state"}))["data"]
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
        await client.prompt_and_wait("continue here")
    assert state["sessionId"] != IDS["mid"] and Path(state["sessionFile"]).parent == sessions["mid"].parent
    assert texts(messages) == ["mid question", "mid answer"] and state["sessionName"] == "the middle one"
    lines = [json.loads(line) for line in Path(state["sessionFile"]).read_text().splitlines()]
    assert lines[0]["parentSession"] == str(sessions["mid"]) and lines[0]["cwd"] == str(project)
    assert [e["id"] for e in lines[1:5]] == ["e0000000", "e0000001", "e0000002", "e00000ff"]
    assert sessions["mid"].read_bytes() == before


def test_session_dir_env_and_flag(agent_env, fake_llm, project, tmp_path):
    fake_llm.set_script([{"text": "one"}, {"text": "two"}])
    env = dict(agent_env, AGENT_FORGE_SESSION_DIR=str(tmp_path / "from-env"))
    assert cli(env, project, "-p", "hello").returncode == 0
    assert cli(env, project, "-p", "hello", "--session-dir", str(tmp_path / "from-flag")).returncode == 0
    assert len(list((tmp_path / "from-env").rglob("*.jsonl"))) == 1
    assert len(list((tmp_path / "from-flag").rglob("*.jsonl"))) == 1  # the flag wins over the variable
    listed = json.loads(cli(env, project, "--list-sessions", "--json").stdout)
    assert len(listed) == 1 and listed[0]["path"].startswith(str(tmp_path / "from-env"))


async def test_no_session_writes_nothing(agent_env, fake_llm, project, tmp_path):
    fake_llm.set_script([{"text": "ephemeral"}])
    async with await RpcClient.start(["--no-session"], cwd=str(project), env=agent_env) as client:
        await client.prompt_and_wait("hi")
        state = (await client.send({"type": "get_state"}))["data"]
    assert state["sessionFile"] is None and state["messageCount"] == 2
    assert not list(tmp_path.rglob("*.jsonl"))


@pytest.mark.parametrize("flags", [["--fork", "aaaa1", "--continue"], ["--session", "aaaa1", "--no-session"],
                                   ["-c", "--session", "aaaa1"]])
def test_conflicting_session_flags(agent_env, project, tmp_path, sessions, flags):
    result = cli(agent_env, project, "--mode", "rpc", *flags, "--session-dir", str(tmp_path / "sessions"))
    assert result.returncode == 2 and "cannot be combined" in result.stderr.decode()  # a usage error


@pytest.mark.parametrize("header", [{"version": 99, "cwd": "/somewhere"}, {"version": 3}])
async def test_continue_skips_a_newer_file_it_cannot_open(agent_env, project, tmp_path, sessions, header):
    """`-c` takes the newest session `--list-sessions` shows; a newer file that cannot be opened is skipped."""
    unusable = sessions["new"].with_name("2099-01-01T00-00-00-000Z_dddd5555.jsonl")
    unusable.write_text(json.dumps({"type": "session", "id": "dddd5555", "timestamp": "x", **header}) + "\n")
    os.utime(unusable, (5_000_000, 5_000_000))
    root = str(tmp_path / "sessions")
    listed = json.loads(cli(agent_env, project, "--list-sessions", "--json", "--session-dir", root).stdout)
    state, messages = await state_of(agent_env, project, "-c", "--session-dir", root)
    assert [item["id"] for item in listed][0] == IDS["new"] == state["sessionId"]
    assert texts(messages) == ["new question", "new answer", "follow-up"]


async def test_a_symlinked_session_and_its_real_path_share_the_lock(agent_env, project, tmp_path, sessions):
    link = tmp_path / "link.jsonl"
    link.symlink_to(sessions["old"])
    async with await RpcClient.start(["--session", str(link)], cwd=str(project), env=agent_env) as client:
        state = (await client.send({"type": "get_state"}))["data"]
        second = cli(agent_env, project, "--mode", "rpc", "--session", str(sessions["old"]))
    assert state["sessionFile"] == str(sessions["old"])
    assert second.returncode == 1 and "in use by another agent-forge process" in second.stderr.decode()
    assert link.is_symlink()


async def test_session_file_from_another_directory_works_in_its_own(agent_env, fake_llm, project, tmp_path):
    """`--session FILE` resumes in the directory the session recorded (said on stderr); relative path
    arguments still mean what they meant where they were typed."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "prompts").mkdir(parents=True)
    (elsewhere / "prompts" / "hi.md").write_text("Say hi from the template.")
    path = write_session(tmp_path / "store", IDS["old"], ["old question", "old answer"], mtime=1_000_000,
                         cwd=str(project))
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": '{"command": "pwd"}'}]}, {"text": "ok"}])
    async with await RpcClient.start(["--session", os.path.relpath(path, elsewhere), "--prompt-template",
                                      "prompts/hi.md"], cwd=str(elsewhere), env=agent_env) as client:
        await client.prompt_and_wait("/hi")
        state = (await client.send({"type": "get_state"}))["data"]
    assert state["sessionId"] == IDS["old"] and state["sessionFile"] == str(path)
    first, second = fake_llm.requests
    assert first["body"]["messages"][-1]["content"][0]["text"] == "Say hi from the template."
    tool_result = [m for m in second["body"]["messages"] if m["role"] == "tool"][-1]
    assert str(project.resolve()) in json.dumps(tool_result)
    assert f"resuming in the session's directory {project}" in client.stderr.decode()


async def test_session_whose_directory_is_gone_says_the_cwd_differs(agent_env, project, tmp_path):
    path = write_session(tmp_path / "store", IDS["old"], ["q", "a"], mtime=1_000_000, cwd=str(tmp_path / "gone"))
    async with await RpcClient.start(["--session", str(path)], cwd=str(project), env=agent_env) as client:
        state = (await client.send({"type": "get_state"}))["data"]
    assert state["sessionId"] == IDS["old"]
    assert (f"the session's directory {tmp_path / 'gone'} no longer exists; working in the current directory "
            f"{project}") in client.stderr.decode()


async def test_session_whose_directory_is_now_a_file_says_what_it_is(agent_env, project, tmp_path):
    """It was called "a special file"."""
    (tmp_path / "now-a-file").write_text("x")
    path = write_session(tmp_path / "store", IDS["old"], ["q", "a"], mtime=1_000_000, cwd=str(tmp_path / "now-a-file"))
    async with await RpcClient.start(["--session", str(path)], cwd=str(project), env=agent_env) as client:
        await client.send({"type": "get_state"})
    assert (f"the session's directory {tmp_path / 'now-a-file'} is a regular file; working in the current "
            f"directory {project}") in client.stderr.decode()


def test_an_id_of_another_directory_names_its_file(agent_env, project, tmp_path, sessions):
    unknown = cli(agent_env, project, "--mode", "rpc", "--session", "cccc", "--session-dir", str(tmp_path / "sessions"))
    err = unknown.stderr.decode()
    assert unknown.returncode == 1 and "No session found matching 'cccc'" in err
    assert "other directories" in err and "cccc4444-0000-4000-8000-000000000004.jsonl" in err and "--fork" in err


async def test_session_id_creates_then_reopens_the_session_of_that_id(agent_env, fake_llm, project, tmp_path):
    fake_llm.set_script([{"text": "first answer"}, {"text": "second answer"}])
    root = str(tmp_path / "ids")
    args = ["--session-id", "my.task_1-a", "--session-dir", root]
    async with await RpcClient.start(args, cwd=str(project), env=agent_env) as client:
        await client.prompt_and_wait("first")
        created = (await client.send({"type": "get_state"}))["data"]
    async with await RpcClient.start(args, cwd=str(project), env=agent_env) as client:
        await client.prompt_and_wait("second")
        reopened = (await client.send({"type": "get_state"}))["data"]
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    assert created["sessionId"] == reopened["sessionId"] == "my.task_1-a"
    assert created["sessionFile"] == reopened["sessionFile"] and reopened["sessionFile"].startswith(root)
    assert texts(messages) == ["first", "first answer", "second", "second answer"]
    bad = cli(agent_env, project, "--mode", "rpc", "--session-id", "bad/id.")
    both = cli(agent_env, project, "--mode", "rpc", "--session-id", "x1", "--continue")
    assert bad.returncode == 2 and b"use letters, digits" in bad.stderr
    assert both.returncode == 2 and b"--session-id and --continue cannot be combined" in both.stderr


def test_start_up_errors_quote_arguments_without_control_sequences(agent_env, project):
    result = cli(agent_env, project, "-p", "--session", "\x1b]0;pwned\x07abc\x1b[2J", "hi")
    assert result.returncode == 1 and b"No session found matching '\\x1b]0;pwned\\x07abc\\x1b[2J'" in result.stderr
    assert b"\x1b" not in result.stderr and b"\x07" not in result.stderr  # quoted as visible escapes


@pytest.mark.parametrize("args", [["--list-sessions"], ["--list-sessions", "--json"], ["-c", "-p", "hi"],
                                  ["--session", "zz", "-p", "hi"]])
def test_an_unreadable_session_directory_says_why(args, agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "answered"}])
    project, sessions = tmp_path / "project", tmp_path / "sessions"
    project.mkdir()
    looping = session_cwd_dir(str(project.resolve()), sessions)
    sessions.mkdir()
    looping.symlink_to(looping.name)  # a link to itself: listing it fails with ELOOP
    done = cli(agent_env, project, "--session-dir", str(sessions), *args)
    stderr = done.stderr.decode()
    assert "Too many levels of symbolic links" in stderr and str(looping) in stderr, stderr
    if "--session" not in args:  # a listing or -c: one warning line, not a silent empty list
        assert stderr.count(f"skipped the session directory {looping}: Too many levels") == 1
