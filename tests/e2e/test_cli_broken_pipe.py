"""End to end: every command and mode exits quietly when the reader of its output goes away (`| head`); a stdout
that cannot be written (`>/dev/full`: ENOSPC) ends it with one clear line on stderr and exit code 1, no
traceback, and what the session did is still saved."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient


def run_with_gone_reader(args, env, cwd, *, stdin: bytes = b"", stderr_too: bool = False):
    """Run the CLI with stdout (and, with `stderr_too`, stderr: `2>&1 | head`) on a pipe whose read end is
    closed before the process starts, so its first write already fails with EPIPE."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, "-m", "agent_forge", *args], env=env, cwd=cwd, input=stdin,
                              stdout=write_end, stderr=write_end if stderr_too else subprocess.PIPE, timeout=60)
    finally:
        os.close(write_end)


async def make_sessions(env, cwd, count):
    for _ in range(count):
        async with await RpcClient.start(["-n", "x" * 200], cwd=str(cwd), env=env) as client:
            await client.send({"type": "get_state"})


@pytest.mark.parametrize("args", [["--list-sessions"], ["--list-sessions", "--json"], ["--help"], ["--version"],
                                  ["-v"], ["--list-models"]])
async def test_commands_exit_quietly(args, agent_env, tmp_path):
    await make_sessions(agent_env, tmp_path, 3)
    done = run_with_gone_reader(args, agent_env, tmp_path)
    assert done.returncode == 0 and done.stderr == b""


@pytest.mark.parametrize("args", [["-p", "hi"], ["--mode", "json", "hi"], ["--mode", "rpc"]])
@pytest.mark.parametrize("stderr_too", [False, True])
def test_modes_exit_quietly_and_still_save_the_session(args, stderr_too, agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "the answer"}])
    stdin = b'{"type":"prompt","message":"hi"}\n' if "rpc" in args else b""
    done = run_with_gone_reader(args, agent_env, tmp_path, stdin=stdin, stderr_too=stderr_too)
    assert done.returncode == 0
    assert stderr_too or done.stderr == b"", done.stderr
    [path] = (tmp_path / "home" / ".agent-forge" / "agent" / "sessions").rglob("*.jsonl")
    assert "the answer" in path.read_text()


CLOSED = b"agent-forge: cannot write to stdout: it was closed when agent-forge started\n"


def run_with_closed_stdout(args, env, cwd, stdin=b""):
    return subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-m", "agent_forge", *args],
                          env=env, cwd=cwd, input=stdin, stderr=subprocess.PIPE, timeout=60)


@pytest.mark.parametrize("args", [["-p", "hi"], ["--mode", "json", "hi"], ["--mode", "rpc"], ["--mode", "acp"]])
def test_a_mode_with_a_closed_stdout_refuses_at_once(args, agent_env, fake_llm, tmp_path):
    """`agent-forge ... >&-`: no answer, event or response could reach anyone, so nothing is run: one line,
    exit code 1 (it used to run the prompt and exit 0 with the answer written nowhere)."""
    fake_llm.set_script([{"text": "the answer"}])
    stdin = b'{"type":"prompt","message":"hi"}\n' if "rpc" in args else b""
    done = run_with_closed_stdout(args, agent_env, tmp_path, stdin)
    assert (done.returncode, done.stderr) == (1, CLOSED)
    assert fake_llm.requests == []
    assert not list((tmp_path / "home" / ".agent-forge" / "agent" / "sessions").rglob("*.jsonl"))


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["--list-sessions"], ["--list-models"],
                                  ["mcp", "list"], ["--trust-project"]])
def test_a_command_whose_output_is_lost_says_so(args, agent_env, tmp_path):
    done = run_with_closed_stdout(args, agent_env, tmp_path)
    assert (done.returncode, done.stderr) == (1, CLOSED)


def test_a_closed_stdout_is_never_reused_for_a_file(agent_env, fake_llm, tmp_path):
    """Descriptor 1 keeps the null device: the page written by `--export` does not land on it, and the path
    that could not be printed is the failure."""
    fake_llm.set_script([{"text": "the answer"}])
    assert subprocess.run([sys.executable, "-m", "agent_forge", "-p", "hi"], env=agent_env, cwd=tmp_path,
                          capture_output=True, timeout=60).returncode == 0
    [session] = (tmp_path / "home" / ".agent-forge" / "agent" / "sessions").rglob("*.jsonl")
    done = run_with_closed_stdout(["--export", str(session), "page.html"], agent_env, tmp_path)
    assert (done.returncode, done.stderr) == (1, CLOSED)
    assert "the answer" in (tmp_path / "page.html").read_text()


