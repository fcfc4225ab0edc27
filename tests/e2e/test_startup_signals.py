"""A stop signal at any moment of start-up (`modes/early_signals.py`, `cli_loop.py`, `modes/termination.py`):
exit code 128 + N, exactly one line on stderr saying which signal stopped it, no traceback, no lock file left.

Moments are chosen deterministically, without timing: a wrapper runs `python -m agent_forge` and sends itself
the signal when a chosen module starts to be imported. The modules come from a first run of the same command
line, in the order it imported them (written as each import starts), from the signal guard's own import (before it, the interpreter's
defaults apply) to the model's request (print modes) or the first `get_state` answer (RPC)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.real_process

_CHILD = r"""
import os, signal, sys, runpy
target, signum, record = sys.argv[1], int(sys.argv[2]), sys.argv[3]
log = open(record, "a", buffering=1) if record else None
class SignalAtImport:
    def find_spec(self, name, path, target_module=None):
        if log:
            log.write(name + "\n")
        if name == target:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signum)
        return None
sys.meta_path.insert(0, SignalAtImport())
sys.argv = ["agent-forge", *sys.argv[4:]]
runpy.run_module("agent_forge", run_name="__main__", alter_sys=True)
"""
GUARD = "agent_forge.modes.early_signals"
MODES = {"rpc": ["--mode", "rpc"], "print": ["-p", "hi"], "json": ["--mode", "json", "-p", "hi"]}
GET_STATE = json.dumps({"id": "s1", "type": "get_state"}).encode() + b"\n"
POINTS = 8


def _spawn(env: dict, cwd: Path, mode: str, target: str = "", signum: int = 0, record: str = "") -> subprocess.Popen:
    rpc = mode == "rpc"
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, target, str(signum), record, *MODES[mode]],
                            stdin=subprocess.PIPE if rpc else subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=cwd)
    if rpc:  # stdin stays open: the end of input is not what stops it
        proc.stdin.write(GET_STATE)
        proc.stdin.flush()
    return proc


def _start_up_imports(tmp_path: Path, env: dict, cwd: Path, mode: str, fake_llm) -> list[str]:
    """The modules a run imports from the guard on, until it serves (then it is stopped by SIGTERM)."""
    record = tmp_path / f"imports-{mode}.txt"
    proc = _spawn(env, cwd, mode, record=str(record))
    try:
        if mode == "rpc":
            assert json.loads(proc.stdout.readline())["id"] == "s1"
        else:
            fake_llm.wait_for_requests(1, timeout=60)
        names = record.read_text().splitlines()  # what came after is the stop's own (`termination`)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    finally:
        proc.kill()
    after = names[names.index(GUARD) + 1:]
    return [name for name in after if name.startswith("agent_forge") or name == "asyncio"]


def _spread(names: list[str], count: int) -> list[str]:
    step = max(1, len(names) // (count - 1))
    return list(dict.fromkeys(names[::step][:count - 1] + names[-1:]))


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_stop_signal_at_any_start_up_moment_ends_with_its_code_and_one_line(tmp_path, agent_env, fake_llm,
                                                                             mode):
    project = tmp_path / "project"
    project.mkdir()
    fake_llm.set_script([{"text": "never sent", "hang": True, "hang_ms": 60000}] * (POINTS + 1))
    points = _spread(_start_up_imports(tmp_path, agent_env, project, mode, fake_llm), POINTS)
    assert len(points) >= POINTS - 1, points
    signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    for index, target in enumerate(points):
        signum = signals[index % len(signals)]
        proc = _spawn(agent_env, project, mode, target, signum)
        try:
            out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
        where = f"{signal.Signals(signum).name} at the import of {target}"
        lines = err.decode().splitlines()
        assert proc.returncode == 128 + signum, (where, err.decode())
        assert len(lines) == 1 and lines[0].startswith(f"agent-forge: Stopped by {signal.Signals(signum).name}"), \
            (where, err.decode())
        assert all(json.loads(line) for line in out.splitlines()) or mode == "print", (where, out)
        assert not list(Path(agent_env["HOME"]).rglob("*.lock")), where


@pytest.mark.parametrize("target", ["agent_forge.lazy_ssl", "agent_forge.plugins.threads"])
def test_a_stop_after_rpc_modes_early_answer_is_not_said_to_come_during_start_up(agent_env, tmp_path, target):
    """The first `get_state` is answered before the session is built (`modes/rpc/early.py`); a stop after the
    answer (here: as a module of the rest of start-up, before the event loop, is imported) comes to a client that
    saw the agent serve."""
    proc = _spawn(agent_env, tmp_path, "rpc", target, signal.SIGTERM)
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert json.loads(out.splitlines()[0])["id"] == "s1", out
    assert proc.returncode == 143
    assert err.decode() == "agent-forge: Stopped by SIGTERM.\n"


def test_a_stop_of_an_idle_rpc_agent_writes_no_empty_queue_update(agent_env, tmp_path):
    """Nothing was queued: the stop's dropping of the queues changes nothing, so it tells the client nothing."""
    proc = _spawn(agent_env, tmp_path, "rpc")
    try:
        proc.stdin.write(json.dumps({"id": "s2", "type": "get_state"}).encode() + b"\n")
        proc.stdin.flush()
        answered = [json.loads(proc.stdout.readline()) for _ in range(2)]  # the early answer, then the server's
        assert [record.get("id") for record in answered] == ["s1", "s2"]
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 143 and err == b"agent-forge: Stopped by SIGTERM.\n"
    assert [json.loads(line)["type"] for line in out.splitlines()] == []


@pytest.mark.parametrize("target", ["agent_forge.plugins.threads", "asyncio"])
def test_a_stop_after_acp_modes_early_initialize_answer_is_not_said_to_come_during_start_up(agent_env, tmp_path,
                                                                                           target):
    """ACP answers a first `initialize` before the event loop exists (`modes/acp/handshake.py`), as RPC its
    `get_state`: a stop after it comes to an editor that saw the agent serve."""
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, target, str(int(signal.SIGTERM)), "", "--mode", "acp"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=agent_env,
                            cwd=tmp_path)
    try:
        out, err = proc.communicate(json.dumps(initialize).encode() + b"\n", timeout=60)
    finally:
        proc.kill()
    assert json.loads(out.splitlines()[0])["id"] == 1, out
    assert proc.returncode == 143 and err == b"agent-forge: Stopped by SIGTERM.\n"
