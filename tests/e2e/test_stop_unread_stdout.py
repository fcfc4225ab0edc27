"""A client that stops reading stdout never keeps the agent alive: a stop signal or stdin's end still ends it
promptly, the session saved and its `.lock` removed; what the client did not take is dropped, said in one
stderr line (`modes/output_pump.py`). Each test fills the real stdout pipe first, so the agent's writes wait."""

from __future__ import annotations

import fcntl
import json
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from agent_forge.modes.output_pump import STALL_SECONDS

pytestmark = pytest.mark.real_process  # the claimed stdout of a real process, a real pipe

PROMPT = "y" * 300_000  # its user message alone is written several times: more than the 1 MiB pipe holds
DEADLINE_S = 20
MANY = 40_000  # message_update events of ~150-250 bytes: ~6-10 MB, so the agent's own writes wait too


def _pending(fd: int) -> int:
    """Bytes waiting in the pipe whose read end is `fd`."""
    return int.from_bytes(fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4), sys.byteorder)


def _wait_full(proc: subprocess.Popen) -> None:
    """Until the pipe the agent writes to is nearly full (a page or two may stay unused: records more than fill
    it): observed, not slept."""
    fd = proc.stdout.fileno()
    size = fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)
    deadline = time.monotonic() + DEADLINE_S
    while _pending(fd) < size - (64 << 10):
        assert proc.poll() is None, "the agent ended before its output filled the pipe"
        assert time.monotonic() < deadline, f"stdout holds {_pending(fd)} of {size} bytes"
        time.sleep(0.01)  # polling the pipe's fill: no event says it is full


def _start(agent_env: dict[str, str], tmp_path: Path, fake_llm, *args: str, deltas: int = 2000) -> subprocess.Popen:
    fake_llm.set_script([{"text_deltas": deltas}])
    stderr = open(tmp_path / "stderr.txt", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "agent_forge", *args, "--session-dir", str(tmp_path / "s")],
                            cwd=tmp_path, env=agent_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=stderr)
    stderr.close()
    return proc


def _rpc(agent_env, tmp_path, fake_llm, deltas: int = 2000) -> subprocess.Popen:
    proc = _start(agent_env, tmp_path, fake_llm, "--mode", "rpc", deltas=deltas)
    proc.stdin.write(json.dumps({"id": "1", "type": "prompt", "message": PROMPT}).encode() + b"\n")
    proc.stdin.flush()
    fake_llm.wait_for_requests(1)
    _wait_full(proc)
    return proc