# -- a full stdout ------------------------------------------------------------------------------------------

full_stdout = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")

LINE = b"agent-forge: cannot write to stdout: No space left on device\n"


def run_into_full_stdout(args, env, cwd, *, stdin: bytes = b"") -> subprocess.CompletedProcess:
    with open("/dev/full", "wb") as full:
        return subprocess.run([sys.executable, "-m", "agent_forge", *args], env=env, cwd=cwd, input=stdin,
                              stdout=full, stderr=subprocess.PIPE, timeout=60)


def saved_lines(env) -> list[dict]:
    [path] = (Path(env["AGENT_FORGE_DIR"]) / "sessions").rglob("*.jsonl")
    assert not Path(f"{path}.lock").exists()
    return [json.loads(line) for line in path.read_text().splitlines()]


@full_stdout
@pytest.mark.parametrize("args", [["-p", "hi"], ["--mode", "json", "hi"], ["--mode", "rpc"]])
def test_modes_stop_with_one_line_and_keep_the_session(args, agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "the answer"}])
    stdin = b'{"id":"1","type":"get_state"}\n{"type":"prompt","message":"hi"}\n' if "rpc" in args else b""
    done = run_into_full_stdout(args, agent_env, tmp_path, stdin=stdin)
    assert (done.returncode, done.stderr) == (1, LINE)
    if "rpc" in args:  # the first response could not be written: the prompt after it is never run
        assert fake_llm.requests == []
        return
    users = [line["message"] for line in saved_lines(agent_env) if line.get("message", {}).get("role") == "user"]
    assert users[0]["content"][0]["text"] == "hi"


@full_stdout
def test_print_mode_saves_the_answer_it_could_not_print(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "the answer"}])
    done = run_into_full_stdout(["-p", "hi"], agent_env, tmp_path)
    assert (done.returncode, done.stderr) == (1, LINE)
    assert "the answer" in json.dumps(saved_lines(agent_env))


@full_stdout
@pytest.mark.parametrize("args", [["--list-sessions"], ["--list-sessions", "--json"], ["--help"], ["--version"],
                                  ["--list-models"]])
async def test_commands_fail_with_one_line(args, agent_env, tmp_path):
    await make_sessions(agent_env, tmp_path, 2)
    done = run_into_full_stdout(args, agent_env, tmp_path)
    assert (done.returncode, done.stderr) == (1, LINE)


@pytest.mark.parametrize("args", [["-p", "hi"], ["--mode", "json", "hi"], ["--mode", "rpc"], ["--list-sessions"]])
def test_a_read_only_stdout_is_an_output_failure_too(args, agent_env, fake_llm, tmp_path):
    """`agent-forge ... 1</dev/null`: every write fails with EBADF, the same kind as a full disk."""
    fake_llm.set_script([{"text": "the answer"}])
    stdin = b'{"type":"prompt","message":"hi"}\n' if "rpc" in args else b""
    with open(os.devnull, "rb") as read_only:
        done = subprocess.run([sys.executable, "-m", "agent_forge", *args], env=agent_env, cwd=tmp_path,
                              input=stdin, stdout=read_only, stderr=subprocess.PIPE, timeout=60)
    assert (done.returncode, done.stderr) == (1, b"agent-forge: cannot write to stdout: Bad file descriptor\n")


@full_stdout
@pytest.mark.parametrize("stdout", ["pipe", "full"])
def test_a_full_stderr_drops_diagnostics_without_changing_the_outcome(stdout, agent_env, fake_llm, tmp_path):
    """`agent-forge ... >log 2>&1` on a full disk: what stderr cannot take is dropped; the exit code stays the
    mode's (1 for the failed run here, not Python's 120 for an unflushable stderr) and the session is saved."""
    fake_llm.set_script([{"status": 400, "body": {"error": {"message": "bad request"}}}])
    with open("/dev/full", "wb") as full:
        done = subprocess.run([sys.executable, "-m", "agent_forge", "-p", "hi"], env=agent_env, cwd=tmp_path,
                              stdout=full if stdout == "full" else subprocess.PIPE, stderr=full,
                              stdin=subprocess.DEVNULL, timeout=60)
    assert done.returncode == 1
    assert saved_lines(agent_env)[-1]["message"]["stopReason"] == "error"