def _ended(proc: subprocess.Popen) -> int:
    try:
        return proc.wait(timeout=DEADLINE_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _session(tmp_path: Path) -> Path:
    [path] = (tmp_path / "s").rglob("*.jsonl")
    return path


def _users(path: Path) -> list[str]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [line["message"]["content"][0]["text"] for line in lines
            if line["type"] == "message" and line["message"]["role"] == "user"]


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT", "SIGHUP"])
def test_a_stop_signal_ends_rpc_mode_while_the_client_reads_nothing(agent_env, tmp_path, fake_llm, signame):
    proc = _rpc(agent_env, tmp_path, fake_llm)
    proc.send_signal(getattr(signal, signame))
    assert _ended(proc) == 128 + getattr(signal, signame)
    path = _session(tmp_path)
    assert _users(path) == [PROMPT]
    assert not Path(f"{path}.lock").exists()
    stderr = (tmp_path / "stderr.txt").read_text()
    assert "bytes of output were dropped: the client read none of it" in stderr
    assert f"Stopped by {signame}." in stderr


def test_stdin_closing_ends_rpc_mode_while_the_client_reads_nothing(agent_env, tmp_path, fake_llm):
    """The run goes on to its end (docs/rpc.md, "End of input"), its output dropped once the client took none
    of it for a while: the answer is in the session, the exit code 0."""
    proc = _rpc(agent_env, tmp_path, fake_llm)
    proc.stdin.close()
    assert _ended(proc) == 0
    path = _session(tmp_path)
    roles = [json.loads(line)["message"]["role"] for line in path.read_text().splitlines()
             if json.loads(line)["type"] == "message"]
    assert roles == ["user", "assistant"]
    assert not Path(f"{path}.lock").exists()
    assert "bytes of output were dropped" in (tmp_path / "stderr.txt").read_text()


def test_the_client_that_reads_again_gets_every_record(agent_env, tmp_path, fake_llm):
    """Waiting output is kept, in order, while the agent is not stopping: nothing is lost to a slow reader."""
    proc = _rpc(agent_env, tmp_path, fake_llm)
    proc.stdin.close()  # after the run: the agent ends, once everything was read
    records = [json.loads(line) for line in proc.stdout]
    assert _ended(proc) == 0
    types = [r["type"] for r in records]
    assert types[-2:] == ["agent_end", "agent_settled"]
    deltas = [r for r in records if r["type"] == "message_update"
              and r["assistantMessageEvent"]["type"] == "text_delta"]
    assert len(deltas) == 2000
    assert "dropped" not in (tmp_path / "stderr.txt").read_text()


def test_a_client_that_paused_before_the_stop_still_has_the_whole_window_to_read_again(agent_env, tmp_path,
                                                                                       fake_llm):
    """The window counts from the stop, not from the client's last read: a client that took nothing for longer
    than the window before stdin closed, and reads again soon after, loses nothing."""
    proc = _rpc(agent_env, tmp_path, fake_llm, deltas=MANY)  # more than the pipe and the agent's bound hold
    time.sleep(STALL_SECONDS + 0.3)  # the case itself: the client takes nothing for longer than the window
    proc.stdin.write(b'{"id": "2", "type": "get_state"}\n')
    proc.stdin.close()
    time.sleep(0.5)  # and it reads again a moment after the stop: well inside the window the stop opens
    records = [json.loads(line) for line in proc.stdout]
    assert _ended(proc) == 0
    types = [r["type"] for r in records]
    assert types.count("agent_settled") == 1 and types[types.index("agent_settled") - 1] == "agent_end"
    assert [r["command"] for r in records if r["type"] == "response"] == ["prompt", "get_state"]
    assert "dropped" not in (tmp_path / "stderr.txt").read_text()


# -- JSON and ACP mode: more output than the pipe and the agent's own bound (4 MiB) hold together ---------------



def _acp(agent_env, tmp_path, fake_llm) -> subprocess.Popen:
    proc = _start(agent_env, tmp_path, fake_llm, "--mode", "acp", deltas=MANY)
    for method, params in (("initialize", {"protocolVersion": 1, "clientCapabilities": {}}),
                           ("session/new", {"cwd": str(tmp_path), "mcpServers": []})):
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": method, "method": method, "params": params}).encode()
                         + b"\n")
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
    prompt = {"sessionId": answer["result"]["sessionId"], "prompt": [{"type": "text", "text": "hi"}]}
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": "p", "method": "session/prompt", "params": prompt}).encode()
                     + b"\n")
    proc.stdin.flush()
    fake_llm.wait_for_requests(1)
    _wait_full(proc)
    return proc


def test_a_stop_signal_ends_json_mode_while_the_client_reads_nothing(agent_env, tmp_path, fake_llm):
    proc = _start(agent_env, tmp_path, fake_llm, "--mode", "json", "hi", deltas=MANY)
    proc.stdin.close()  # nothing piped: the prompt is the argument
    fake_llm.wait_for_requests(1)
    _wait_full(proc)
    proc.send_signal(signal.SIGTERM)
    assert _ended(proc) == 143
    path = _session(tmp_path)
    assert _users(path) == ["hi"]
    assert not Path(f"{path}.lock").exists()
    assert "bytes of output were dropped: the client read none of it" in (tmp_path / "stderr.txt").read_text()


@pytest.mark.parametrize("stop", ["SIGTERM", "end of stdin"])
def test_acp_mode_ends_while_the_client_reads_nothing(agent_env, tmp_path, fake_llm, stop):
    proc = _acp(agent_env, tmp_path, fake_llm)
    if stop == "SIGTERM":
        proc.send_signal(signal.SIGTERM)
    else:
        proc.stdin.close()
    assert _ended(proc) == (143 if stop == "SIGTERM" else 0)
    path = _session(tmp_path)
    assert _users(path) == ["hi"]
    assert not Path(f"{path}.lock").exists()
    assert "bytes of output were dropped: the client read none of it" in (tmp_path / "stderr.txt").read_text()
